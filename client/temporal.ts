import { Client, Connection } from '@temporalio/client';
import type { PlatformConfig } from '../config';
import type { CodecKeyring } from '../lib/temporal/codec';
import { connectTemporal } from '../lib/temporal/connect';
import { createDataConverter } from '../lib/temporal/data-converter';

/** The process's one Temporal Client, with the project's encrypting data converter. */
export async function createTemporalClient(config: PlatformConfig, keyring: CodecKeyring): Promise<Client> {
  const connection = await connectTemporal(Connection, config.temporal);
  return new Client({ connection, namespace: config.temporal.namespace, dataConverter: createDataConverter(keyring) });
}

/** Whether the Temporal server answers (the health probe): its system info, which any frontend answers cheaply. */
export async function pingTemporal(client: Client): Promise<void> {
  await client.workflowService.getSystemInfo({});
}
