import {
  ApplicationFailure,
  condition,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import type { Activities } from '../activities';
import { Asset, NeedsReview, SubsidiaryVaspDid, TransferStatus } from '../lib/temporal/search-attributes';
import { incomingViewUpdate, type IncomingFacts } from '../transfer-view/status';
import { describePrincipal } from '../lib/describe-principal';
import { systemPrincipal } from '../lib/principal';
import { ACKNOWLEDGED_NETWORK_STATUSES, FINAL_NETWORK_STATUSES, incomingStatusRank } from '../lib/network-status';
import {
  decideUpdate,
  incomingStatusQuery,
  routeUpdate,
  transactionUpdatedSignal,
  type DecisionRequest,
  type IncomingPhase,
  type IncomingStatus,
  type RouteRequest,
} from './incoming-transfer.messages';

/**
 * The short, idempotent steps (one HTTP call or one query) run as local activities: no task-queue round trip each,
 * which is most of the webhook-to-confirmed latency. Screening (decryption, list lookups) and the callback to internal
 * systems stay ordinary activities, visible and retried on their own.
 */
// No attempt limit on what waits for the network: the counterparty waits for our answer however long the network
// fails, so a transient failure (5xx, 429, unreachable) delays the transfer and never ends it; refusals and bad data
// are non-retryable and still stop at once.
const network = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
const notify = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 50 },
});
/** The console's list is rebuilt from the network if need be: a write that keeps failing is logged and skipped. */
const view = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 5 },
});
const screening = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export interface IncomingTransferInput {
  transactionId: string;
  gatewayDid: string;
  subsidiaryDids: string[];
  /** How long to wait for a person to route a transfer nobody's registry owns before escalating. */
  routeDeadline: Duration;
  /** After escalation, how much longer before the transfer is rejected at the network as not ours. */
  routeGiveUpAfter: Duration;
  /** How long a screening hit waits for a decision before escalating (it keeps waiting after that). */
  reviewDeadline: Duration;
  /** Interval of the status poll that backs up the webhooks. */
  pollInterval: Duration;
  screeningThreshold: number;
}

const FINAL = FINAL_NETWORK_STATUSES;
const ACKED = ACKNOWLEDGED_NETWORK_STATUSES;
/** Webhooks may arrive out of order: a status only ever moves forward. */
const rank = incomingStatusRank;

/**
 * One incoming Travel Rule message at the gateway, from the first webhook to the final answer: route it to the
 * subsidiary that owns the destination address (registry, or a person), redirect and confirm at the network, wait for
 * ACK, screen the originator's name and address, then accept, or hold for review and accept or decline as decided.
 * Personal data never enters this workflow: the screening activity fetches and decrypts it and returns hits only.
 */
