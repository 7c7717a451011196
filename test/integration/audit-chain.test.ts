import { bearerCall } from '../harness/http';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, type Pool } from 'pg';
import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { localCallDigests } from '../../activities/context';
import { registerAuditCommands } from '../../client/cli/audit';
import { recordAuditEntry } from '../../audit/store';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { createDidKeyRecord } from '../../lib/crypto';
import { auditRowHash, canonicalJson } from '../../audit/chain';
import { loadSdnList } from '../../screening/load-sdn';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import type { IncomingStatus } from '../../workflows/incoming-transfer.messages';
import { runCli } from '../harness/cli';
import {
  eventually,
  groupSeed,
  operatorSeed,
  ownDatabase,
  sandboxOidc,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

const SAMPLE = resolve(__dirname, '../../data/sanctions');

/** Details the migration must hash exactly as the application does: key order by UTF-8 bytes, numbers as JS prints them. */
const LEGACY_DETAILS = {
  b: 1,
  a: [1.5, 0.1, 1e21, 1.5e-7, 123456789012345680000, 1e15, 0.000015, -2.5, 1234567890123456.5],
  ü: 'x',
  é: { z: null, y: true, x: false },
  quote: '"\\\n\t\u0001\u001f ☃ 😀 \u2028',
  '€': 2,
  '😀': 3,
  '\uffff': 4,
  '': 'empty key',
  A: 'upper',
};

describe('the tamper-evident audit log: one hash chain per group of actions, verified in the database and offline', () => {
  // A database of its own: tests here edit and delete audit rows, which no other suite of the run may see.
  const db = ownDatabase('audit');
  const g = groupSeed();
  const operators = operatorSeed();
  g.seed.operators = Object.values(operators);
  const gatewayKey = createDidKeyRecord();
  const subAKey = createDidKeyRecord();
  let pool: Pool;
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let gwToken: string;
  const dir = mkdtempSync(join(tmpdir(), 'tro-audit-'));

  const audit = (...args: string[]) => runCli((p) => registerAuditCommands(p, { pool }), ['audit', ...args]);
  const verifyFails = async (...args: string[]) => {
    const e = await audit('verify', ...args).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(e).toBeDefined();
    return e!.message;
  };
  const sandboxCall = async (method: string, path: string, body?: unknown) =>
    (await bearerCall(sb.url, gwToken, method, path, body)).body;
  const api = (method: string, path: string, body?: unknown, token = orch.apiKeys.admin) =>
    bearerCall(orch.apiUrl, token, method, path, body);

  beforeAll(async () => {
    await db.create();
    // The log as it was before the chain: rows written by the first nine migrations' schema.
    const { runner } = await import('node-pg-migrate');
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await runner({
        dbClient: client,
        dir: resolve(__dirname, '../../db/migrations/orchestrator'),
        migrationsTable: 'pgmigrations',
        schema: 'orchestrator',
        createSchema: true,
        direction: 'up',
        count: 9,
        singleTransaction: true,
        checkOrder: true,
        log: () => undefined,
      });
      const legacy = [
        ['2026-01-02T03:04:05.123456Z', 'ops', 'key.created', 'did:ethr:0x1', LEGACY_DETAILS],
        [
          '2026-01-02T03:04:06Z',
          'Maya Compliance',
          'incoming.decline',
          'tx-1',
          { reason: 'confirmed match', principal: { kind: 'oidc', roles: ['compliance'] } },
        ],
        ['2026-01-02T03:04:07.5Z', 'ops', 'key.activated', 'did:ethr:0x1', {}],
        [
          '2026-01-02T03:04:08Z',
          'retention-sweep',
          'retention.sweep',
          'retention',
          { webhooksDeleted: 0, transferRequestsErased: 12 },
        ],
      ];
      for (const [at, actor, action, subject, details] of legacy) {
        await client.query(
          'insert into orchestrator.audit_log (at, actor, action, subject, details) values ($1, $2, $3, $4, $5)',
          [at, actor, action, subject, JSON.stringify(details)],
        );
      }
    } finally {
      await client.end();
    }
    await migrate(db.url, 'orchestrator');
    pool = createPool(db.url, 'orchestrator');

    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      pool,
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([
        { vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex },
        { vaspDID: g.subA, privateKeyHex: subAKey.keys[0].privateKeyHex },
      ]),
      incoming: {
        routeDeadline: '1h',
        routeGiveUpAfter: '1h',
        reviewDeadline: '1h',
        pollInterval: '2s',
        screeningThreshold: 0.85,
      },
      auth: sandboxOidc(sb),
    });
    gwToken = await sb.token(g.gatewayUser);
    await sandboxCall('POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    await sandboxCall('POST', '/tf/vasps/update', {
      did: g.subA,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: subAKey.did }] }],
    });
    await sb.simulateCounterparty(g.external);
    const hook = await sandboxCall('POST', '/webhook', {
      vaspDID: g.gateway,
      url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    orch.webhooks.notification[g.gateway] = hook.secret as string;
    await loadSdnList(pool, {
      list: 'audit-test',
      sdnPath: `${SAMPLE}/sdn-sample.csv`,
      altPath: `${SAMPLE}/alt-sample.csv`,
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
    await pool?.end();
    await db.drop();
  });

  it('the migration chains the rows already in the log, hashing them exactly as the application does', async () => {
    const { rows } = await pool.query(
      `select chain, seq, action from audit_log where at < '2026-02-01' order by chain, seq`,
    );
    expect(rows.map((r) => [r.chain, Number(r.seq), r.action])).toEqual([
      ['incoming', 1, 'incoming.decline'],
      ['key', 1, 'key.created'],
      ['key', 2, 'key.activated'],
      ['retention', 1, 'retention.sweep'],
    ]);
    const out = await audit('verify');
    expect(out).toMatch(/^audit chain intact in the database: \d+ rows, \d+ chains$/m);
    expect(out).toMatch(/^ {2}incoming seq \d+ head [0-9a-f]{64}$/m);
    // The details' canonical form: keys in UTF-8 byte order (U+FFFF before U+1F600), numbers as JavaScript prints them.
    expect(canonicalJson(LEGACY_DETAILS)).toBe(
      '{"":"empty key","A":"upper","a":[1.5,0.1,1e+21,1.5e-7,123456789012345680000,1000000000000000,0.000015,-2.5,1234567890123456.5],' +
        '"b":1,"quote":"\\"\\\\\\n\\t\\u0001\\u001f ☃ 😀 \u2028","é":{"x":false,"y":true,"z":null},"ü":"x","€":2,"\uffff":4,"😀":3}',
    );
  });

  it('a real run (a sanctioned transfer declined by a compliance officer, a key rotation) leaves the chain intact, with the principal in it', async () => {
    const address = `0x${randomBytes(20).toString('hex')}`;
    expect(
      (
        await api('PUT', '/v1/addresses', {
          addresses: [{ vaspDID: g.subA, asset: 'ETH', address, customerRef: 'c-1' }],
        })
      ).status,
    ).toBe(200);
    // The import is audited with its write; a refused one (the address is subA's) writes neither.
    const imports = async () =>
      (await pool.query(`select actor, details from audit_log where chain = 'address-book' order by seq`)).rows;
    // Actors are stable ids (apikey:<id>, oidc:<sub>); the names are the principals', for display.
    const actorOf = async (token: string) => (await api('GET', '/v1/me', undefined, token)).body.actor as string;
    expect(await imports()).toEqual([
      {
        actor: await actorOf(orch.apiKeys.admin),
        details: {
          entries: 1,
          inserted: 1,
          updated: 0,
          unchanged: 0,
          vaspDids: [g.subA],
          assets: ['ETH'],
          principal: expect.objectContaining({ kind: 'api-key', name: 'test-admin' }),
        },
      },
    ]);
    expect(
      (
        await api('PUT', '/v1/addresses', {
          addresses: [{ vaspDID: g.subB, asset: 'ETH', address, customerRef: 'c-2' }],
        })
      ).status,
    ).toBe(409);
    expect(await imports()).toHaveLength(1);
    const id = (
      await simulateTransfer(sb, {
        from: g.external,
        to: g.gateway,
        destination: address,
        originatorName: ['Ivan', 'Petrov'],
      })
    ).id;
    const status = async () => {
      const r = await api('GET', `/v1/incoming-transfers/${id}`);
      return r.status === 200 ? (r.body as IncomingStatus) : undefined;
    };
    await eventually(async () => ((await status())?.phase === 'awaiting-review' ? true : undefined), 30_000);
    const mlro = await sb.operatorToken(operators.compliance);
    expect(
      (await api('POST', `/v1/transfers/${id}/decision`, { decision: 'decline', reason: 'confirmed match' }, mlro))
        .status,
    ).toBe(200);
    await eventually(async () => ((await status())?.phase === 'completed' ? true : undefined), 30_000);

    expect(
      (
        await api(
          'POST',
          `/v1/vasps/${encodeURIComponent(g.subA)}/keys/rotate`,
          { reason: 'scheduled rotation' },
          orch.apiKeys.operator,
        )
      ).status,
    ).toBe(202);
    await eventually(
      async () => {
        const r = await pool.query(`select 1 from audit_log where subject = $1 and action = 'key.activated'`, [g.subA]);
        return r.rowCount ? true : undefined;
      },
      60_000,
      200,
    );

    // The automatic decisions before the person's, in the order taken.
    const rows = await pool.query('select actor, action from audit_log where subject = $1 order by seq', [id]);
    expect(rows.rows.map((r) => [r.actor, r.action])).toEqual([
      ['system:routing', 'incoming.route.auto'],
      ['system:screening', 'incoming.screening.hit'],
      [`oidc:${operators.compliance.subject}`, 'incoming.decline'],
    ]);
    const decline = await pool.query(
      'select chain, seq, actor, details, prev_hash, hash from audit_log where subject = $1 and action = $2',
      [id, 'incoming.decline'],
    );
    expect(decline.rows[0]).toMatchObject({
      chain: 'incoming',
      actor: `oidc:${operators.compliance.subject}`,
      details: { principal: { kind: 'oidc', name: 'Maya Compliance', roles: ['compliance'] } },
    });
    expect(decline.rows[0].hash).toMatch(/^[0-9a-f]{64}$/);
    const keyRows = await pool.query(`select action from audit_log where subject = $1 and chain = 'key' order by seq`, [
      g.subA,
    ]);
    expect(keyRows.rows.map((r) => r.action)).toEqual(
      expect.arrayContaining(['key.imported', 'key.rotation.requested', 'key.created', 'key.retired', 'key.activated']),
    );
    // Loading a sanctions list and starting a reconciliation are audited too.
    const loaded = await pool.query(
      `select actor, subject, details from audit_log where action = 'screening.list.load'`,
    );
    expect(loaded.rows).toEqual([
      {
        actor: 'system:sanctions-loader',
        subject: 'audit-test',
        details: expect.objectContaining({
          list: 'audit-test',
          entries: expect.any(Number),
          principal: expect.objectContaining({ kind: 'system' }),
        }),
      },
    ]);
    const reconcile = await api(
      'POST',
      `/v1/address-book/${encodeURIComponent(g.subA)}/reconcile`,
      {},
      orch.apiKeys.operator,
    );
    expect(reconcile.status).toBe(202);
    const requested = await pool.query(
      `select actor, details from audit_log where action = 'address-book.reconcile.requested' and subject = $1`,
      [g.subA],
    );
    expect(requested.rows).toEqual([
      {
        actor: await actorOf(orch.apiKeys.operator),
        details: expect.objectContaining({
          workflowId: reconcile.body.workflowId,
          principal: expect.objectContaining({ name: 'test-operator' }),
        }),
      },
    ]);
    await eventually(
      async () => {
        const r = await api(
          'GET',
          `/v1/address-book/${encodeURIComponent(g.subA)}/reconcile/${reconcile.body.workflowId}`,
        );
        return r.body.status !== 'RUNNING' ? true : undefined;
      },
      60_000,
      200,
    );
    expect(await audit('verify')).toMatch(/^audit chain intact in the database/m);

    // The console's search shows the chain fields.
    const listed = await api('GET', `/v1/audit-log?subject=${id}&action=incoming.decline`, undefined, mlro);
    expect(listed.body.data[0]).toMatchObject({
      actor: `oidc:${operators.compliance.subject}`,
      actorName: 'Maya Compliance',
      chain: 'incoming',
      seq: Number(decline.rows[0].seq),
      hash: decline.rows[0].hash,
      prevHash: decline.rows[0].prev_hash,
    });
  });

  it('verify names the row whose field was changed in the database, and a row deleted from the middle or the end', async () => {
    const { rows } = await pool.query(`select id::text as id, seq from audit_log where chain = 'key' order by seq`);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    const [target, next] = [rows[1]!, rows[2]!];
    const original = await saved(pool, target.id);
    await tamper(
      pool,
      `update audit_log set details = jsonb_set(details, '{reason}', '"nothing to see"') where id = $1`,
      [target.id],
    );
    expect(await verifyFails()).toBe(
      `audit chain broken in the database at row id ${target.id} (chain key, seq ${target.seq}): its hash does not match its contents (the row was changed)`,
    );
    await tamper(pool, 'update audit_log set details = $2 where id = $1', [
      target.id,
      JSON.stringify(original.details),
    ]);
    expect(await audit('verify')).toMatch(/intact/);

    await tamper(pool, `update audit_log set actor = 'someone else' where id = $1`, [target.id]);
    expect(await verifyFails()).toContain(`at row id ${target.id} (chain key, seq ${target.seq})`);
    // Rehashing the changed row is not enough: the next row's previous hash no longer matches.
    const edited = await saved(pool, target.id);
    await tamper(pool, 'update audit_log set hash = $2 where id = $1', [
      target.id,
      auditRowHash({ ...edited, seq: Number(edited.seq), prevHash: edited.prev_hash } as never),
    ]);
    expect(await verifyFails()).toBe(
      `audit chain broken in the database at row id ${next.id} (chain key, seq ${next.seq}): its previous hash is not the hash of seq ${target.seq} (a row before it was changed or replaced)`,
    );
    await tamper(pool, 'update audit_log set actor = $2, hash = $3 where id = $1', [
      target.id,
      original.actor,
      original.hash,
    ]);
    expect(await audit('verify')).toMatch(/intact/);

    await tamper(pool, 'delete from audit_log where id = $1', [target.id]);
    expect(await verifyFails()).toBe(
      `audit chain broken in the database at row id ${next.id} (chain key, seq ${next.seq}): row seq ${target.seq} is missing before it (deleted)`,
    );
    await restore(pool, original);
    expect(await audit('verify')).toMatch(/intact/);

    // The end of a chain: its recorded head shows the deletion.
    const last = (
      await pool.query(`select id::text as id, seq from audit_log where chain = 'retention' order by seq desc limit 1`)
    ).rows[0];
    const lastRow = await saved(pool, last.id);
    await tamper(pool, 'delete from audit_log where id = $1', [last.id]);
    expect(await verifyFails()).toMatch(
      new RegExp(
        `at chain retention at seq ${last.seq}: the chain's recorded head is seq ${last.seq} [0-9a-f]{64}, but its rows end at seq ${Number(last.seq) - 1} `,
      ),
    );
    await restore(pool, lastRow);
    expect(await audit('verify')).toMatch(/intact/);
  });

  it('an export of a time range verifies offline with the same code; a changed line fails, named', async () => {
    const file = join(dir, 'audit.jsonl');
    const out = await audit(
      'export',
      '--from',
      '2020-01-01T00:00:00Z',
      '--to',
      new Date(Date.now() + 60_000).toISOString(),
      '--out',
      file,
    );
    // The rows, then the trailer (their count and each chain's end): audit-checkpoints.test.ts checks it.
    const all = readFileSync(file, 'utf8').trim().split('\n');
    const lines = all.slice(0, -1);
    expect(JSON.parse(all[all.length - 1]!)).toMatchObject({ trailer: true, rows: lines.length });
    expect(out).toBe(`exported ${lines.length} rows to ${file}\n`);
    expect(lines.map((l) => JSON.parse(l))).toContainEqual(
      expect.objectContaining({
        chain: 'incoming',
        seq: 1,
        action: 'incoming.decline',
        at: '2026-01-02T03:04:06.000000Z',
        prevHash: '0'.repeat(64),
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
    );
    const ok = await audit('verify', '--file', file);
    expect(ok).toMatch(new RegExp(`^audit chain intact in export ${file}: ${lines.length} rows`, 'm'));
    // The heads printed offline are the database's heads.
    const db = await audit('verify');
    expect(ok.match(/^ {2}.*$/gm)).toEqual(db.match(/^ {2}.*$/gm));

    // A time range of its own: its first row per chain links to rows outside it.
    const later = join(dir, 'later.jsonl');
    await audit('export', '--from', '2026-01-02T03:04:06Z', '--to', '2026-01-02T03:04:08Z', '--out', later);
    expect(
      readFileSync(later, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).action),
    ).toEqual(['incoming.decline', 'key.activated', undefined]);
    expect(await audit('verify', '--file', later)).toMatch(/intact/);

    const i = lines.findIndex((l) => JSON.parse(l).chain === 'key' && JSON.parse(l).seq === 2);
    const [row, after] = [JSON.parse(lines[i]!), JSON.parse(lines[i + 1]!)];
    expect(after).toMatchObject({ chain: 'key', seq: 3 });
    const tampered = join(dir, 'tampered.jsonl');
    writeFileSync(
      tampered,
      [...all.slice(0, i), JSON.stringify({ ...row, subject: 'another subject' }), ...all.slice(i + 1)].join('\n'),
    );
    expect(await verifyFails('--file', tampered)).toBe(
      `audit chain broken in export ${tampered} at row id ${row.id} (chain key, seq 2): its hash does not match its contents (the row was changed)`,
    );
    const dropped = join(dir, 'dropped.jsonl');
    writeFileSync(dropped, [...all.slice(0, i), ...all.slice(i + 1)].join('\n'));
    expect(await verifyFails('--file', dropped)).toBe(
      `audit chain broken in export ${dropped} at row id ${after.id} (chain key, seq 3): row seq 2 is missing before it (deleted)`,
    );
    // The stdout form needs no database either.
    const printed = await audit('export', '--from', '2026-01-02T00:00:00Z', '--to', '2026-01-03T00:00:00Z');
    expect(printed.trim().split('\n')).toHaveLength(4 + 1);
  });

  it('appends from many connections and several pools at once leave one unbroken chain; a retried activity appends once', async () => {
    const pools = [pool, createPool(db.url, 'orchestrator'), createPool(db.url, 'orchestrator')];
    try {
      const before = Number(
        (await pool.query(`select count(*) from audit_log where chain = 'concurrency'`)).rows[0].count,
      );
      await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          recordAuditEntry(pools[i % pools.length]!, {
            actor: `worker-${i % 3}`,
            action: 'concurrency.append',
            subject: `s-${i}`,
            details: { i },
          }),
        ),
      );
      const { rows } = await pool.query(
        `select seq::int as seq from audit_log where chain = 'concurrency' order by seq`,
      );
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: before + 120 }, (_, i) => i + 1));
      expect(await audit('verify')).toMatch(/^ {2}concurrency seq 120 head/m);
    } finally {
      await Promise.all(pools.slice(1).map((p) => p.end()));
    }

    // The same activity run twice (a retry: same workflow run and activity id) leaves one row.
    const env = new MockActivityEnvironment({
      workflowExecution: { workflowId: 'incoming-retry-test', runId: 'run-1' },
      activityId: '7',
      attempt: 2,
    } as never);
    const entry = {
      actor: 'system:screening',
      action: 'incoming.screening.hit',
      subject: 'retry-test',
      details: { nameHits: 1 },
    };
    await env.run(orch.activities.recordAudit, entry);
    await env.run(orch.activities.recordAudit, entry);
    const once = await pool.query(`select idempotency_key from audit_log where subject = 'retry-test'`);
    expect(once.rows).toEqual([{ idempotency_key: 'incoming-retry-test/run-1/7' }]);

    // A local activity's id is its sequence number in the run: a retried workflow task can issue another call under the
    // same id (an earlier check answered differently). Its write is a new row; the same call again is still one.
    const local = new MockActivityEnvironment({
      workflowExecution: { workflowId: 'local-retry-test', runId: 'run-1' },
      activityId: '2',
      isLocal: true,
    } as never);
    const throughWorker = (e: typeof entry) =>
      local.run(async (arg: typeof entry) => {
        const interceptor = localCallDigests(Context.current()).inbound!;
        return interceptor.execute!({ args: [arg], headers: {} }, (input) =>
          orch.activities.recordAudit(input.args[0] as typeof entry),
        );
      }, e);
    const matched = { ...entry, action: 'deposit.matched', subject: 'local-retry-test' };
    const released = { ...entry, action: 'deposit.released', subject: 'local-retry-test' };
    await throughWorker(matched);
    await throughWorker(released);
    await throughWorker(released);
    const calls = await pool.query(
      `select action, idempotency_key from audit_log where subject = 'local-retry-test' order by seq`,
    );
    expect(calls.rows.map((r) => r.action)).toEqual(['deposit.matched', 'deposit.released']);
    for (const r of calls.rows) expect(r.idempotency_key).toMatch(/^local-retry-test\/run-1\/2\/[\w-]{16}$/);
    expect(await audit('verify')).toMatch(/intact/);
  });
});

/** A row's every column, its time as exact text (a Date would drop the microseconds the hash covers). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function saved(pool: Pool, id: string): Promise<Record<string, any>> {
  const { rows } = await pool.query(
    `select id, chain, seq, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, actor, action, subject, details, prev_hash, hash, idempotency_key
       from audit_log where id = $1`,
    [id],
  );
  return rows[0];
}

/**
 * Changes the log as someone with the database's superuser rights can: with its append-only triggers off for the
 * session (db/migrations/orchestrator/0015_audit-append-only.sql), which is what the chain must still show.
 */
async function tamper(pool: Pool, sql: string, params: unknown[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('set session_replication_role = replica');
    await client.query(sql, params);
  } finally {
    await client.query('reset session_replication_role');
    client.release();
  }
}

/** Puts a deleted row back as it was (every column). */
async function restore(pool: Pool, row: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(row);
  await pool.query(
    `insert into audit_log (${cols.join(', ')}) values (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
    cols.map((c) => (c === 'details' ? JSON.stringify(row[c]) : row[c])),
  );
}
