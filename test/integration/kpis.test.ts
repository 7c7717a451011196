/**
 * The compliance KPIs and the projection's metrics from 10 scripted transfers with known outcomes. The rows are written
 * through the projection's own store (writeTransferViewUpdate, what the workflows' recordTransferView activity calls),
 * step by step as a workflow would, rather than driving 10 transfers end to end: the KPIs read only the projection,
 * and the sequence of writes is what sets answered_at and moves the counters.
 */
import { registry, metrics } from '../../lib/metrics/registry';
import { startMetricsListener, type MetricsListener } from '../../lib/metrics/server';
import { writeTransferViewUpdate } from '../../transfer-view/store';
import type { TransferViewUpdate } from '../../transfer-view/types';
import {
  groupSeed,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('KPIs and metrics from the transfer projection (issue 24)', () => {
  const g = groupSeed();
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let listener: MetricsListener;

  beforeAll(async () => {
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
    });
    listener = await startMetricsListener(registry, '127.0.0.1', 0);
  });
  afterAll(async () => {
    await listener?.close();
    await orch?.close();
    await sb?.close();
  });

  const scrape = async () => (await fetch(`http://127.0.0.1:${listener.port}/metrics`)).text();
  const sample = (text: string, name: string, labels: Record<string, string>) => {
    const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  // A unique window: nothing else in the shared database is created then.
  const day1 = new Date(Date.UTC(2001, 0, 1) + Math.floor(Math.random() * 1000) * 3 * 86_400_000);
  const day2 = new Date(day1.getTime() + 86_400_000);

  /** One transfer's successive projection entries: each step a status (and what else changed), written in order, twice. */
  async function script(
    n: number,
    base: Partial<TransferViewUpdate> & { direction: 'incoming' | 'outgoing'; createdAt: string },
    steps: Partial<TransferViewUpdate>[],
  ) {
    let version = 0;
    for (const step of steps) {
      version += 1;
      const u: TransferViewUpdate = {
        workflowId: `kpi-${day1.getTime()}-${n}`,
        id: `kpi-${n}`,
        status: 'RECEIVED',
        final: false,
        needsReview: false,
        needsRouting: false,
        escalated: false,
        subsidiaryDid: g.subA,
        asset: 'ETH',
        version,
        ...base,
        ...step,
      };
      await writeTransferViewUpdate(orch.pool, u);
      // A retried write (same version) changes nothing and counts nothing.
      await writeTransferViewUpdate(orch.pool, u);
    }
  }

  it('10 transfers with known outcomes give exactly the expected KPIs, and the counters moved by as much', async () => {
    const before = await scrape();
    const out = (at: Date) => ({ direction: 'outgoing' as const, createdAt: at.toISOString() });
    const cp = 'did:ethr:0x00000000000000000000000000000000000000c1';
    const sys = { decidedBy: 'system' as const, decisionAction: 'APPROVE' };
    const sent = { transactionId: 'tx', counterpartyDid: cp, status: 'SENT' };
    // 1, 2: the policy approves, the counterparty accepts.
    for (const n of [1, 2]) {
      await script(n, out(day1), [
        { status: 'PREPARED', ...sys },
        { ...sent, ...sys },
        { ...sent, ...sys, status: 'ACCEPTED', final: true },
      ]);
    }
    // 3: approved, declined by the counterparty (a BTC transfer).
    await script(3, { ...out(day1), asset: 'BTC' }, [
      { status: 'PREPARED', ...sys },
      { ...sent, ...sys },
      { ...sent, ...sys, status: 'DECLINED' },
    ]);
    // 4: approved, to an unknown VASP, rejected.
    await script(4, out(day1), [
      { status: 'PREPARED', ...sys },
      { transactionId: 'tx', status: 'SENT', ...sys },
      { transactionId: 'tx', status: 'REJECTED', ...sys },
    ]);
    // 5: approved, sent, never answered.
    await script(5, out(day1), [
      { status: 'PREPARED', ...sys },
      { ...sent, ...sys },
    ]);
    // 6: held for a person, still waiting.
    await script(6, out(day2), [{ status: 'HELD', needsReview: true, counterpartyDid: cp }]);
    // 7: held, refused by a person.
    await script(7, out(day2), [
      { status: 'HELD', needsReview: true, counterpartyDid: cp },
      { status: 'REFUSED', counterpartyDid: cp, decidedBy: 'person', decisionAction: 'refuse', final: true },
    ]);
    // 8: held, released by a person, accepted.
    const person = { decidedBy: 'person' as const, decisionAction: 'release' };
    await script(8, out(day2), [
      { status: 'HELD', needsReview: true, counterpartyDid: cp },
      { ...sent, ...person },
      { ...sent, ...person, status: 'ACCEPTED' },
    ]);
    // 9: incoming, approved by screening, accepted by us.
    const inc = { direction: 'incoming' as const, createdAt: day2.toISOString() };
    await script(9, inc, [
      { transactionId: 'tx', counterpartyDid: cp, status: 'SENT' },
      { transactionId: 'tx', counterpartyDid: cp, status: 'ACCEPTED', decidedBy: 'system', decisionAction: 'approve' },
    ]);
    // 10: incoming from an unknown VASP, waiting for a review.
    await script(10, inc, [{ transactionId: 'tx', status: 'SENT', needsReview: true }]);

    const q = new URLSearchParams({
      from: day1.toISOString(),
      to: new Date(day2.getTime() + 86_400_000).toISOString(),
      subsidiary: g.subA,
    });
    const r = await fetch(`${orch.apiUrl}/v1/kpis?${q}`, { headers: orch.headers('viewer') });
    expect(r.status).toBe(200);
    const k = (await r.json()) as Json;
    expect(k.counts).toEqual({ total: 10, sent: 8, answered: 6, accepted: 4, identified: 8, decided: 8, automated: 6 });
    expect(k.responseRate).toBe(0.75);
    expect(k.successRate).toBe(0.4);
    expect(k.identificationRate).toBe(0.8);
    expect(k.automationRate).toBe(0.75);
    expect(k.byStatus).toEqual({ ACCEPTED: 4, DECLINED: 1, REJECTED: 1, SENT: 2, HELD: 1, REFUSED: 1 });
    expect(k.byType).toEqual({ ETH: 9, BTC: 1 });
    expect(k.answerSeconds.median).toBeGreaterThan(0);
    expect(k.answerSeconds.p95).toBeGreaterThanOrEqual(k.answerSeconds.median);
    expect(k.series.map((s: Json) => [s.day, s.total, s.automated])).toEqual([
      [day1.toISOString().slice(0, 10), 5, 5],
      [day2.toISOString().slice(0, 10), 5, 1],
    ]);
    // One direction only.
    const incoming = (await (
      await fetch(`${orch.apiUrl}/v1/kpis?${q}&direction=incoming`, { headers: orch.headers('viewer') })
    ).json()) as Json;
    expect(incoming.counts).toEqual({
      total: 2,
      sent: 2,
      answered: 1,
      accepted: 1,
      identified: 1,
      decided: 1,
      automated: 1,
    });
    // A bad parameter names itself.
    const bad = await fetch(`${orch.apiUrl}/v1/kpis?from=yesterday`, { headers: orch.headers('viewer') });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('from');

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    const sub = { subsidiary: g.subA };
    expect(moved('travel_rule_transfers_total', { ...sub, direction: 'outgoing', status: 'ACCEPTED' })).toBe(3);
    expect(moved('travel_rule_transfers_total', { ...sub, direction: 'outgoing', status: 'SENT' })).toBe(6);
    expect(moved('travel_rule_transfers_total', { ...sub, direction: 'outgoing', status: 'HELD' })).toBe(3);
    expect(moved('travel_rule_transfers_total', { ...sub, direction: 'incoming', status: 'ACCEPTED' })).toBe(1);
    expect(moved('travel_rule_automatic_decisions_total', { direction: 'outgoing', action: 'APPROVE' })).toBe(5);
    expect(moved('travel_rule_automatic_decisions_total', { direction: 'incoming', action: 'approve' })).toBe(1);
    expect(moved('travel_rule_counterparty_answer_seconds_count', sub)).toBe(5);
    // The review queue at the scrape: 6 and 10 wait (and whatever else the shared database holds).
    metrics.reviewQueueLength.set(0);
    expect(after).toMatch(/travel_rule_review_queue_length \d+/);
    // No counterparty DID in any label.
    expect(after).not.toContain(cp);
  });
});