export async function incomingTransfer(input: IncomingTransferInput): Promise<IncomingStatus> {
  const state: IncomingStatus = {
    transactionId: input.transactionId,
    phase: 'received',
    networkStatus: 'UNKNOWN',
    escalated: false,
    history: [],
  };
  let pendingRoute: RouteRequest | undefined;
  let pendingDecision: DecisionRequest | undefined;
  let updatedSince = false;
  // Histories recorded before the console's transfer list existed replay without its writes.
  const writesView = patched('console-transfer-view');
  // Histories recorded before automatic decisions were audited replay without those rows.
  const auditsAutomatic = patched('audit-automatic-decisions');
  // Since 'incoming-parallel-steps': on the way to the confirmation, the console's list entry and the routing's audit row
  // are written beside the next network step instead of before it (3 local activities fewer in a row: most of the
  // webhook→confirmed latency). Both are durable either way: the workflow awaits them before it goes on past the confirm.
  const parallelSteps = patched('incoming-parallel-steps');
  /** Writes started beside a network step, awaited once the confirmation is done. */
  const alongside: Promise<void>[] = [];
  const beside = async (write: Promise<void>) => {
    if (!parallelSteps) return write;
    // Marked handled now; a failure still surfaces where the writes are awaited.
    write.catch(() => undefined);
    alongside.push(write);
  };
  /** An automatic decision's row in the audit chain, under the rule that took it. */
  const auditSystem = async (component: 'routing' | 'screening', action: string, details: Record<string, unknown>) => {
    if (!auditsAutomatic) return;
    await network.recordAudit({ actor: `system:${component}`, action, subject: input.transactionId, details: { ...details, principal: systemPrincipal(component) } });
  };
  const facts: IncomingFacts = { workflowId: workflowInfo().workflowId, createdAt: workflowInfo().startTime.toISOString() };
  /** Tells the console's list where the transfer stands now. */
  const publish = async () => {
    if (!writesView) return;
    try {
      await view.recordTransferView(incomingViewUpdate(state, facts));
    } catch (e) {
      log.warn('the console transfer list could not be updated', { error: (e as Error).message });
    }
  };
  const waitFor = (after: Duration) => {
    facts.deadline = { from: new Date().toISOString(), after };
  };

  const record = (event: string, detail?: Record<string, unknown>) => state.history.push({ at: new Date().toISOString(), event, detail });
  const enter = (phase: IncomingPhase) => {
    state.phase = phase;
    record(`phase:${phase}`);
  };
  const observe = (status: string, beneficiaryVaspDid?: string) => {
    if (rank(status) < rank(state.networkStatus)) return;
    if (status !== state.networkStatus) {
      state.networkStatus = status;
      upsertSearchAttributes([{ key: TransferStatus, value: status }]);
    }
    if (beneficiaryVaspDid && input.subsidiaryDids.includes(beneficiaryVaspDid) && !state.subsidiaryDid) {
      state.subsidiaryDid = beneficiaryVaspDid;
      state.routedBy ??= 'network';
    }
  };

  setHandler(incomingStatusQuery, () => state);
  setHandler(transactionUpdatedSignal, (u) => {
    record('network-update', { status: u.status, source: u.source });
    observe(u.status, u.beneficiaryVaspDid);
    updatedSince = true;
  });
  setHandler(
    routeUpdate,
    (request) => {
      pendingRoute = request;
      record('route-requested', { subsidiaryDid: request.subsidiaryDid, actor: request.actor, principal: request.principal, reason: request.reason });
      return state;
    },
    {
      validator: (request) => {
        if (state.phase !== 'awaiting-route') throw new Error(`transfer is not waiting to be routed (phase ${state.phase})`);
        if (!input.subsidiaryDids.includes(request?.subsidiaryDid)) {
          throw new Error(`subsidiaryDid: ${String(request?.subsidiaryDid)} is not a subsidiary of the group`);
        }
        if (!request.reason?.trim()) throw new Error('reason: is required');
        if (!request.principal?.subject || !request.actor?.trim()) throw new Error('principal: is required: the authenticated caller who routes');
      },
    },
  );
  setHandler(
    decideUpdate,
    (request) => {
      pendingDecision = request;
      state.decision = { ...request, at: new Date().toISOString() };
      record('decision', { decision: request.decision, actor: request.actor, principal: request.principal, reason: request.reason });
      return state;
    },
    {
      validator: (request) => {
        if (state.phase !== 'awaiting-review') throw new Error(`transfer is not under review (phase ${state.phase})`);
        if (request?.decision !== 'approve' && request?.decision !== 'decline') throw new Error('decision: must be approve or decline');
        if (!request.reason?.trim()) throw new Error('reason: is required');
        if (!request.principal?.subject || !request.actor?.trim()) throw new Error('principal: is required: the authenticated caller who decides');
      },
    },
  );

  /** Waits for `done`, polling the network between webhooks so a lost webhook costs one interval, not the transfer. */
  const waitForNetwork = async (done: () => boolean) => {
    while (!done()) {
      updatedSince = false;
      if (await condition(() => done() || updatedSince, input.pollInterval)) continue;
      const tx = await network.getIncomingTransaction(input.transactionId, { poll: true });
      observe(tx.status, tx.beneficiaryVaspDid);
    }
  };

  const finish = async (outcome: string) => {
    await Promise.all(alongside.splice(0));
    state.phase = outcome === 'rejected' ? 'rejected' : 'completed';
    record(`finished:${outcome}`, { networkStatus: state.networkStatus });
    upsertSearchAttributes([{ key: NeedsReview, value: false }]);
    await publish();
    await notify.reportIncomingOutcome({
      transactionId: input.transactionId, outcome, networkStatus: state.networkStatus, subsidiaryDid: state.subsidiaryDid ?? null,
    });
    return state;
  };

  // 1. What the network says about it now.
  const tx = await network.getIncomingTransaction(input.transactionId);
  observe(tx.status, tx.beneficiaryVaspDid);
  state.asset = tx.asset;
  Object.assign(facts, { counterpartyDid: tx.originatorVaspDid, amount: tx.amount, reference: tx.reference, createdAt: tx.createdAt ?? facts.createdAt });
  upsertSearchAttributes([{ key: Asset, value: tx.asset }, { key: NeedsReview, value: false }]);
  if (FINAL.has(tx.status)) return finish('already-final');
  await beside(publish());

  // 2. Routing: the network may have redirected it already (address books, address webhooks); else our registry; else a person.
  if (!state.subsidiaryDid) {
    enter('routing');
    const owner = await network.findAddressOwner({ asset: tx.asset, address: tx.destination, subsidiaryDids: input.subsidiaryDids });
    if (owner) {
      state.subsidiaryDid = owner;
      state.routedBy = 'registry';
      await beside(auditSystem('routing', 'incoming.route.auto', { subsidiaryDid: owner, by: 'registry' }));
    } else {
      enter('awaiting-route');
      upsertSearchAttributes([{ key: NeedsReview, value: true }]);
      waitFor(input.routeDeadline);
      await publish();
      const routed = () => pendingRoute !== undefined || state.subsidiaryDid !== undefined || FINAL.has(state.networkStatus);
      if (!(await condition(routed, input.routeDeadline))) {
        state.escalated = true;
        record('route-escalated');
        await auditSystem('routing', 'incoming.route.escalated', { waited: input.routeDeadline });
        waitFor(input.routeGiveUpAfter);
        await publish();
        await notify.reportIncomingOutcome({ transactionId: input.transactionId, outcome: 'route-escalated', networkStatus: state.networkStatus, subsidiaryDid: null });
        if (!(await condition(routed, input.routeGiveUpAfter))) {
          await auditSystem('routing', 'incoming.reject', { reason: 'destination address is not owned by any VASP of the group', waited: input.routeGiveUpAfter });
          await network.rejectIncomingTransaction({ transactionId: input.transactionId, reason: 'destination address is not owned by any VASP of the group' });
          state.networkStatus = 'REJECTED';
          upsertSearchAttributes([{ key: TransferStatus, value: 'REJECTED' }]);
          return finish('rejected');
        }
      }
      if (FINAL.has(state.networkStatus)) return finish('closed-by-network');
      upsertSearchAttributes([{ key: NeedsReview, value: false }]);
      if (!state.subsidiaryDid && pendingRoute) {
        state.subsidiaryDid = pendingRoute.subsidiaryDid;
        state.routedBy = 'person';
        await network.recordAudit({
          actor: pendingRoute.actor, action: 'incoming.route', subject: input.transactionId,
          details: { subsidiaryDid: pendingRoute.subsidiaryDid, reason: pendingRoute.reason, ...(pendingRoute.principal ? { principal: pendingRoute.principal } : {}) },
        });
        const recorded = await network.recordRoutedAddress({
          asset: tx.asset, destination: tx.destination, subsidiaryDid: pendingRoute.subsidiaryDid, transactionId: input.transactionId,
        });
        record('registry', { address: recorded });
      }
    }
    const redirected = await network.redirectIncomingTransaction({ transactionId: input.transactionId, to: state.subsidiaryDid! });
    observe(redirected.status, redirected.beneficiaryVaspDid);
    record('redirected', { to: state.subsidiaryDid, by: state.routedBy });
    await beside(publish());
  }
  upsertSearchAttributes([{ key: SubsidiaryVaspDid, value: state.subsidiaryDid! }]);

  // 3. Confirm the address (unless the network's autoconfirm already did), then wait for ACK.
  if (!ACKED.has(state.networkStatus)) {
    enter('confirming');
    const confirmed = await network.confirmIncomingTransaction(input.transactionId);
    observe(confirmed.status, confirmed.beneficiaryVaspDid);
  }
  await Promise.all(alongside.splice(0));
  if (!ACKED.has(state.networkStatus)) {
    enter('awaiting-ack');
    await waitForNetwork(() => ACKED.has(state.networkStatus));
  }
  if (state.networkStatus === 'ACCEPTED') {
    state.screening = { screenedNames: 0, nameHits: [], addressHits: [], skipped: 'screened-by-network' };
    return finish('accepted-by-network');
  }
  if (FINAL.has(state.networkStatus)) return finish('closed-by-network');

  // 4. Screening: the activity decrypts with the subsidiary's keys and returns hits only.
  enter('screening');
  state.screening = await screening.screenIncomingTransfer({
    transactionId: input.transactionId, subsidiaryDid: state.subsidiaryDid!, gatewayDid: input.gatewayDid, threshold: input.screeningThreshold,
  });
  record('screened', { nameHits: state.screening.nameHits.length, addressHits: state.screening.addressHits.length });
  const hit = state.screening.nameHits.length > 0 || state.screening.addressHits.length > 0 || (state.screening.skipped === 'undecryptable' || state.screening.skipped === 'unreadable');

  let decision: DecisionRequest = { decision: 'approve', reason: 'no screening hit', actor: 'system:screening', principal: systemPrincipal('screening') };
  const screened = {
    screenedNames: state.screening.screenedNames, nameHits: state.screening.nameHits.length, addressHits: state.screening.addressHits.length,
    ...(state.screening.skipped ? { skipped: state.screening.skipped } : {}),
  };
  // The lists' entries that matched, never the customer's data.
  if (hit) {
    await auditSystem('screening', 'incoming.screening.hit', {
      ...screened,
      entries: [
        ...state.screening.nameHits.map((h) => ({ list: h.list, entNum: h.entNum, score: h.score })),
        ...state.screening.addressHits.map((h) => ({ list: h.list, entNum: h.entNum, asset: h.asset })),
      ],
    });
  }
  else await auditSystem('screening', 'incoming.approve', { reason: decision.reason, ...screened });
  if (hit) {
    enter('awaiting-review');
    upsertSearchAttributes([{ key: NeedsReview, value: true }]);
    waitFor(input.reviewDeadline);
    await publish();
    const decided = () => pendingDecision !== undefined || FINAL.has(state.networkStatus);
    if (!(await condition(decided, input.reviewDeadline))) {
      state.escalated = true;
      record('review-escalated');
      await auditSystem('screening', 'incoming.review.escalated', { waited: input.reviewDeadline });
      await publish();
      await notify.reportIncomingOutcome({ transactionId: input.transactionId, outcome: 'review-escalated', networkStatus: state.networkStatus, subsidiaryDid: state.subsidiaryDid! });
      await condition(decided);
    }
    if (FINAL.has(state.networkStatus)) return finish('closed-by-network');
    decision = pendingDecision!;
    await network.recordAudit({
      actor: decision.actor, action: `incoming.${decision.decision}`, subject: input.transactionId,
      details: {
        reason: decision.reason, nameHits: state.screening.nameHits.length, addressHits: state.screening.addressHits.length,
        ...(decision.principal ? { principal: decision.principal } : {}),
      },
    });
  }

  // 5. Answer at the network.
  enter('deciding');
  await publish();
  const answered =
    decision.decision === 'approve'
      ? await network.acceptIncomingTransaction(input.transactionId)
      : await network.declineIncomingTransaction({ transactionId: input.transactionId, reason: networkReason(decision) });
  observe(answered.status, answered.beneficiaryVaspDid);
  if (!FINAL.has(state.networkStatus)) {
    log.warn('network did not report a final status after the answer', { status: state.networkStatus });
    throw ApplicationFailure.nonRetryable(`network status after ${decision.decision} is ${state.networkStatus}`);
  }
  return finish(decision.decision === 'approve' ? 'accepted' : 'declined');
}

/** The network keeps at most this many characters of a reason. */
const NETWORK_REASON_MAX = 1024;

/** The reason the network records with a decline: the person's words, then who declined, by name and credential. */
function networkReason(decision: DecisionRequest): string {
  const by = ` (declined by ${decision.principal ? describePrincipal(decision.principal) : decision.actor})`;
  return decision.reason.slice(0, Math.max(0, NETWORK_REASON_MAX - by.length)) + by;
}
