import { randomBytes } from 'node:crypto';
import { createDidKeyRecord } from '../../lib/crypto';
import type { Role } from '../../lib/principal';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import {
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('key rotations and reconciliations are in the audit log before they start, and do not start unrecorded (issue 25, item 7d)', () => {
  const g = groupSeed();
  const subAKey = createDidKeyRecord(randomBytes(32));
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  const enc = encodeURIComponent;

  const api = async (method: string, path: string, body: unknown, role: Role = 'operator') => {
    const r = await fetch(`${orch.apiUrl}${path}`, {
      method,
      headers: orch.headers(role, { 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  /** The workflow's status, or undefined when no such workflow was ever started. */
  const workflowStatus = (workflowId: string) =>
    orch.client.workflow
      .getHandle(workflowId)
      .describe()
      .then(
        (d) => ({ status: d.status.name, startTime: d.startTime }),
        () => undefined,
      );
  /** Makes the database refuse audit rows of one action about one subject, as a full disk or a lost grant would. */
  const refuseAudit = async (action: string, subject: string) => {
    const name = `refuse_${randomBytes(4).toString('hex')}`;
    await orch.pool.query(
      `create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'no audit writes'; end $$`,
    );
    await orch.pool.query(
      `create trigger ${name} before insert on audit_log for each row when (new.action = '${action}' and new.subject = '${subject}') execute function ${name}()`,
    );
    return async () => {
      await orch.pool.query(`drop trigger ${name} on audit_log`);
      await orch.pool.query(`drop function ${name}()`);
    };
  };
  const requested = async (action: string, subject: string) =>
    (
      await orch.pool.query('select at, details from audit_log where action = $1 and subject = $2 order by seq', [
        action,
        subject,
      ])
    ).rows;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      agentKeys: JSON.stringify([{ vaspDID: g.subA, privateKeyHex: subAKey.keys[0].privateKeyHex }]),
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  it('a key rotation the audit log cannot record answers 503 and starts no workflow; recorded, its row precedes the run', async () => {
    const workflowId = workflowIds.keyRotation(g.subA);
    const allow = await refuseAudit('key.rotation.requested', g.subA);
    try {
      const refused = await api('POST', `/v1/vasps/${enc(g.subA)}/keys/rotate`, { reason: 'scheduled rotation' });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatchObject({
        type: 'AuditUnavailableError',
        action: 'key.rotation.requested',
        message: expect.stringMatching(/nothing was started/),
      });
      expect(await workflowStatus(workflowId)).toBeUndefined();
    } finally {
      await allow();
    }
    const started = await api('POST', `/v1/vasps/${enc(g.subA)}/keys/rotate`, { reason: 'scheduled rotation' });
    expect(started.status).toBe(202);
    const rows = await requested('key.rotation.requested', g.subA);
    expect(rows).toHaveLength(1);
    expect(rows[0].details).toMatchObject({
      reason: 'scheduled rotation',
      workflowId,
      principal: expect.objectContaining({ kind: 'api-key' }),
    });
    const run = await workflowStatus(workflowId);
    expect(run).toBeDefined();
    expect(rows[0].at.getTime()).toBeLessThanOrEqual(run!.startTime.getTime());
  });

  it('a reconciliation the audit log cannot record answers 503 and starts no run; recorded, its row precedes the run', async () => {
    const workflowId = workflowIds.addressBookReconcile(g.subB);
    const allow = await refuseAudit('address-book.reconcile.requested', g.subB);
    try {
      const refused = await api('POST', `/v1/address-book/${enc(g.subB)}/reconcile`, {});
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatchObject({
        type: 'AuditUnavailableError',
        action: 'address-book.reconcile.requested',
      });
      expect(await workflowStatus(workflowId)).toBeUndefined();
    } finally {
      await allow();
    }
    const started = await api('POST', `/v1/address-book/${enc(g.subB)}/reconcile`, {});
    expect(started.status).toBe(202);
    const rows = await requested('address-book.reconcile.requested', g.subB);
    expect(rows).toHaveLength(1);
    expect(rows[0].details).toMatchObject({ trigger: 'api', mode: 'auto', workflowId: started.body.workflowId });
    const run = await workflowStatus(workflowId);
    expect(run).toBeDefined();
    expect(rows[0].at.getTime()).toBeLessThanOrEqual(run!.startTime.getTime());
  });
});
