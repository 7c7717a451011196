import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { registerAuditCommands } from '../../client/cli/audit';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
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

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Row = { actor: string; action: string; subject: string; details: Json };

describe('changes to a live transaction through /tx/update are audited: who, which transaction, which fields, never their values', () => {
  // A database of its own: a test here makes the audit log refuse writes, which no other suite of the run may see.
  const db = ownDatabase('txupdate');
  const g = groupSeed();
  const operators = operatorSeed();
  g.seed.operators = Object.values(operators);
  let pool: Pool;
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let operator: string;
  let txId: string;

  const rows = async (): Promise<Row[]> =>
    (
      await pool.query<Row>(
        `select actor, action, subject, details from audit_log where chain = 'transaction' order by seq`,
      )
    ).rows;
  const update = (base: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/tx/update`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }));
  /** The transaction as the network holds it. */
  const atNetwork = async () =>
    (await bearerCall(sb.url, await sb.token(g.gatewayUser), 'GET', `/tx/info?id=${txId}`)).body;
  const secret = () => `ref-${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    await db.create();
    await migrate(db.url, 'orchestrator');
    pool = createPool(db.url, 'orchestrator');
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      pool,
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      auth: sandboxOidc(sb),
    });
    await sb.simulateCounterparty(g.external);
    // A counterparty's transfer to the gateway (no webhook: no workflow runs); the gateway is its beneficiary.
    txId = (
      await simulateTransfer(sb, {
        from: g.external,
        to: g.gateway,
        destination: `0x${randomBytes(20).toString('hex')}`,
      })
    ).id;
    operator = await sb.operatorToken(operators.operator);
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
    await pool?.end();
    await db.drop();
  });

  it('on the API: one row before the update, naming the principal and the fields; refused requests leave none', async () => {
    const value = secret();
    const body = { id: txId, beneficiaryRef: value, beneficiaryDid: 'did:web:customer.example' };
    expect((await update(orch.apiUrl, body)).status).toBe(401);
    expect((await update(orch.apiUrl, body, orch.headers('viewer'))).status).toBe(403);
    expect(
      await update(orch.apiUrl, { ...body, id: 'not-a-uuid' }, { authorization: `Bearer ${operator}` }),
    ).toMatchObject({
      status: 400,
      body: { err: { name: 'NotabeneTransactionValidationError', code: 400, message: expect.stringMatching(/^id: /) } },
    });
    expect(await rows()).toEqual([]);

    const done = await update(orch.apiUrl, body, { authorization: `Bearer ${operator}` });
    expect(done.status).toBe(200);
    expect(done.body.beneficiaryRef).toBe(value);
    expect(await rows()).toEqual([
      {
        actor: `oidc:${operators.operator.subject}`,
        action: 'transaction.update.requested',
        subject: txId,
        details: {
          route: 'POST /tx/update',
          listener: 'api',
          transactionId: txId,
          fields: ['beneficiaryDid', 'beneficiaryRef'],
          hybrid: false,
          principal: expect.objectContaining({
            kind: 'oidc',
            subject: operators.operator.subject,
            name: 'Otto Operator',
            roles: ['operator'],
          }),
        },
      },
    ]);
    expect(JSON.stringify(await rows())).not.toContain(value);
    // A key that is no field name is refused before anything is recorded or sent.
    expect(
      await update(orch.apiUrl, { ...body, 'a field?': 1 }, { authorization: `Bearer ${operator}` }),
    ).toMatchObject({ status: 400, body: { err: { field: 'body' } } });
    expect(await rows()).toHaveLength(1);
  });

  it('on the loopback agent listener (no credentials): the listener is the actor', async () => {
    const before = (await rows()).length;
    const value = secret();
    expect((await update(orch.agentUrl, { id: txId, beneficiaryRef: value })).status).toBe(200);
    expect((await atNetwork()).beneficiaryRef).toBe(value);
    const added = (await rows()).slice(before);
    expect(added).toEqual([
      expect.objectContaining({
        actor: 'system:agent-listener',
        action: 'transaction.update.requested',
        subject: txId,
        details: expect.objectContaining({
          listener: 'agent',
          fields: ['beneficiaryRef'],
          principal: expect.objectContaining({ kind: 'system', subject: 'agent-listener' }),
        }),
      }),
    ]);
    expect(JSON.stringify(added)).not.toContain(value);
  });

  it('an update the network refuses keeps its row, and a second one says it was refused', async () => {
    const before = (await rows()).length;
    // Only the originator may set the transaction hash; the gateway is the beneficiary.
    const refused = await update(orch.apiUrl, { id: txId, txHash: '0xfeed' }, { authorization: `Bearer ${operator}` });
    expect(refused.status).toBe(403);
    expect((await rows()).slice(before).map((r) => [r.actor, r.action, r.details.fields, r.details.error])).toEqual([
      [`oidc:${operators.operator.subject}`, 'transaction.update.requested', ['txHash'], undefined],
      [
        `oidc:${operators.operator.subject}`,
        'transaction.update.refused',
        ['txHash'],
        { status: 403, type: 'ForbiddenError', networkStatus: 403 },
      ],
    ]);
  });

  it('an update the audit log cannot record answers 503 and is not sent, on both front doors', async () => {
    const before = await rows();
    const kept = (await atNetwork()).beneficiaryRef as string;
    await pool.query(
      `create function refuse_tx_updates() returns trigger language plpgsql as $$ begin raise exception 'no audit writes'; end $$`,
    );
    await pool.query(
      `create trigger refuse_tx_updates before insert on audit_log for each row when (new.chain = 'transaction') execute function refuse_tx_updates()`,
    );
    try {
      const api = await update(
        orch.apiUrl,
        { id: txId, beneficiaryRef: secret() },
        { authorization: `Bearer ${operator}` },
      );
      expect(api).toEqual({
        status: 503,
        body: {
          err: {
            name: 'AuditUnavailableError',
            code: 503,
            message: expect.stringMatching(/could not record this update, so it was not sent/),
          },
        },
      });
      expect((await update(orch.agentUrl, { id: txId, beneficiaryRef: secret() })).status).toBe(503);
    } finally {
      await pool.query('drop trigger refuse_tx_updates on audit_log');
      await pool.query('drop function refuse_tx_updates()');
    }
    expect(await rows()).toEqual(before);
    expect((await atNetwork()).beneficiaryRef).toBe(kept);
    expect(await runCli((p) => registerAuditCommands(p, { pool }), ['audit', 'verify'])).toMatch(
      /^audit chain intact/m,
    );
  });
});
