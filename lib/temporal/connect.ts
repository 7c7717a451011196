import type { TLSConfig } from '@temporalio/client';
import { ConfigError } from '../errors';
import { temporalConnectOptions, type TemporalConnectionConfig } from './connection-config';

interface Connectable<T> {
  connect(options: { address: string; connectTimeout?: string | number; tls?: TLSConfig; apiKey?: string }): Promise<T>;
}

/**
 * Connects to Temporal (a Client's `Connection` or a worker's `NativeConnection`, with the TLS and API-key settings of
 * lib/temporal/connection-config.ts) or stops start-up with one line that says where it looked and how to fix it.
 */
export async function connectTemporal<T>(
  kind: Connectable<T>,
  temporal: { address: string } & TemporalConnectionConfig,
): Promise<T> {
  const options = { address: temporal.address, connectTimeout: '5s', ...temporalConnectOptions(temporal) };
  try {
    return await kind.connect(options);
  } catch (e) {
    const how = temporal.tls ? ` over TLS${temporal.apiKey ? ' with TEMPORAL_API_KEY' : ''}` : '';
    throw new ConfigError(
      'TEMPORAL_ADDRESS',
      `no Temporal server answers at ${temporal.address}${how} (${(e as Error).message.split('\n')[0]})`,
      temporal.tls
        ? "Check TEMPORAL_ADDRESS, the TEMPORAL_TLS_* files and TEMPORAL_TLS_SERVER_NAME against the server's certificate, and TEMPORAL_API_KEY"
        : 'Start one (`npm start` does) or set TEMPORAL_ADDRESS to host:port of a running server (TEMPORAL_TLS_* and TEMPORAL_API_KEY for a secured one)',
    );
  }
}
