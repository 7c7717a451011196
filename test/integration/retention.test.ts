import { randomBytes } from 'node:crypto';
import { ensureRetentionSchedule } from '../../client/retention-schedule';
import { removeSchedule } from '../../client/schedules';
import { GoneError } from '../../lib/errors';
import { loadRetentionConfig } from '../../retention/config';
import type { OutgoingRequest } from '../../outgoing/request';
import { retentionSweep } from '../../workflows';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { eventually, randomDid, startOrchestrator, type RunningOrchestrator } from '../harness/platform';

// The sweep needs no network: nothing answers here, and nothing should call it.
const noNetwork = {
  authUrl: 'http://127.0.0.1:9',
  audience: 'http://127.0.0.1:9',
  baseUrl: 'http://127.0.0.1:9',
  audiencePii: 'http://127.0.0.1:9/pii',
  baseUrlPii: 'http://127.0.0.1:9/pii',
  clientId: 'unused',
  clientSecret: 'unused',
};
const DAYS = { webhookDays: 30, transferPiiDays: 1825 };

describe('data retention: nightly sweep of webhook ids and transfer personal data', () => {
  const tag = randomBytes(6).toString('hex');
  const OLD_WEBHOOKS = 5_003; // more than one batch of 5,000
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    orch = await startOrchestrator(noNetwork);
  });
  afterAll(async () => {
    await orch?.close();
  });

  const request = (name: string): OutgoingRequest => ({
    source: 'api',
    hybrid: false,
    body: {
      originatorVASPdid: randomDid(),
      originator: {
        originatorPersons: [{ naturalPerson: { name: [{ nameIdentifier: [{ primaryIdentifier: name }] }] } }],
      },
    } as unknown as OutgoingRequest['body'],
  });
  const sweep = (id: string) =>
    orch.client.workflow.execute(retentionSweep, {
      taskQueue: orch.taskQueue,
      workflowId: `retention-test-${tag}-${id}`,
      args: [DAYS],
    });
  const webhookIds = async () =>
    (
      await orch.pool.query<{ webhook_id: string }>(
        'select webhook_id from received_webhooks where webhook_id like $1 order by webhook_id',
        [`${tag}-%`],
      )
    ).rows.map((r) => r.webhook_id);
  const transferRows = async () =>
    (
      await orch.pool.query(
        'select id, wrapped_data_key, sealed_request, pii_erased_at, transaction_id, originator_vasp_did, updated_at from outgoing_transfers where id like $1 order by id',
        [`${tag}-%`],
      )
    ).rows;

  it('deletes expired webhook ids, erases old sealed requests (reading one is a GoneError), keeps the recent, and is idempotent', async () => {
    await orch.pool.query(
      `insert into received_webhooks (webhook_id, received_at, endpoint, outcome)
       select $1 || '-old-' || lpad(i::text, 5, '0'), now() - interval '31 days' - i * interval '1 second', 'test', 'signalled'
       from generate_series(1, $2) i`,
      [tag, OLD_WEBHOOKS],
    );
    await orch.pool.query(
      `insert into received_webhooks (webhook_id, received_at, endpoint, outcome) values
         ($1 || '-recent-1', now(), 'test', 'signalled'), ($1 || '-recent-2', now() - interval '29 days', 'test', 'late')`,
      [tag],
    );
    const store = orch.transfers.store;
    const old = request('Old Person');
    const recent = request('Recent Person');
    await store.put(`${tag}-old`, old);
    await store.put(`${tag}-recent`, recent);
    await store.setTransactionId(`${tag}-old`, `tx-${tag}`);
    await orch.pool.query(`update outgoing_transfers set created_at = now() - interval '1826 days' where id = $1`, [
      `${tag}-old`,
    ]);
    await orch.pool.query(`update outgoing_transfers set created_at = now() - interval '1824 days' where id = $1`, [
      `${tag}-recent`,
    ]);

    const first = await sweep('1');
    // The database is shared with suites running alongside; none of them writes rows this old, but count ours only.
    expect(first.webhooksDeleted).toBeGreaterThanOrEqual(OLD_WEBHOOKS);
    expect(first.transferRequestsErased).toBeGreaterThanOrEqual(1);
    expect(await webhookIds()).toEqual([`${tag}-recent-1`, `${tag}-recent-2`]);

    const rows = await transferRows();
    expect(rows).toEqual([
      expect.objectContaining({
        id: `${tag}-old`,
        wrapped_data_key: null,
        sealed_request: null,
        pii_erased_at: expect.any(Date),
        transaction_id: `tx-${tag}`,
        originator_vasp_did: old.body.originatorVASPdid,
      }),
      expect.objectContaining({
        id: `${tag}-recent`,
        pii_erased_at: null,
        wrapped_data_key: expect.any(Buffer),
        sealed_request: expect.any(Buffer),
      }),
    ]);
    await expect(store.request(`${tag}-old`)).rejects.toBeInstanceOf(GoneError);
    await expect(store.request(`${tag}-old`)).rejects.toThrow(/erased at the end of its retention period/);
    expect(await store.get(`${tag}-old`)).toMatchObject({ id: `${tag}-old`, transactionId: `tx-${tag}` });
    expect(await store.request(`${tag}-recent`)).toEqual(recent);

    const audit = await orch.pool.query(
      `select actor, details from audit_log where action = 'retention.sweep' and details->>'workflowId' = $1`,
      [`retention-test-${tag}-1`],
    );
    expect(audit.rows).toEqual([
      { actor: 'system:retention-sweep', details: expect.objectContaining({ ...first, ...DAYS }) },
    ]);
    expect(JSON.stringify(audit.rows)).not.toMatch(/Old Person/);
    // The erasure itself is audited with its batch, naming the transfers.
    const erased = await orch.pool.query(
      `select actor, details from audit_log where action = 'retention.erase' and details->'transferIds' ? $1`,
      [`${tag}-old`],
    );
    expect(erased.rows).toEqual([
      {
        actor: 'system:retention-sweep',
        details: expect.objectContaining({
          transferPiiDays: DAYS.transferPiiDays,
          workflowId: `retention-test-${tag}-1`,
        }),
      },
    ]);
    expect(JSON.stringify(erased.rows)).not.toMatch(/Old Person/);

    const second = await sweep('2');
    expect(second).toMatchObject({ webhooksDeleted: 0, transferRequestsErased: 0 });
    expect(await webhookIds()).toEqual([`${tag}-recent-1`, `${tag}-recent-2`]);
    expect(await transferRows()).toEqual(rows);
  });

  it('ensures one nightly schedule idempotently, its run sweeps with the configured periods, and off removes it', async () => {
    const temporal = { address: '', namespace: 'default', taskQueue: orch.taskQueue, uiPort: 0 };
    const config = {
      retention: loadRetentionConfig({ RETENTION_WEBHOOK_DAYS: '45', RETENTION_TIMEZONE: 'Europe/Zurich' }),
      temporal,
    };
    await removeSchedule(orch.client, workflowIds.retentionSchedule);
    try {
      expect(await ensureRetentionSchedule(orch.client, config)).toBe('created');
      expect(await ensureRetentionSchedule(orch.client, config)).toBe('updated');
      const handle = orch.client.schedule.getHandle(workflowIds.retentionSchedule);
      const described = await handle.describe();
      expect(described.spec.timezone).toBe('Europe/Zurich');
      expect(described.policies.overlap).toBe('SKIP');
      expect(described.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'retentionSweep',
        workflowId: workflowIds.scheduledRetentionSweep,
        args: [{ webhookDays: 45, transferPiiDays: 1825 }],
      });

      await handle.trigger();
      const started = await eventually(
        async () => (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId,
        20_000,
        200,
      );
      expect(started.startsWith(workflowIds.scheduledRetentionSweep)).toBe(true);
      expect(await orch.client.workflow.getHandle(started).result()).toMatchObject({
        webhooksDeleted: expect.any(Number),
        transferRequestsErased: expect.any(Number),
      });
    } finally {
      const off = { retention: loadRetentionConfig({ RETENTION_CRON: 'off' }), temporal };
      expect(await ensureRetentionSchedule(orch.client, off)).toBe('deleted');
      expect(await ensureRetentionSchedule(orch.client, off)).toBe('absent');
    }
  });
});
