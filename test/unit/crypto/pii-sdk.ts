/**
 * The vendor SDK (`@notabene/pii-sdk` 1.17.2) for the interoperability tests, running unmodified in a child Node
 * process and called over IPC. It cannot be loaded inside Jest: Jest resolves with the `module-sync` export condition
 * (jest.config.js), which selects an ESM file deep in the SDK's HTTP dependencies (axios → form-data → … →
 * async-function/require.mjs) that Jest cannot require, while Node 20.19+ loads it natively. Nothing is mocked.
 *
 * Only the SDK's purely local public methods are exposed: `createKey`, `encryptPII`, `decryptPII`, `flattenPII`,
 * `unflattenPII`. (`generatePIIField`/`getPIIObject` need the network's HTTP service; `encryptRecordLikeSdk` below
 * performs exactly the encryption `generatePIIField` does, minus the HTTP calls.)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface SdkKeyPair {
  did: string;
  controllerKeyId: string;
  keys: Array<{
    type: string;
    kid: string;
    publicKeyHex: string;
    meta: { algorithms: string[] };
    kms: string;
    privateKeyHex: string;
  }>;
  services: [];
  provider: 'did:key';
}

export interface PiiSdk {
  createKey(): Promise<SdkKeyPair>;
  encryptPII(input: {
    senderDIDKey: string;
    recipientDIDkeys: string[];
    body: string;
    keypair: unknown;
  }): Promise<string>;
  decryptPII(input: { encryptedMessage: string; keypair: unknown }): Promise<string>;
  flattenPII(data: unknown): Promise<Array<{ key: string; value: string }>>;
  unflattenPII(data: Array<{ key: string; value: string }>): Promise<Record<string, unknown>>;
  stop(): void;
}

/** Starts the SDK process; call `stop()` in `afterAll`. */
export function startPiiSdk(): PiiSdk {
  const child: ChildProcess = fork(join(__dirname, 'pii-sdk-driver.cjs'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  child.on('message', (message: { id: number; result?: unknown; error?: string }) => {
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(message.error));
    else waiter?.resolve(message.result);
  });
  const call = (method: string, ...args: unknown[]) =>
    new Promise<never>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ id, method, args });
    });
  return {
    createKey: () => call('createKey'),
    encryptPII: (input) => call('encryptPII', input),
    decryptPII: (input) => call('decryptPII', input),
    flattenPII: (data) => call('flattenPII', data),
    unflattenPII: (data) => call('unflattenPII', data),
    stop: () => child.disconnect(),
  };
}

/** What `generatePIIField` encrypts: every flattened value, for [escrow (hybrid only), counterparty]. */
export async function encryptRecordLikeSdk(
  sdk: PiiSdk,
  record: unknown,
  sender: SdkKeyPair,
  recipientDIDkeys: string[],
): Promise<Array<{ key: string; value: string }>> {
  const entries = await sdk.flattenPII(record);
  return Promise.all(
    entries.map(async ({ key, value }) => ({
      key,
      value: await sdk.encryptPII({ senderDIDKey: sender.did, recipientDIDkeys, body: value, keypair: sender }),
    })),
  );
}

/** What `getPIIObject` does once the values are fetched: decrypt each, then unflatten. */
export async function decryptRecordLikeSdk(
  sdk: PiiSdk,
  entries: Array<{ key: string; value: string }>,
  keypair: unknown,
): Promise<Record<string, unknown>> {
  const plain = await Promise.all(
    entries.map(async ({ key, value }) => ({ key, value: await sdk.decryptPII({ encryptedMessage: value, keypair }) })),
  );
  return sdk.unflattenPII(plain);
}
