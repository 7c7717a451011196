import { Client, Connection } from '@temporalio/client';
import type { PlatformConfig } from '../config';
import type { CodecKeyring } from '../lib/temporal/codec';
import { connectTemporal } from '../lib/temporal/connect';
import { createDataConverter } from '../lib/temporal/data-converter';
import type { Tracing } from '../lib/tracing';

/** The process's one Temporal Client, with the project's encrypting data converter (and tracing's interceptors). */
export async function createTemporalClient(
  config: PlatformConfig,
  keyring: CodecKeyring,
  tracing?: Tracing,
): Promise<Client> {
  const connection = await connectTemporal(Connection, config.temporal);
  return new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: createDataConverter(keyring),
    ...(tracing && { interceptors: tracing.clientInterceptors }),
  });
}

/** Whether the Temporal server answers (the health probe): its system info, which any frontend answers cheaply. */
export async function pingTemporal(client: Client): Promise<void> {
  await client.workflowService.getSystemInfo({});
}
