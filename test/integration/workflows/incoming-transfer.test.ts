import { randomBytes } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { IncomingTxSummary } from '../../../activities/incoming-transfers';
import type { PolicyDecision, TransferDecision } from '../../../policy/types';
import { describePrincipal } from '../../../lib/describe-principal';
import { systemPrincipal, type Principal } from '../../../lib/principal';
import { incomingTransfer, type IncomingTransferInput } from '../../../workflows/incoming-transfer';
import {
  decideUpdate,
  incomingStatusQuery,
  routeUpdate,
  transactionUpdatedSignal,
  type ScreeningOutcome,
} from '../../../workflows/incoming-transfer.messages';
import {
  callsOf,
  scheduledActivities,
  stubWorker,
  timersOf,
  workflowTestEnvironment,
  type HistoryTimer,
  type StubCall,
  type Stubs,
} from '../../harness/workflow-env';

/**
 * The incoming transfer's waits for a person, with stubbed activities: a screening hit holds the transfer for review,
 * the review deadline escalates it (and it keeps waiting), the decision answers the network; a transfer nobody's
 * registry owns waits to be routed, escalates, and is rejected at the network when nobody routes it.
 */
describe('incoming transfer workflow: review escalation and routing deadlines', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await workflowTestEnvironment();
  });
  afterAll(() => env?.teardown());

  const gateway = 'did:ethr:0x3333333333333333333333333333333333333333';
  const subsidiary = 'did:ethr:0x4444444444444444444444444444444444444444';
  const counterparty = 'did:ethr:0x5555555555555555555555555555555555555555';
  const REVIEW_MS = 2000;
  const officer: Principal = {
    kind: 'oidc',
    subject: 'user-42',
    name: 'Maya Compliance',
    roles: ['compliance'],
    credentialId: 'jti-1',
  };

  const input = (transactionId: string, over: Partial<IncomingTransferInput> = {}): IncomingTransferInput => ({
    transactionId,
    gatewayDid: gateway,
    subsidiaryDids: [subsidiary],
    routeDeadline: '1 hour',
    routeGiveUpAfter: '1 day',
    reviewDeadline: REVIEW_MS,
    pollInterval: '10 minutes',
    screeningThreshold: 0.9,
    ...over,
  });
  const tx = (id: string, over: Partial<IncomingTxSummary> = {}): IncomingTxSummary => ({
    id,
    status: 'SENT',
    asset: 'ETH',
    destination: '0xdestination',
    originatorVaspDid: counterparty,
    beneficiaryVaspDid: subsidiary,
    amount: '1',
    createdAt: '2026-11-25T10:00:00.000Z',
    ...over,
  });
  const hit: ScreeningOutcome = {
    screenedNames: 2,
    nameHits: [{ list: 'SDN', entNum: 7, matchedName: 'FICTIONAL PERSON', score: 0.97 }],
    addressHits: [],
  };

  /** The network side of a transfer addressed to a subsidiary, whose originator is a screening hit. */
  const flagged = (over: Stubs = {}): Stubs => ({
    getIncomingTransaction: async (id) => tx(id),
    confirmIncomingTransaction: async (id) => tx(id, { status: 'ACK' }),
    screenIncomingTransfer: async () => hit,
    acceptIncomingTransaction: async (id) => tx(id, { status: 'ACCEPTED' }),
    declineIncomingTransaction: async ({ transactionId }) => tx(transactionId, { status: 'DECLINED' }),
    recordAudit: async () => undefined,
    recordTransferView: async () => undefined,
    reportIncomingOutcome: async () => undefined,
    finishIncomingTransfer: async () => ({ viewWritten: true }),
    ...over,
  });
  /** The reports to the internal systems in order: the escalations' own, and the end's (incoming-lean-finish). */
  const outcomes = (calls: StubCall[]) =>
    calls.flatMap((c) => {
      if (c.name === 'reportIncomingOutcome') return [(c.args[0] as { outcome: string }).outcome];
      return c.name === 'finishIncomingTransfer' ? [(c.args[0] as { report: { outcome: string } }).report.outcome] : [];
    });
  /** The console's list entries in order: each step's, and the end's with its report (incoming-lean-finish). */
  const listWrites = (calls: StubCall[]) =>
    calls.flatMap((c) => {
      if (c.name === 'recordTransferView') return [c];
      return c.name === 'finishIncomingTransfer' ? [{ ...c, args: [(c.args[0] as { view: unknown }).view] }] : [];
    });
  const until = async (check: () => boolean) => {
    const deadline = Date.now() + 20_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('condition not met within 20 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('a hit not decided within the review deadline is escalated, keeps waiting, and the late decision is carried out', async () => {
    // Screening waits until the test has tried to decide too early, so that attempt surely finds no review.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      flagged({ screenIncomingTransfer: async () => released.then(() => hit) }),
    );
    const id = `tx-${randomBytes(4).toString('hex')}`;
    const decision = {
      decision: 'decline' as const,
      reason: 'confirmed match',
      actor: officer.name,
      principal: officer,
    };
    const { result, events, rejected, escalatedAt, decidedAt } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(incomingTransfer, {
        taskQueue,
        workflowId: `incoming-${id}`,
        args: [input(id)],
      });
      // No decision is taken before the transfer is under review.
      const rejected = await handle.executeUpdate(decideUpdate, { args: [decision] }).then(
        () => undefined,
        (e: Error) => e,
      );
      release();
      await until(() => outcomes(calls).includes('review-escalated'));
      const escalatedAt = Date.now();
      const waiting = await handle.query(incomingStatusQuery);
      expect(waiting).toMatchObject({ phase: 'awaiting-review', escalated: true });
      const decidedAt = Date.now();
      await handle.executeUpdate(decideUpdate, { args: [decision] });
      return {
        result: await handle.result(),
        events: (await handle.fetchHistory()).events ?? [],
        rejected,
        escalatedAt,
        decidedAt,
      };
    });

    expect(rejected).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((rejected as WorkflowUpdateFailedError).cause?.message).toMatch(/^transfer is not under review/);
    expect(result).toMatchObject({
      phase: 'completed',
      networkStatus: 'DECLINED',
      escalated: true,
      subsidiaryDid: subsidiary,
      routedBy: 'network',
    });
    expect(result.history.map((h) => h.event)).toEqual(
      expect.arrayContaining([
        'phase:awaiting-review',
        'review-escalated',
        'decision',
        'phase:deciding',
        'finished:declined',
      ]),
    );

    // One review timer of the configured length: it fired (the escalation), and the decision came after it.
    const timers = timersOf(events);
    expect(timers).toHaveLength(1);
    const [review] = timers as [HistoryTimer];
    expect(review.durationMs).toBe(REVIEW_MS);
    expect(review.firedAt! - review.startedAt).toBeGreaterThanOrEqual(REVIEW_MS - 5);
    const screened = callsOf(calls, 'screenIncomingTransfer')[0]!;
    expect(screened.args).toEqual([
      {
        transactionId: id,
        subsidiaryDid: subsidiary,
        gatewayDid: gateway,
        threshold: 0.9,
        // What the policy decides on: the transfer's metadata, never its personal data.
        transfer: {
          transferId: id,
          direction: 'incoming',
          vaspDid: subsidiary,
          counterpartyDid: counterparty,
          asset: 'ETH',
          amount: '1',
          createdAt: '2026-11-25T10:00:00.000Z',
        },
      },
    ]);
    expect(escalatedAt - screened.at).toBeGreaterThanOrEqual(REVIEW_MS - 50);

    // The escalation is told to the internal systems once; the hit and the escalation are audited under the screening
    // rule, the decision under who took it, and sent with them.
    expect(outcomes(calls)).toEqual(['review-escalated', 'declined']);
    expect(callsOf(calls, 'reportIncomingOutcome')[0]!.args[0]).toEqual({
      transactionId: id,
      outcome: 'review-escalated',
      networkStatus: 'ACK',
      subsidiaryDid: subsidiary,
    });
    const screening = systemPrincipal('screening');
    expect(callsOf(calls, 'recordAudit').map((c) => c.args[0])).toEqual([
      {
        actor: 'system:screening',
        action: 'incoming.screening.hit',
        subject: id,
        details: {
          screenedNames: 2,
          nameHits: 1,
          addressHits: 0,
          entries: [{ list: 'SDN', entNum: 7, score: 0.97 }],
          principal: screening,
        },
      },
      {
        actor: 'system:screening',
        action: 'incoming.review.escalated',
        subject: id,
        details: { waited: REVIEW_MS, principal: screening },
      },
      {
        actor: officer.name,
        action: 'incoming.decline',
        subject: id,
        details: { reason: 'confirmed match', nameHits: 1, addressHits: 0, principal: officer },
      },
    ]);
    const declined = callsOf(calls, 'declineIncomingTransaction');
    expect(declined.map((c) => c.args[0])).toEqual([
      { transactionId: id, reason: `confirmed match (declined by ${describePrincipal(officer)})` },
    ]);
    expect(declined[0]!.at).toBeGreaterThanOrEqual(decidedAt);
    expect(callsOf(calls, 'acceptIncomingTransaction')).toHaveLength(0);
    // Routed by the network itself: no redirect.
    expect(callsOf(calls, 'confirmIncomingTransaction').map((c) => c.args)).toEqual([[id]]);
  });

  it('a decision before the review deadline cancels the escalation', async () => {
    const { worker, taskQueue, calls } = await stubWorker(env, flagged());
    const id = `tx-${randomBytes(4).toString('hex')}`;
    const { result, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(incomingTransfer, {
        taskQueue,
        workflowId: `incoming-${id}`,
        args: [input(id, { reviewDeadline: '1 hour' })],
      });
      await until(() => callsOf(calls, 'screenIncomingTransfer').length > 0);
      // The update's validator refuses it until the workflow is under review: retry until it is.
      for (;;) {
        const r = await handle
          .executeUpdate(decideUpdate, {
            args: [{ decision: 'approve', reason: 'false positive', actor: officer.name, principal: officer }],
          })
          .then(
            () => true,
            () => false,
          );
        if (r) break;
        await new Promise((res) => setTimeout(res, 50));
      }
      return { result: await handle.result(), events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(result).toMatchObject({ phase: 'completed', networkStatus: 'ACCEPTED', escalated: false });
    expect(outcomes(calls)).toEqual(['accepted']);
    expect(callsOf(calls, 'acceptIncomingTransaction').map((c) => c.args)).toEqual([[id]]);
    expect(callsOf(calls, 'declineIncomingTransaction')).toHaveLength(0);
    const timers = timersOf(events);
    expect(timers.map((t) => [t.durationMs, t.cancelled, t.firedAt])).toEqual([[3_600_000, true, undefined]]);
  });

  it("on the way to the confirmation, the list entry and the routing's audit row are written beside the network steps, and awaited", async () => {
    // Each write holds until the network step after it has started: written one after the other, this would hang.
    const started = (name: Parameters<typeof callsOf>[1]) =>
      new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (callsOf(calls, name).length > 0) {
            clearInterval(check);
            resolve();
          }
        }, 5);
      });
    let auditDone = false;
    let viewsDone = 0;
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      flagged({
        getIncomingTransaction: async (id) => tx(id, { beneficiaryVaspDid: gateway }),
        findAddressOwner: async () => subsidiary,
        redirectIncomingTransaction: async ({ transactionId }) => tx(transactionId, { beneficiaryVaspDid: subsidiary }),
        screenIncomingTransfer: async () => ({ screenedNames: 2, nameHits: [], addressHits: [] }),
        recordAudit: async (entry) => {
          if ((entry as { action: string }).action === 'incoming.route.auto') {
            await started('redirectIncomingTransaction');
            auditDone = true;
          }
        },
        recordTransferView: async () => {
          await started(viewsDone === 0 ? 'findAddressOwner' : 'confirmIncomingTransaction');
          viewsDone++;
        },
        finishIncomingTransfer: async () => {
          viewsDone++;
          return { viewWritten: true };
        },
      }),
    );
    const id = `tx-${randomBytes(4).toString('hex')}`;
    const t0 = Date.now();
    const result = await worker.runUntil(
      env.client.workflow.execute(incomingTransfer, { taskQueue, workflowId: `incoming-${id}`, args: [input(id)] }),
    );
    // One after the other, the first list entry would wait out its 10 s activity timeout.
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(result).toMatchObject({
      phase: 'completed',
      subsidiaryDid: subsidiary,
      routedBy: 'registry',
      networkStatus: 'ACCEPTED',
    });
    expect(auditDone).toBe(true);
    // Screening (after the confirmation) starts only once the writes begun beside the network steps are done.
    const screenedAt = callsOf(calls, 'screenIncomingTransfer')[0]!.at;
    const audits = callsOf(calls, 'recordAudit').map((c) => (c.args[0] as { action: string }).action);
    expect(audits.slice(0, 2)).toEqual(['incoming.route.auto', 'incoming.approve']);
    // The list entry beside the registry lookup, and the last one at the end (incoming-lean-views).
    expect(viewsDone).toBe(2);
    expect(screenedAt).toBeGreaterThanOrEqual(callsOf(calls, 'confirmIncomingTransaction')[0]!.at);
  });

  it('a new run screens in a local activity (incoming-local-screening): no activity task, one workflow task fewer', async () => {
    const { worker, taskQueue } = await stubWorker(
      env,
      flagged({ screenIncomingTransfer: async () => ({ screenedNames: 2, nameHits: [], addressHits: [] }) }),
    );
    const id = `tx-${randomBytes(4).toString('hex')}`;
    const { result, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(incomingTransfer, {
        taskQueue,
        workflowId: `incoming-${id}`,
        args: [input(id)],
      });
      return { result: await handle.result(), events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(result).toMatchObject({ phase: 'completed', networkStatus: 'ACCEPTED' });
    // The end's report, with the list's last entry (incoming-lean-finish), is the only activity task; screening is a
    // local activity's marker in the first workflow task, which reads, confirms, screens and accepts; the second sees
    // the report done and completes.
    expect(scheduledActivities(events)).toEqual(['finishIncomingTransfer']);
    const localActivities = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    expect(localActivities.length).toBeGreaterThanOrEqual(5);
    expect(events.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(2);
    const patches = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch');
    expect(patches).toHaveLength(1);
  });

  it("the network's echo of the answer, arriving while the run decides, does not undo the run's steps (incoming-lean-finish)", async () => {
    // The network's webhook for the accept reaches the workflow while the workflow task that accepted is still open,
    // as in production. Were the run completed in that task, the server would refuse it, and the task's local
    // activities (read, confirm, screen, accept) would run again against a transfer already ACCEPTED.
    let accepted = false;
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      flagged({
        getIncomingTransaction: async (id) => tx(id, accepted ? { status: 'ACCEPTED' } : {}),
        screenIncomingTransfer: async () => ({ screenedNames: 2, nameHits: [], addressHits: [] }),
        acceptIncomingTransaction: async (id) => {
          accepted = true;
          await env.client.workflow.getHandle(`incoming-${id}`).signal(transactionUpdatedSignal, {
            status: 'ACCEPTED',
            beneficiaryVaspDid: subsidiary,
            source: 'webhook',
          });
          return tx(id, { status: 'ACCEPTED' });
        },
      }),
    );
    const id = `tx-${randomBytes(4).toString('hex')}`;
    const result = await worker.runUntil(
      env.client.workflow.execute(incomingTransfer, { taskQueue, workflowId: `incoming-${id}`, args: [input(id)] }),
    );
    expect(result.history.map((h) => h.event)).toContain('finished:accepted');
    expect(result).toMatchObject({ phase: 'completed', networkStatus: 'ACCEPTED', screening: { screenedNames: 2 } });
    expect(callsOf(calls, 'getIncomingTransaction')).toHaveLength(1);
    expect(callsOf(calls, 'acceptIncomingTransaction')).toHaveLength(1);
    expect(outcomes(calls)).toEqual(['accepted']);
  });

  it('an end whose list write failed writes the entry again on its own, and reports once (incoming-lean-finish)', async () => {
    const { worker, taskQueue, calls } = await stubWorker(
      env,
      flagged({
        screenIncomingTransfer: async () => ({ screenedNames: 2, nameHits: [], addressHits: [] }),
        finishIncomingTransfer: async () => ({ viewWritten: false }),
      }),
    );
    const id = `tx-${randomBytes(4).toString('hex')}`;
    const result = await worker.runUntil(
      env.client.workflow.execute(incomingTransfer, { taskQueue, workflowId: `incoming-${id}`, args: [input(id)] }),
    );
    expect(result).toMatchObject({ phase: 'completed', networkStatus: 'ACCEPTED' });
    expect(outcomes(calls)).toEqual(['accepted']);
    const last = callsOf(calls, 'recordTransferView').at(-1)!;
    expect(last.args[0]).toMatchObject({ phase: 'completed', final: true });
    expect(last.at).toBeGreaterThanOrEqual(callsOf(calls, 'finishIncomingTransfer')[0]!.at);
  });

  it('a new run started by a webhook says its first status with the asset, and NeedsReview once (incoming-lean-upserts)', async () => {
    const { worker, taskQueue } = await stubWorker(
      env,
      flagged({ screenIncomingTransfer: async () => ({ screenedNames: 2, nameHits: [], addressHits: [] }) }),
    );
    const id = `tx-${randomBytes(4).toString('hex')}`;
    const { result, events, attributes } = await worker.runUntil(async () => {
      // As the API starts it: the webhook's status by signal-with-start.
      const handle = await env.client.workflow.signalWithStart(incomingTransfer, {
        taskQueue,
        workflowId: `incoming-${id}`,
        args: [input(id)],
        signal: transactionUpdatedSignal,
        signalArgs: [{ status: 'SENT', beneficiaryVaspDid: subsidiary, source: 'webhook' }],
      });
      const result = await handle.result();
      return {
        result,
        events: (await handle.fetchHistory()).events ?? [],
        attributes: (await handle.describe()).typedSearchAttributes,
      };
    });
    expect(result).toMatchObject({ phase: 'completed', networkStatus: 'ACCEPTED' });
    const upserts = events
      .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields)
      .filter((fields) => fields !== undefined && fields !== null)
      .map((fields) => Object.keys(fields).sort());
    // The patch's own change version, then: the signal's SENT with the asset and NeedsReview in one upsert, the
    // subsidiary, ACK, ACCEPTED. NeedsReview is false from the start and not said again at the end.
    expect(upserts).toEqual([
      ['TemporalChangeVersion'],
      ['Asset', 'NeedsReview', 'TransferStatus'],
      ['SubsidiaryVaspDid'],
      ['TransferStatus'],
      ['TransferStatus'],
    ]);
    expect(Object.fromEntries(attributes.getAll().map((a) => [a.key.name, a.value]))).toMatchObject({
      TransferStatus: 'ACCEPTED',
      NeedsReview: false,
      Asset: 'ETH',
      SubsidiaryVaspDid: subsidiary,
    });
  });

  describe("the console's list (incoming-lean-views): written when the transfer appears, when it waits, and at the end", () => {
    type ViewWrite = { phase: string; subsidiaryDid?: string; needsReview: boolean; needsRouting: boolean };
    const views = (calls: StubCall[]) =>
      listWrites(calls).map((c) => {
        const { phase, subsidiaryDid, needsReview, needsRouting } = c.args[0] as ViewWrite;
        return { phase, subsidiaryDid, needsReview, needsRouting };
      });
    const clear: ScreeningOutcome = { screenedNames: 2, nameHits: [], addressHits: [] };
    /** Left at the gateway by the network: routed by the registry's `owner`, or by a person when it has none. */
    const atGateway = (owner: string | null): Stubs => ({
      getIncomingTransaction: async (id) => tx(id, { beneficiaryVaspDid: gateway }),
      findAddressOwner: async () => owner,
      redirectIncomingTransaction: async ({ transactionId }) => tx(transactionId),
    });
    const waitForPhase = async (
      handle: { query: (q: typeof incomingStatusQuery) => Promise<{ phase: string }> },
      phase: string,
    ) => {
      while ((await handle.query(incomingStatusQuery)).phase !== phase) await new Promise((r) => setTimeout(r, 20));
    };

    it('routed by the registry and accepted without a person: two writes, none for the steps between', async () => {
      const { worker, taskQueue, calls } = await stubWorker(
        env,
        flagged({ ...atGateway(subsidiary), screenIncomingTransfer: async () => clear }),
      );
      const id = `tx-${randomBytes(4).toString('hex')}`;
      const result = await worker.runUntil(
        env.client.workflow.execute(incomingTransfer, { taskQueue, workflowId: `incoming-${id}`, args: [input(id)] }),
      );
      expect(result).toMatchObject({ phase: 'completed', networkStatus: 'ACCEPTED', routedBy: 'registry' });
      expect(views(calls)).toEqual([
        { phase: 'received', subsidiaryDid: undefined, needsReview: false, needsRouting: false },
        { phase: 'completed', subsidiaryDid: subsidiary, needsReview: false, needsRouting: false },
      ]);
    });

    it('waiting for the ACK is written before the wait', async () => {
      const { worker, taskQueue, calls } = await stubWorker(
        env,
        flagged({
          confirmIncomingTransaction: async (id) => tx(id, { status: 'SENT' }),
          screenIncomingTransfer: async () => clear,
        }),
      );
      const id = `tx-${randomBytes(4).toString('hex')}`;
      const result = await worker.runUntil(async () => {
        const handle = await env.client.workflow.start(incomingTransfer, {
          taskQueue,
          workflowId: `incoming-${id}`,
          args: [input(id)],
        });
        await waitForPhase(handle, 'awaiting-ack');
        // The list says so while the transfer waits, before the network's ACK arrives.
        await until(() => views(calls).some((v) => v.phase === 'awaiting-ack'));
        await handle.signal(transactionUpdatedSignal, { status: 'ACK', source: 'webhook' });
        return handle.result();
      });
      expect(result).toMatchObject({ phase: 'completed', networkStatus: 'ACCEPTED' });
      expect(views(calls).map((v) => v.phase)).toEqual(['received', 'awaiting-ack', 'completed']);
    });

    it("a person's route and a person's decision take the transfer out of their queue before the network's answer", async () => {
      const { worker, taskQueue, calls } = await stubWorker(
        env,
        flagged({ ...atGateway(null), recordRoutedAddress: async () => 'recorded' }),
      );
      const id = `tx-${randomBytes(4).toString('hex')}`;
      const result = await worker.runUntil(async () => {
        const handle = await env.client.workflow.start(incomingTransfer, {
          taskQueue,
          workflowId: `incoming-${id}`,
          args: [input(id, { reviewDeadline: '1 hour' })],
        });
        await waitForPhase(handle, 'awaiting-route');
        await handle.executeUpdate(routeUpdate, {
          args: [{ subsidiaryDid: subsidiary, reason: 'our customer', actor: officer.name, principal: officer }],
        });
        await waitForPhase(handle, 'awaiting-review');
        await handle.executeUpdate(decideUpdate, {
          args: [{ decision: 'approve', reason: 'checked', actor: officer.name, principal: officer }],
        });
        return handle.result();
      });
      expect(result).toMatchObject({ phase: 'completed', networkStatus: 'ACCEPTED', routedBy: 'person' });
      expect(views(calls)).toEqual([
        { phase: 'received', subsidiaryDid: undefined, needsReview: false, needsRouting: false },
        { phase: 'awaiting-route', subsidiaryDid: undefined, needsReview: false, needsRouting: true },
        { phase: 'routing', subsidiaryDid: subsidiary, needsReview: false, needsRouting: false },
        { phase: 'awaiting-review', subsidiaryDid: subsidiary, needsReview: true, needsRouting: false },
        { phase: 'deciding', subsidiaryDid: subsidiary, needsReview: false, needsRouting: false },
        { phase: 'completed', subsidiaryDid: subsidiary, needsReview: false, needsRouting: false },
      ]);
      // Out of the queue before the answer: the 'deciding' entry is written before the network is told.
      const deciding = listWrites(calls)[4]!;
      expect(deciding.at).toBeLessThanOrEqual(callsOf(calls, 'acceptIncomingTransaction')[0]!.at);
    });
  });

  it('a transfer nobody owns waits to be routed, escalates at the route deadline, and is rejected when nobody routes it', async () => {
    const stubs = flagged({
      getIncomingTransaction: async (id) => tx(id, { beneficiaryVaspDid: gateway }),
      findAddressOwner: async () => null,
      rejectIncomingTransaction: async ({ transactionId }) => tx(transactionId, { status: 'REJECTED' }),
    });
    const { worker, taskQueue, calls } = await stubWorker(env, stubs);
    const id = `tx-${randomBytes(4).toString('hex')}`;
    const { result, events } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(incomingTransfer, {
        taskQueue,
        workflowId: `incoming-${id}`,
        args: [input(id, { routeDeadline: 1000, routeGiveUpAfter: 1500 })],
      });
      return { result: await handle.result(), events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(result).toMatchObject({ phase: 'rejected', networkStatus: 'REJECTED', escalated: true });
    expect(callsOf(calls, 'findAddressOwner').map((c) => c.args)).toEqual([
      [{ asset: 'ETH', address: '0xdestination', subsidiaryDids: [subsidiary] }],
    ]);
    expect(outcomes(calls)).toEqual(['route-escalated', 'rejected']);
    const rejectCalls = callsOf(calls, 'rejectIncomingTransaction');
    expect(rejectCalls.map((c) => c.args[0])).toEqual([
      { transactionId: id, reason: 'destination address is not owned by any VASP of the group' },
    ]);
    const timers = timersOf(events);
    expect(timers.map((t) => t.durationMs)).toEqual([1000, 1500]);
    expect(timers.every((t) => t.firedAt !== undefined && t.firedAt - t.startedAt >= t.durationMs - 5)).toBe(true);
    // Rejected only after both waits: never routed, never screened.
    expect(rejectCalls[0]!.at - callsOf(calls, 'findAddressOwner')[0]!.at).toBeGreaterThanOrEqual(2500 - 50);
    expect(callsOf(calls, 'redirectIncomingTransaction')).toHaveLength(0);
    expect(callsOf(calls, 'screenIncomingTransfer')).toHaveLength(0);
    // The escalation and the rejection are automatic decisions, audited under the routing rule.
    const routing = systemPrincipal('routing');
    expect(callsOf(calls, 'recordAudit').map((c) => c.args[0])).toEqual([
      {
        actor: 'system:routing',
        action: 'incoming.route.escalated',
        subject: id,
        details: { waited: 1000, principal: routing },
      },
      {
        actor: 'system:routing',
        action: 'incoming.reject',
        subject: id,
        details: {
          reason: 'destination address is not owned by any VASP of the group',
          waited: 1500,
          principal: routing,
        },
      },
    ]);
    expect(callsOf(calls, 'recordAudit')[1]!.at).toBeLessThanOrEqual(rejectCalls[0]!.at);
  });

  describe("the policy's decision after screening", () => {
    const clear: ScreeningOutcome = { screenedNames: 1, nameHits: [], addressHits: [] };
    const policyRef = { vaspDid: gateway, versionId: 'v-1', version: 3, contentHash: 'abc' };
    const decided = (action: PolicyDecision['action'], order: number): TransferDecision => ({
      decision: {
        action,
        policy: policyRef,
        rule: { order, actionRule: action, ruleCheck: 'REVIEWED_VASP_LIST', ruleValue: 'BLOCKED' },
        reason: `rule ${order}: REVIEWED_VASP_LIST BLOCKED matched BLOCKED → ${action}`,
      },
      facts: {
        direction: 'incoming',
        vaspDid: subsidiary,
        counterpartyDid: counterparty,
        counterpartyReview: 'BLOCKED',
        asset: 'ETH',
        amount: '1',
        createdAt: '2026-11-25T10:00:00.000Z',
        sanctionsHit: false,
      },
    });
    /** Runs one transfer; `personApproves`: approves it once it waits for a person. */
    const run = async (stubs: Stubs, personApproves = false) => {
      const { worker, taskQueue, calls } = await stubWorker(env, flagged(stubs));
      const id = `tx-${randomBytes(4).toString('hex')}`;
      const result = await worker.runUntil(async () => {
        const handle = await env.client.workflow.start(incomingTransfer, {
          taskQueue,
          workflowId: `incoming-${id}`,
          args: [input(id, { reviewDeadline: '1 hour' })],
        });
        if (personApproves) {
          let phase = '';
          while (phase !== 'awaiting-review') {
            phase = (await handle.query(incomingStatusQuery)).phase;
            await new Promise((r) => setTimeout(r, 20));
          }
          await handle.executeUpdate(decideUpdate, {
            args: [{ decision: 'approve', reason: 'checked', actor: officer.name, principal: officer }],
          });
        }
        return handle.result();
      });
      return { id, result, calls };
    };

    it('REJECT declines at once with a generic reason; the rule and the facts are in the audit row only', async () => {
      const { id, result, calls } = await run({
        screenIncomingTransfer: async () => ({ ...clear, policy: decided('REJECT', 10) }),
      });
      expect(result).toMatchObject({ phase: 'completed', networkStatus: 'DECLINED', policy: { action: 'REJECT' } });
      const declined = callsOf(calls, 'declineIncomingTransaction')[0]!.args[0] as { reason: string };
      expect(declined.reason).not.toMatch(/REVIEWED_VASP_LIST|rule/);
      expect(declined.reason).toContain('declined by policy');
      const audit = callsOf(calls, 'recordAudit').map(
        (c) => c.args[0] as { action: string; actor: string; details: Record<string, unknown> },
      );
      expect(audit).toEqual([
        expect.objectContaining({
          actor: 'system:policy',
          action: 'incoming.decline',
          subject: id,
          details: expect.objectContaining({
            action: 'REJECT',
            policy: policyRef,
            rule: expect.objectContaining({ order: 10 }),
            facts: expect.objectContaining({ counterpartyReview: 'BLOCKED' }),
          }),
        }),
      ]);
      expect(callsOf(calls, 'acceptIncomingTransaction')).toHaveLength(0);
    });

    it('NOT_READY tells the network, then waits for a person, whose approval accepts', async () => {
      const { result, calls } = await run(
        {
          screenIncomingTransfer: async () => ({ ...clear, policy: decided('NOT_READY', 5) }),
          markIncomingNotReady: async (id: string) => tx(id, { status: 'NOT_READY' }),
        },
        true,
      );
      expect(callsOf(calls, 'markIncomingNotReady')).toHaveLength(1);
      expect(result).toMatchObject({ phase: 'completed', networkStatus: 'ACCEPTED', policy: { action: 'NOT_READY' } });
      expect(result.history.map((h) => h.event)).toEqual(
        expect.arrayContaining(['policy', 'phase:awaiting-review', 'decision', 'finished:accepted']),
      );
      expect(callsOf(calls, 'recordAudit').map((c) => (c.args[0] as { action: string }).action)).toEqual([
        'incoming.not-ready',
        'incoming.approve',
      ]);
    });
  });
});
