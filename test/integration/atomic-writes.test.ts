import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PoolClient } from 'pg';
import { createDidKeyRecord } from '../../lib/crypto';
import { flattenIvms101 } from '../../lib/ivms101';
import { NetworkClient } from '../../network/client';
import { storePii } from '../../outgoing/personal-data';
import { planTransfer } from '../../outgoing/plan';
import type { OutgoingRequest } from '../../outgoing/request';
import { cidOf, itemData } from '../../sandbox/pii-store/store';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

const fixture = JSON.parse(
  readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8'),
) as Record<string, unknown>;

/** Issue 15, item 4: personal data is written with what refers to it, and stored once however often a step is retried. */
describe('atomic writes of personal data', () => {
  const group = groupSeed();
  const originatorKey = createDidKeyRecord();
  const externalKey = createDidKeyRecord();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
    const external = new NetworkClient(sb.networkConfig(group.externalUser));
    await external.api
      .post('tf/vasps/update', {
        json: { did: group.external, fields: [{ fieldName: 'pii_didkey', values: [{ value: externalKey.did }] }] },
      })
      .json();
    orch = await startOrchestrator(sb.networkConfig(group.gatewayUser), {
      group: { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB] },
      agentKeys: JSON.stringify([{ vaspDID: group.subA, privateKeyHex: originatorKey.keys[0].privateKeyHex }]),
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  const post = async (path: string, body: unknown, audience = sb.url) =>
    fetch(`${sb.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await sb.token(group.gatewayUser, audience)}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    });

  /**
   * Holds `table` locked while `request` runs, until the request's backend waits on the lock; then `check` looks at what
   * the request has made visible so far. The lock is released before returning and the request's answer awaited.
   */
  async function whileBlocked<T>(
    table: string,
    request: () => Promise<Response>,
    check: () => Promise<T>,
  ): Promise<{ seen: T; status: number }> {
    const blocker: PoolClient = await sb.pool.connect();
    let pending: Promise<Response> | undefined;
    try {
      await blocker.query('begin');
      await blocker.query(`lock table ${table} in exclusive mode`);
      pending = request();
      await eventually(
        async () => {
          const { rowCount } = await sb.pool.query(
            `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ~* $1`,
            // Any statement on the table: tx/create, after writing the personal data, may wait first in its look for a
            // deposit report to complete (select … for update) rather than in its insert.
            [`(insert into|from|update) ${table}\\M`],
          );
          return rowCount ? true : undefined;
        },
        30_000,
        20,
      );
      const seen = await check();
      return { seen, status: 0 };
    } finally {
      await blocker.query('commit');
      blocker.release();
      if (pending) await pending;
    }
  }

  it('POST /pii/put stores the items and their owners in one transaction: no item is visible before its owners', async () => {
    const entries = [1, 2, 3].map((i) => ({
      key: `originator.field${i}`,
      value: `{"ciphertext":"${randomBytes(16).toString('hex')}"}`,
    }));
    const cids = await Promise.all(entries.map((e) => cidOf(itemData(e))));
    let answer: Response | undefined;
    const { seen } = await whileBlocked(
      'pii_owners',
      async () =>
        (answer = await post(
          '/pii/put',
          { fromDID: group.subA, toDID: group.external, data: entries },
          `${sb.url}/pii`,
        )),
      async () => (await sb.pool.query('select cid from pii_items where cid = any($1)', [cids])).rowCount,
    );
    expect(seen).toBe(0);
    expect(answer!.status).toBe(200);
    expect(((await answer!.json()) as { value: string }[]).map((e) => e.value)).toEqual(cids);
    const owners = await sb.pool.query(
      'select cid from pii_owners where cid = any($1) and from_did = $2 and to_did = $3',
      [cids, group.subA, group.external],
    );
    expect(owners.rowCount).toBe(3);
  });

  it('hosted mode stores the personal data in the transaction that stores the transaction row', async () => {
    const started = new Date();
    const ref = randomUUID();
    let answer: Response | undefined;
    const { seen } = await whileBlocked(
      'transactions',
      async () =>
        (answer = await post('/tx/create', {
          transactionRef: ref,
          transactionAsset: 'ETH',
          transactionAmount: '1',
          originatorVASPdid: group.subB,
          beneficiaryVASPdid: group.external,
          transactionBlockchainInfo: { destination: `0x${randomBytes(20).toString('hex')}` },
          originator: fixture.originator,
          beneficiary: fixture.beneficiary,
        })),
      async () =>
        (
          await sb.pool.query('select 1 from pii_owners where from_did = $1 and created_at >= $2', [
            group.subB,
            started,
          ])
        ).rowCount,
    );
    expect(seen).toBe(0);
    expect(answer!.status).toBe(200);
    const tx = (await answer!.json()) as { id: string; pii: Record<string, unknown> };
    const cids = flattenIvms101(tx.pii).map((e) => e.value);
    expect(cids.length).toBeGreaterThan(30);
    expect((await sb.pool.query('select 1 from pii_items where cid = any($1)', [cids])).rowCount).toBe(
      new Set(cids).size,
    );
  });

  it('a retry after a crash between the put and recording its CIDs sends the same values: the same CIDs, stored once', async () => {
    const id = randomUUID();
    const request: OutgoingRequest = {
      body: {
        transactionAsset: 'ETH',
        transactionAmount: '1000',
        originatorVASPdid: group.subA,
        beneficiaryVASPdid: group.external,
        transactionBlockchainInfo: { destination: `0x${randomBytes(20).toString('hex')}` },
        originator: fixture.originator,
        beneficiary: fixture.beneficiary,
      } as never,
      source: 'api',
      hybrid: false,
    };
    await orch.transfers.store.put(id, request);
    const plan = await planTransfer(orch.transfers, request);
    const itemsOfSubA = async () =>
      Number((await sb.pool.query('select count(*) from pii_owners where from_did = $1', [group.subA])).rows[0].count);
    const before = await itemsOfSubA();

    // The first attempt reaches the network, then the worker dies before the CIDs are recorded.
    const first = await storePii(orch.transfers, id, request, plan);
    await orch.pool.query(
      'update outgoing_transfers set pii = null, pii_mode = null, pii_recipients = null where id = $1',
      [id],
    );
    const stored = await itemsOfSubA();
    expect(stored - before).toBe(flattenIvms101(first!.tree).length);

    const retried = await storePii(orch.transfers, id, request, plan);
    expect(retried!.tree).toEqual(first!.tree);
    expect(await itemsOfSubA()).toBe(stored);
  });
});
