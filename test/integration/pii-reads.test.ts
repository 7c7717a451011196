import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { registerAuditCommands } from '../../client/cli/audit';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { createDidKeyRecord } from '../../lib/crypto';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import { runCli } from '../harness/cli';
import { bearerCall } from '../harness/http';
import {
  groupSeed,
  operatorSeed,
  ownDatabase,
  sandboxOidc,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

/** The customer whose data is read: present in the answers, never in an audit row. */
const GIVEN = 'Greta';
const FAMILY = 'Lindqvist';
const BIRTH = '1981-03-12';

type Row = { seq: string; actor: string; action: string; subject: string; details: Record<string, unknown> };

describe('reads of personal data are audited: who read which transaction or history, and through which route, never the data', () => {
  // A database of its own: a test here makes the audit log refuse writes, which no other suite of the run may see.
  const db = ownDatabase('piiread');
  const g = groupSeed();
  const operators = operatorSeed();
  g.seed.operators = Object.values(operators);
  const gatewayKey = createDidKeyRecord();
  let pool: Pool;
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let mlro: string;
  let txId: string;

  const reads = async (): Promise<Row[]> =>
    (
      await pool.query<Row>(
        `select seq, actor, action, subject, details from audit_log where chain = 'pii-read' order by seq`,
      )
    ).rows;
  const audit = (...args: string[]) => runCli((p) => registerAuditCommands(p, { pool }), ['audit', ...args]);
  const noPersonalData = (rows: Row[]) => {
    const json = JSON.stringify(rows);
    for (const value of [GIVEN, FAMILY, BIRTH]) expect(json).not.toContain(value);
  };
  const txInfo = (base: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/tx/info?id=${txId}`, { headers }).then(async (r) => ({
      status: r.status,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      body: (await r.json()) as Record<string, any>,
    }));

  beforeAll(async () => {
    await db.create();
    await migrate(db.url, 'orchestrator');
    pool = createPool(db.url, 'orchestrator');
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      pool,
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([{ vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex }]),
      auth: sandboxOidc(sb),
    });
    const gwToken = await sb.token(g.gatewayUser);
    await bearerCall(sb.url, gwToken, 'POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    await sb.simulateCounterparty(g.external);
    // A counterparty's transfer to the gateway, its personal data encrypted to the gateway's key (no webhook: no workflow runs).
    txId = (
      await simulateTransfer(sb, {
        from: g.external,
        to: g.gateway,
        destination: `0x${randomBytes(20).toString('hex')}`,
        originatorName: [GIVEN, FAMILY],
      })
    ).id;
    mlro = await sb.operatorToken(operators.compliance);
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
    await pool?.end();
    await db.drop();
  });

  it('GET /tx/info on the API leaves one row naming the principal and the transaction; a refused read leaves none', async () => {
    expect((await txInfo(orch.apiUrl)).status).toBe(401);
    expect((await txInfo(orch.apiUrl, orch.headers('viewer'))).status).toBe(403);
    expect((await txInfo(orch.apiUrl, orch.headers('operator'))).status).toBe(403);
    expect(await reads()).toEqual([]);

    const read = await txInfo(orch.apiUrl, { authorization: `Bearer ${mlro}` });
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body.ivms101)).toContain(FAMILY);
    const rows = await reads();
    expect(rows).toEqual([
      {
        seq: '1',
        actor: `oidc:${operators.compliance.subject}`,
        action: 'pii-read.tx-info',
        subject: txId,
        details: {
          route: 'GET /tx/info',
          listener: 'api',
          transactionId: txId,
          transferId: null,
          workflowIds: [`incoming-${txId}`],
          vaspDid: null,
          decryptedWith: g.gateway,
          principal: {
            kind: 'oidc',
            subject: operators.compliance.subject,
            issuer: expect.any(String),
            name: 'Maya Compliance',
            roles: ['compliance'],
            credentialId: expect.any(String),
          },
        },
      },
    ]);
    noPersonalData(rows);
  });

  it('GET /tx/info on the loopback agent listener (no credentials) names the listener as the actor', async () => {
    const before = (await reads()).length;
    const read = await txInfo(orch.agentUrl);
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body.ivms101)).toContain(FAMILY);
    const rows = (await reads()).slice(before);
    expect(rows).toEqual([
      expect.objectContaining({
        actor: 'system:agent-listener',
        action: 'pii-read.tx-info',
        subject: txId,
        details: expect.objectContaining({
          listener: 'agent',
          transactionId: txId,
          decryptedWith: g.gateway,
          principal: {
            kind: 'system',
            subject: 'agent-listener',
            name: 'agent-listener',
            roles: [],
            credentialId: 'agent-listener',
          },
        }),
      }),
    ]);
    noPersonalData(rows);
  });

  it('POST /codec/decode leaves one row per request with the ids it carries and the number of payloads; a refused one leaves none', async () => {
    // History payloads that hold the customer's data, encrypted as the worker stores them.
    const plain = [{ name: `${GIVEN} ${FAMILY}` }, { dateOfBirth: BIRTH }, { note: 'third' }].map((v) => ({
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from(JSON.stringify(v)).toString('base64'),
    }));
    const encoded = await bearerCall(orch.apiUrl, mlro, 'POST', '/codec/encode', { payloads: plain });
    expect(encoded.status).toBe(200);
    const decode = (headers: Record<string, string>, payloads: unknown[] = encoded.body.payloads) =>
      fetch(`${orch.apiUrl}/codec/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ payloads }),
      });
    const before = (await reads()).length;
    const newRows = async () => (await reads()).slice(before);

    expect((await decode({ 'x-namespace': 'default' })).status).toBe(401);
    expect((await decode(orch.headers('viewer', { 'x-namespace': 'default' }))).status).toBe(403);
    expect((await decode(orch.headers('operator', { 'x-namespace': 'default' }))).status).toBe(403);
    expect(await newRows()).toEqual([]);

    // As the CLI sends it with --codec-header: the workflow and run named.
    const runId = randomUUID();
    const named = await decode({
      authorization: `Bearer ${mlro}`,
      'x-namespace': 'default',
      'x-workflow-id': `incoming-${txId}`,
      'x-run-id': runId,
    });
    expect(named.status).toBe(200);
    expect(
      Buffer.from(((await named.json()) as { payloads: { data: string }[] }).payloads[0]!.data, 'base64').toString(),
    ).toContain(FAMILY);
    // As the Temporal UI sends it: the namespace only.
    expect(
      (await decode(orch.headers('admin', { 'x-namespace': 'default' }), encoded.body.payloads.slice(0, 1))).status,
    ).toBe(200);
    // Payloads the codec passes through as they came are recorded too (it is the codec's business what it decrypts),
    // with none counted as decrypted; the same encoding in unpadded base64 is still counted.
    const unpadded = encoded.body.payloads.slice(0, 1).map((p: { metadata: Record<string, string> }) => ({
      ...p,
      metadata: { ...p.metadata, encoding: p.metadata.encoding!.replace(/=+$/, '') },
    }));
    expect(
      (await decode({ authorization: `Bearer ${mlro}`, 'x-namespace': 'default' }, [...plain.slice(0, 1), ...unpadded]))
        .status,
    ).toBe(200);
    // A request without payloads reads nothing.
    expect((await decode({ authorization: `Bearer ${mlro}`, 'x-namespace': 'default' }, [])).status).toBe(200);

    const rows = await newRows();
    expect(rows).toEqual([
      expect.objectContaining({
        actor: `oidc:${operators.compliance.subject}`,
        action: 'pii-read.codec-decode',
        subject: `incoming-${txId}`,
        details: {
          route: 'POST /codec/decode',
          namespace: 'default',
          workflowId: `incoming-${txId}`,
          runId,
          payloads: 3,
          decrypted: 3,
          principal: expect.objectContaining({
            kind: 'oidc',
            name: 'Maya Compliance',
            roles: ['compliance'],
            credentialId: expect.any(String),
          }),
        },
      }),
      expect.objectContaining({
        actor: expect.stringMatching(/^apikey:[0-9a-f-]{36}$/),
        action: 'pii-read.codec-decode',
        subject: 'default',
        details: expect.objectContaining({
          namespace: 'default',
          workflowId: null,
          runId: null,
          payloads: 1,
          decrypted: 1,
          principal: expect.objectContaining({ kind: 'api-key' }),
        }),
      }),
      expect.objectContaining({
        actor: `oidc:${operators.compliance.subject}`,
        subject: 'default',
        details: expect.objectContaining({ payloads: 2, decrypted: 1 }),
      }),
    ]);
    noPersonalData(rows);

    // A workflow id that breaks the free-text rule is refused, not recorded.
    expect((await decode({ authorization: `Bearer ${mlro}`, 'x-workflow-id': 'x'.repeat(1001) })).status).toBe(400);
    expect(await newRows()).toHaveLength(3);
  });

  it('a read the audit log cannot record fails with 503 and hands out nothing', async () => {
    const before = await reads();
    const encoded = await bearerCall(orch.apiUrl, mlro, 'POST', '/codec/encode', {
      payloads: [
        {
          metadata: { encoding: Buffer.from('json/plain').toString('base64') },
          data: Buffer.from(JSON.stringify(FAMILY)).toString('base64'),
        },
      ],
    });
    // The database refuses the chain's appends (a full disk, a lost connection, a revoked grant would do the same).
    await pool.query(
      `create function refuse_pii_reads() returns trigger language plpgsql as $$ begin raise exception 'no audit writes'; end $$`,
    );
    await pool.query(
      `create trigger refuse_pii_reads before insert on audit_log for each row when (new.chain = 'pii-read') execute function refuse_pii_reads()`,
    );
    try {
      const api = await txInfo(orch.apiUrl, { authorization: `Bearer ${mlro}` });
      expect(api.status).toBe(503);
      // The agent endpoints answer in the network's error shape, on the API as on the listener.
      expect(api.body).toEqual({
        err: { name: 'AuditUnavailableError', code: 503, message: expect.stringMatching(/could not record this read/) },
      });
      const agent = await txInfo(orch.agentUrl);
      expect(agent.status).toBe(503);
      expect(JSON.stringify(agent.body)).not.toContain(FAMILY);

      const decoded = await bearerCall(orch.apiUrl, mlro, 'POST', '/codec/decode', encoded.body);
      expect(decoded.status).toBe(503);
      expect(decoded.body).toEqual({
        error: {
          type: 'AuditUnavailableError',
          message: expect.stringMatching(/nothing was handed out/),
          action: 'pii-read.codec-decode',
        },
      });
    } finally {
      await pool.query('drop trigger refuse_pii_reads on audit_log');
      await pool.query('drop function refuse_pii_reads()');
    }
    expect(await reads()).toEqual(before);
    // Once the log takes writes again, so do the reads.
    expect((await txInfo(orch.apiUrl, { authorization: `Bearer ${mlro}` })).status).toBe(200);
    expect(await reads()).toHaveLength(before.length + 1);
  });

  it('audit verify passes with the reads, and the export holds them', async () => {
    const n = (await reads()).length;
    expect(await audit('verify')).toMatch(new RegExp(`^ {2}pii-read seq ${n} head [0-9a-f]{64}$`, 'm'));
    const file = join(mkdtempSync(join(tmpdir(), 'tro-pii-read-')), 'audit.jsonl');
    await audit(
      'export',
      '--from',
      '2020-01-01T00:00:00Z',
      '--to',
      new Date(Date.now() + 60_000).toISOString(),
      '--out',
      file,
    );
    const exported = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { chain: string; action: string });
    expect(exported.filter((r) => r.chain === 'pii-read').map((r) => r.action)).toEqual([
      'pii-read.tx-info',
      'pii-read.tx-info',
      'pii-read.codec-decode',
      'pii-read.codec-decode',
      'pii-read.codec-decode',
      'pii-read.tx-info',
    ]);
    expect(await audit('verify', '--file', file)).toMatch(/^audit chain intact in export/m);
  });
});
