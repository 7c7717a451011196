import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Pool } from 'pg';
import { createDidKeyRecord } from '../../lib/crypto';
import { createDataConverter } from '../../lib/temporal/data-converter';
import { createApiKey } from '../../client/api/auth/api-keys';
import { createPool } from '../../db/pool';
import { systemPrincipal } from '../../lib/principal';
import { NetworkClient } from '../../network/client';
import type { NetworkTransaction } from '../../network/transactions';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import type { TransferState } from '../../workflows/outgoing-transfer.messages';
import { eventually, groupSeed, startSandbox, stopChild, testEnv, type RunningSandbox } from '../harness/platform';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

/**
 * The all-in-one process (workers/all-in-one.ts) as deployed: the API and a worker in one Node process on one Temporal
 * connection. A transfer sent to its API completes end to end, and its workflow was started eagerly: the first workflow
 * task came back with the start call (so the history records it as started by the starter, not a poller).
 */
describe('all-in-one process: the API and a worker on one connection, eager workflow start', () => {
  const group = groupSeed();
  const originatorKey = createDidKeyRecord();
  let sandbox: RunningSandbox;
  let child: ChildProcess;
  let pool: Pool;
  let apiUrl: string;
  let token: string;
  let output = '';

  beforeAll(async () => {
    const env = testEnv();
    sandbox = await startSandbox(group.seed);
    const external = new NetworkClient(sandbox.networkConfig(group.externalUser));
    await external.api
      .post('tf/vasps/update', {
        json: {
          did: group.external,
          fields: [{ fieldName: 'pii_didkey', values: [{ value: createDidKeyRecord().did }] }],
        },
      })
      .json();
    const network = sandbox.networkConfig(group.gatewayUser);
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'workers', 'all-in-one.ts')], {
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        TEMPORAL_ADDRESS: env.temporalAddress,
        TEMPORAL_TASK_QUEUE: `all-in-one-${randomUUID()}`,
        DATABASE_URL: env.databaseUrl,
        TEMPORAL_CODEC_KEYS: process.env.TEST_CODEC_KEYS,
        DATA_DIR: mkdtempSync(join(tmpdir(), 'all-in-one-')),
        LOG_LEVEL: 'warn',
        CLIENT_ID: network.clientId,
        CLIENT_SECRET: network.clientSecret,
        AUTH_URL: network.authUrl,
        BASE_URL: network.baseUrl,
        BASEURL_PII: network.baseUrlPii,
        KEYSTORE_MASTER_KEY: randomBytes(32).toString('base64'),
        KEYS: JSON.stringify([{ vaspDID: group.subA, privateKeyHex: originatorKey.keys[0].privateKeyHex }]),
        GATEWAY_VASP_DID: group.gateway,
        SUBSIDIARY_VASP_DIDS: [group.subA, group.subB].join(','),
        TRANSFER_POLL_INTERVAL: '300ms',
        KEY_ROTATION_PERIOD: 'off',
        ADDRESS_BOOK_CRON: 'off',
        RETENTION_CRON: 'off',
        INCOMING_SWEEP_INTERVAL: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    await eventually(
      async () =>
        (await fetch(`${apiUrl}/healthz`).then(
          (r) => r.ok,
          () => false,
        )) || undefined,
      90_000,
      250,
    ).catch((e: unknown) => {
      throw new Error(`the all-in-one process did not answer: ${(e as Error).message}\n${output}`);
    });
    pool = createPool(env.databaseUrl, 'orchestrator');
    token = (await createApiKey(pool, { name: `all-in-one-${randomUUID()}`, role: 'admin' }, systemPrincipal('test')))
      .key;
  }, 120_000);

  afterAll(async () => {
    await stopChild(child);
    await pool?.end();
    await sandbox?.close();
  });

  it("a transfer sent to its API ends ACCEPTED, its workflow started eagerly on the process's own worker", async () => {
    const id = randomUUID();
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': id };
    const r = await fetch(`${apiUrl}/v1/transfers`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        transactionAsset: 'ETH',
        transactionAmount: '1000000000000000',
        originatorVASPdid: group.subA,
        beneficiaryVASPdid: group.external,
        transactionBlockchainInfo: { destination: `0x${randomBytes(20).toString('hex')}` },
        originator: {
          originatorPersons: [
            {
              naturalPerson: {
                name: [
                  {
                    nameIdentifier: [
                      { primaryIdentifier: 'Baggins', secondaryIdentifier: 'Frodo', nameIdentifierType: 'LEGL' },
                    ],
                  },
                ],
                geographicAddress: [{ addressType: 'HOME', townName: 'Hobbiton', country: 'NZ' }],
              },
            },
          ],
          accountNumber: ['0xa40dfee99e1c85dc97fdc594b16a460717838703'],
        },
        beneficiary: {
          beneficiaryPersons: [
            {
              naturalPerson: {
                name: [
                  {
                    nameIdentifier: [
                      { primaryIdentifier: 'Gamgee', secondaryIdentifier: 'Samwise', nameIdentifierType: 'LEGL' },
                    ],
                  },
                ],
              },
            },
          ],
          accountNumber: ['0x1c70c03b0c6d0e1a04cd2ad09c7d1b5c8b0b7e11'],
        },
      }),
    });
    expect({ status: r.status, body: r.status === 202 ? undefined : await r.text() }).toEqual({
      status: 202,
      body: undefined,
    });
    const state = (check: (s: TransferState) => boolean) =>
      eventually(async () => {
        const s = (await (await fetch(`${apiUrl}/v1/transfers/${id}`, { headers })).json()) as TransferState;
        return check(s) ? s : undefined;
      }, 30_000);
    const sent = await state((s) => s.status === 'SENT' && !!s.transactionId);

    // The counterparty confirms and accepts; the workflow's poll finds it (no webhook registered).
    const external = new NetworkClient(sandbox.networkConfig(group.externalUser));
    await external.api.post('tx/confirm', { searchParams: { id: sent.transactionId! } }).json<NetworkTransaction>();
    await external.api.post('tx/accept', { searchParams: { id: sent.transactionId! } }).json<NetworkTransaction>();
    const done = await state((s) => s.final);
    expect(done.status).toBe('ACCEPTED');
    expect(done.history.map((h) => h.status).slice(0, 3)).toEqual(['RECEIVED', 'PREPARED', 'SENT']);

    // Eager start: the server accepted the start's eager request (recorded on the started event) and started the first
    // workflow task inside the start call (event 3), handing it to this process's worker.
    const connection = await Connection.connect({ address: testEnv().temporalAddress });
    try {
      const history = await new Client({ connection, dataConverter: createDataConverter(testEnv().keyring) }).workflow
        .getHandle(workflowIds.outgoingTransfer(id))
        .fetchHistory();
      const events = history.events ?? [];
      expect(events[0]!.workflowExecutionStartedEventAttributes!.eagerExecutionAccepted).toBe(true);
      expect(Number(events.find((e) => e.workflowTaskStartedEventAttributes)!.eventId)).toBe(3);
    } finally {
      await connection.close();
    }
  }, 90_000);
});
