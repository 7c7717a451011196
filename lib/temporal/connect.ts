import { ConfigError } from '../errors';

interface Connectable<T> {
  connect(options: { address: string; connectTimeout?: string | number }): Promise<T>;
}

/** Connects to Temporal or stops start-up with one line that says where it looked and how to fix it. */
export async function connectTemporal<T>(kind: Connectable<T>, address: string): Promise<T> {
  try {
    return await kind.connect({ address, connectTimeout: '5s' });
  } catch (e) {
    throw new ConfigError(
      'TEMPORAL_ADDRESS',
      `no Temporal server answers at ${address} (${(e as Error).message.split('\n')[0]})`,
      'Start one (`npm start` does) or set TEMPORAL_ADDRESS to host:port of a running server',
    );
  }
}
