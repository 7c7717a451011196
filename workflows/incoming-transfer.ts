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
import type { Duration, RetryPolicy } from '@temporalio/common';
import type { Activities } from '../activities';
import { Asset, NeedsReview, SubsidiaryVaspDid, TransferStatus } from '../lib/temporal/search-attributes';
import { incomingViewUpdate, type IncomingFacts } from '../transfer-view/status';
import { systemPrincipal } from '../lib/principal';
import type { TransferDecision } from '../policy/types';
import type { IncomingOutcomeReport } from '../incoming/types';
import { policyAuditDetails } from '../policy/status';
import { isAcknowledged } from '../lib/network-status';
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
import {
  automaticApproval,
  decidedOutcome,
  decisionRequestProblem,
  enterPhase,
  finishedPhase,
  initialIncomingStatus,
  isFinalNetworkStatus,
  isScreeningHit,
  networkReason,
  observeNetwork,
  policyApproval,
  policyDecline,
  recordEvent,
  routeRequestProblem,
  screeningCounts,
  screeningHitEntries,
} from '../incoming/status';

/**
 * The short, idempotent steps (one HTTP call or one query) run as local activities: no task-queue round trip each,
 * which is most of the webhook-to-confirmed latency. Screening (a few network calls, decryption, list lookups and the
 * policy, seconds at most) runs as one too since `incoming-local-screening` (and the patches that stand for it,
 * `incoming-lean-upserts`, `incoming-lean-views` and `incoming-lean-finish`); runs started before it screen in an
 * ordinary activity. The reports to internal systems stay an ordinary activity, retried on its own; since
 * `incoming-lean-finish` the end's also writes the list entry.
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
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '5 seconds',
    maximumAttempts: 5,
  },
});
const screeningRetry: RetryPolicy = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
};
const screening = proxyActivities<Activities>({ startToCloseTimeout: '2 minutes', retry: screeningRetry });
const screeningLocally = proxyLocalActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  localRetryThreshold: '10 seconds',
  retry: screeningRetry,
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

/** One run of the workflow: the state its clients see, and what it keeps beside it. */
interface Run {
  input: IncomingTransferInput;
  state: IncomingStatus;
  /** What the console's list shows beside the state: the counterparty, the amount, the deadline being waited for. */
  facts: IncomingFacts;
  pendingRoute?: RouteRequest;
  pendingDecision?: DecisionRequest;
  /** A network update arrived since the last wait began. */
  updatedSince: boolean;
  /** Writes started beside a network step, awaited once the confirmation is done (and before the end). */
  alongside: Promise<void>[];
  /** `incoming-local-screening`, asked in the first activation: screening runs as a local activity. */
  screensLocally: boolean;
  /**
   * `incoming-lean-upserts`, asked first: the first status joins the Asset and NeedsReview upsert, and NeedsReview is
   * said only when it changes: each upsert is an event and a visibility write. It stands for `incoming-local-screening`
   * too, which such a run does not ask (docs/workflow-versioning.md, "Folding patches").
   */
  lean: boolean;
  /**
   * `incoming-lean-views`, asked first: the console's list is written when the transfer appears, when it begins to wait
   * for someone (the route, the ACK, a review) and at the end, not at each step between: a step between lasts one
   * network call. It stands for `incoming-lean-upserts` (and so `incoming-local-screening`) too.
   */
  leanViews: boolean;
  /**
   * `incoming-lean-finish`, asked first: the end's report activity writes the final list entry too, one local activity
   * fewer. It stands for `incoming-lean-views` (and so the patches before it) too.
   */
  leanFinish: boolean;
  /** The NeedsReview value last said in the search attributes. */
  needsReview?: boolean;
  /** The first read is done: a lean run says each new status from then on (before it, with the first read's upsert). */
  statusSaid: boolean;
}

type Transaction = Awaited<ReturnType<Activities['getIncomingTransaction']>>;
/** How a transfer ended, as the outcome report and the history's `finished:` say. */
type Outcome = string;

/**
 * One incoming Travel Rule message at the gateway, from the first webhook to the final answer: route it to the
 * subsidiary that owns the destination address (registry, or a person), redirect and confirm at the network, wait for
 * ACK, screen the originator's name and address, then accept, or hold for review and accept or decline as decided.
 * Personal data never enters this workflow: the screening activity fetches and decrypts it and returns hits only.
 */
export async function incomingTransfer(input: IncomingTransferInput): Promise<IncomingStatus> {
  const run = begin(input);
  const tx = await readTransaction(run);
  if (isFinalNetworkStatus(tx.status)) return finish(run, 'already-final');
  beside(run, publish(run));
  if (!run.state.subsidiaryDid) {
    const ended = await route(run, tx);
    if (ended) return finish(run, ended);
  }
  upsertSearchAttributes([{ key: SubsidiaryVaspDid, value: run.state.subsidiaryDid! }]);
  const closed = await confirm(run);
  if (closed) return finish(run, closed);
  const screened = await screen(run);
  if ('ended' in screened) return finish(run, screened.ended);
  return finish(run, await answer(run, screened.decision));
}

/** The state before anything happened, and the handlers of the signal, the query and the updates. */
function begin(input: IncomingTransferInput): Run {
  const info = workflowInfo();
  const leanFinish = patched('incoming-lean-finish');
  const leanViews = leanFinish || patched('incoming-lean-views');
  const lean = leanViews || patched('incoming-lean-upserts');
  const run: Run = {
    input,
    state: initialIncomingStatus(input.transactionId),
    facts: { workflowId: info.workflowId, createdAt: info.startTime.toISOString() },
    updatedSince: false,
    alongside: [],
    screensLocally: lean || patched('incoming-local-screening'),
    lean,
    leanViews,
    leanFinish,
    statusSaid: false,
  };
  const { state } = run;
  setHandler(incomingStatusQuery, () => state);
  setHandler(transactionUpdatedSignal, (u) => {
    record(run, 'network-update', { status: u.status, source: u.source });
    observe(run, u);
    run.updatedSince = true;
  });
  setHandler(
    routeUpdate,
    (request) => {
      run.pendingRoute = request;
      record(run, 'route-requested', {
        subsidiaryDid: request.subsidiaryDid,
        actor: request.actor,
        principal: request.principal,
        reason: request.reason,
      });
      return state;
    },
    { validator: (request) => refuse(routeRequestProblem(state, request, input.subsidiaryDids)) },
  );
  setHandler(
    decideUpdate,
    (request) => {
      run.pendingDecision = request;
      state.decision = { ...request, at: new Date().toISOString() };
      record(run, 'decision', {
        decision: request.decision,
        actor: request.actor,
        principal: request.principal,
        reason: request.reason,
      });
      return state;
    },
    { validator: (request) => refuse(decisionRequestProblem(state, request)) },
  );
  return run;
}

/** 1. What the network says about the transaction now. */
async function readTransaction(run: Run): Promise<Transaction> {
  const tx = await network.getIncomingTransaction(run.input.transactionId);
  observe(run, tx);
  run.state.asset = tx.asset;
  Object.assign(run.facts, {
    counterpartyDid: tx.originatorVaspDid,
    amount: tx.amount,
    reference: tx.reference,
    createdAt: tx.createdAt ?? run.facts.createdAt,
  });
  run.needsReview = false;
  // A lean run says its first status here, with the asset: the webhook that started it changed it before the read.
  const status = run.lean ? [{ key: TransferStatus, value: run.state.networkStatus }] : [];
  run.statusSaid = true;
  upsertSearchAttributes([...status, { key: Asset, value: tx.asset }, { key: NeedsReview, value: false }]);
  return tx;
}

/**
 * 2. Routing, when the network has not redirected it already (address books, address webhooks): our registry, else a
 * person; then the redirect to the subsidiary. Returns the outcome when the transfer ended instead.
 */
async function route(run: Run, tx: Transaction): Promise<Outcome | undefined> {
  const { input, state } = run;
  enter(run, 'routing');
  const owner = await network.findAddressOwner({
    asset: tx.asset,
    address: tx.destination,
    subsidiaryDids: input.subsidiaryDids,
  });
  if (owner) {
    state.subsidiaryDid = owner;
    state.routedBy = 'registry';
    beside(run, auditSystem(run, 'routing', 'incoming.route.auto', { subsidiaryDid: owner, by: 'registry' }));
  } else {
    const ended = await awaitRoute(run, tx);
    if (ended) return ended;
    // Routed: no longer waiting for a person, so the list's entry leaves the routing queue with the next write.
    if (run.leanViews) enter(run, 'routing');
  }
  const redirected = await network.redirectIncomingTransaction({
    transactionId: input.transactionId,
    to: state.subsidiaryDid!,
  });
  observe(run, redirected);
  record(run, 'redirected', { to: state.subsidiaryDid, by: state.routedBy });
  // A person's route takes the transfer out of the routing queue at once; the registry's is written with what follows.
  if (!run.leanViews || state.routedBy === 'person') beside(run, publish(run));
  return undefined;
}

/**
 * Nobody's registry owns the address: a person routes it. Escalated at the route deadline; rejected at the network as
 * not ours when nobody routed it after that either.
 */
async function awaitRoute(run: Run, tx: Transaction): Promise<Outcome | undefined> {
  const { input, state } = run;
  enter(run, 'awaiting-route');
  sayNeedsReview(run, true);
  waitFor(run, input.routeDeadline);
  await publish(run);
  const routed = () =>
    run.pendingRoute !== undefined || state.subsidiaryDid !== undefined || isFinalNetworkStatus(state.networkStatus);
  if (!(await condition(routed, input.routeDeadline))) {
    state.escalated = true;
    record(run, 'route-escalated');
    await auditSystem(run, 'routing', 'incoming.route.escalated', { waited: input.routeDeadline });
    waitFor(run, input.routeGiveUpAfter);
    await publish(run);
    await report(run, 'route-escalated');
    if (!(await condition(routed, input.routeGiveUpAfter))) {
      const reason = 'destination address is not owned by any VASP of the group';
      await auditSystem(run, 'routing', 'incoming.reject', { reason, waited: input.routeGiveUpAfter });
      await network.rejectIncomingTransaction({ transactionId: input.transactionId, reason });
      state.networkStatus = 'REJECTED';
      upsertSearchAttributes([{ key: TransferStatus, value: 'REJECTED' }]);
      return 'rejected';
    }
  }
  if (isFinalNetworkStatus(state.networkStatus)) return 'closed-by-network';
  sayNeedsReview(run, false);
  const request = run.pendingRoute;
  if (state.subsidiaryDid || !request) return undefined;
  state.subsidiaryDid = request.subsidiaryDid;
  state.routedBy = 'person';
  await network.recordAudit({
    actor: request.actor,
    action: 'incoming.route',
    subject: input.transactionId,
    details: {
      subsidiaryDid: request.subsidiaryDid,
      reason: request.reason,
      ...(request.principal ? { principal: request.principal } : {}),
    },
  });
  const recorded = await network.recordRoutedAddress({
    asset: tx.asset,
    destination: tx.destination,
    subsidiaryDid: request.subsidiaryDid,
    transactionId: input.transactionId,
  });
  record(run, 'registry', { address: recorded });
  return undefined;
}

/**
 * 3. Confirms the address (unless the network's autoconfirm already did), then waits for ACK. Returns the outcome when
 * the network ended the transfer (accepted without screening, or closed).
 */
async function confirm(run: Run): Promise<Outcome | undefined> {
  const { state } = run;
  if (!isAcknowledged(state.networkStatus)) {
    enter(run, 'confirming');
    observe(run, await network.confirmIncomingTransaction(run.input.transactionId));
  }
  await Promise.all(run.alongside.splice(0));
  if (!isAcknowledged(state.networkStatus)) {
    enter(run, 'awaiting-ack');
    if (run.leanViews) await publish(run);
    await waitForNetwork(run, () => isAcknowledged(state.networkStatus));
  }
  if (state.networkStatus === 'ACCEPTED') {
    state.screening = { screenedNames: 0, nameHits: [], addressHits: [], skipped: 'screened-by-network' };
    return 'accepted-by-network';
  }
  return isFinalNetworkStatus(state.networkStatus) ? 'closed-by-network' : undefined;
}

/**
 * 4. Screening, and the policy's decision on its result (the activity decrypts with the subsidiary's keys and returns
 * hits and the decision only). Histories from before policies carry no decision, and the built-in default (no policy
 * configured) decides alike: a hit waits for a person, else accept.
 */
async function screen(run: Run): Promise<{ decision: DecisionRequest } | { ended: Outcome }> {
  const { input, state, facts } = run;
  enter(run, 'screening');
  const step = run.screensLocally ? screeningLocally : screening;
  const { policy, ...outcome } = await step.screenIncomingTransfer({
    transactionId: input.transactionId,
    subsidiaryDid: state.subsidiaryDid!,
    gatewayDid: input.gatewayDid,
    threshold: input.screeningThreshold,
    transfer: {
      transferId: input.transactionId,
      direction: 'incoming',
      vaspDid: state.subsidiaryDid!,
      counterpartyDid: facts.counterpartyDid,
      asset: state.asset ?? '',
      amount: facts.amount ?? '0',
      createdAt: facts.createdAt,
    },
  });
  state.screening = outcome;
  record(run, 'screened', { nameHits: outcome.nameHits.length, addressHits: outcome.addressHits.length });
  if (isScreeningHit(outcome)) {
    await auditSystem(run, 'screening', 'incoming.screening.hit', {
      ...screeningCounts(outcome),
      entries: screeningHitEntries(outcome),
    });
  }
  // Without a configured policy the built-in default decides as screening did before policies, with the same rows.
  if (policy?.decision.policy) return applyPolicy(run, policy);
  if (policy) run.state.policy = policy.decision;
  if (isScreeningHit(outcome)) return awaitReview(run);
  const decision = automaticApproval();
  await auditSystem(run, 'screening', 'incoming.approve', { reason: decision.reason, ...screeningCounts(outcome) });
  return { decision };
}

/**
 * The policy's decision, each with its audit row (version, rule, facts): APPROVE and REJECT answer without a person,
 * NOT_READY tells the network and waits for one, SEND_TO_INBOX waits for one.
 */
async function applyPolicy(
  run: Run,
  policy: TransferDecision,
): Promise<{ decision: DecisionRequest } | { ended: Outcome }> {
  const { decision } = policy;
  run.state.policy = decision;
  record(run, 'policy', { action: decision.action, version: decision.policy?.version, rule: decision.rule?.order });
  const details = { ...policyAuditDetails(policy), ...screeningCounts(run.state.screening!) };
  switch (decision.action) {
    case 'APPROVE':
      await auditSystem(run, 'policy', 'incoming.approve', details);
      return { decision: policyApproval(decision) };
    case 'REJECT':
      await auditSystem(run, 'policy', 'incoming.decline', details);
      return { decision: policyDecline() };
    case 'NOT_READY':
      await auditSystem(run, 'policy', 'incoming.not-ready', details);
      await network.markIncomingNotReady(run.input.transactionId);
      // Set, not observed: NOT_READY ranks below ACK in the incoming order, and the network now says NOT_READY.
      if (!isFinalNetworkStatus(run.state.networkStatus)) run.state.networkStatus = 'NOT_READY';
      upsertSearchAttributes([{ key: TransferStatus, value: run.state.networkStatus }]);
      return awaitReview(run);
    case 'SEND_TO_INBOX':
      await auditSystem(run, 'policy', 'incoming.inbox', details);
      return awaitReview(run);
  }
}

/** Held for review: escalated at the review deadline, and waiting on for the decision after that. */
async function awaitReview(run: Run): Promise<{ decision: DecisionRequest } | { ended: Outcome }> {
  const { input, state } = run;
  enter(run, 'awaiting-review');
  sayNeedsReview(run, true);
  waitFor(run, input.reviewDeadline);
  await publish(run);
  const decided = () => run.pendingDecision !== undefined || isFinalNetworkStatus(state.networkStatus);
  if (!(await condition(decided, input.reviewDeadline))) {
    state.escalated = true;
    record(run, 'review-escalated');
    await auditSystem(run, 'screening', 'incoming.review.escalated', { waited: input.reviewDeadline });
    await publish(run);
    await report(run, 'review-escalated');
    await condition(decided);
  }
  if (isFinalNetworkStatus(state.networkStatus)) return { ended: 'closed-by-network' };
  const decision = run.pendingDecision!;
  await network.recordAudit({
    actor: decision.actor,
    action: `incoming.${decision.decision}`,
    subject: input.transactionId,
    details: {
      reason: decision.reason,
      nameHits: state.screening!.nameHits.length,
      addressHits: state.screening!.addressHits.length,
      ...(decision.principal ? { principal: decision.principal } : {}),
    },
  });
  return { decision };
}

/** 5. Answers at the network; the network must then report a final status. */
async function answer(run: Run, decision: DecisionRequest): Promise<Outcome> {
  const { input, state } = run;
  enter(run, 'deciding');
  // An automatic decision goes straight to the answer; a person's (taken under review, by the update) takes the
  // transfer out of the review queue first.
  if (!run.leanViews || run.pendingDecision) await publish(run);
  const answered =
    decision.decision === 'approve'
      ? await network.acceptIncomingTransaction(input.transactionId)
      : await network.declineIncomingTransaction({
          transactionId: input.transactionId,
          reason: networkReason(decision),
        });
  observe(run, answered);
  if (!isFinalNetworkStatus(state.networkStatus)) {
    log.warn('network did not report a final status after the answer', { status: state.networkStatus });
    throw ApplicationFailure.nonRetryable(`network status after ${decision.decision} is ${state.networkStatus}`);
  }
  return decidedOutcome(decision);
}

/**
 * The end: the writes started alongside awaited, the list entry, the outcome reported to internal systems. A lean-finish
 * run does both in the report's activity, and writes the entry again alone only when that write failed.
 *
 * The report stays an activity task, not a local activity, because it is also the run's checkpoint. An automatic
 * decision's run does all its steps in one workflow task of local activities, and their results reach the history only
 * when that task completes. A task that also completed the run would be refused whenever a signal came in meanwhile,
 * and the network's webhooks echo each step. The refused task's results would be lost, and its steps would run again
 * against a network that has moved on: a new first read finds the transfer already final, and the run's record of its
 * decision is gone. Scheduling the report's activity completes the task whatever came in.
 */
async function finish(run: Run, outcome: Outcome): Promise<IncomingStatus> {
  const { state } = run;
  await Promise.all(run.alongside.splice(0));
  state.phase = finishedPhase(outcome);
  record(run, `finished:${outcome}`, { networkStatus: state.networkStatus });
  sayNeedsReview(run, false);
  if (!run.leanFinish) {
    await publish(run);
    await report(run, outcome);
    return state;
  }
  const { viewWritten } = await notify.finishIncomingTransfer({
    view: incomingViewUpdate(state, run.facts),
    report: reportOf(run, outcome),
  });
  if (!viewWritten) await publish(run);
  return state;
}

/** Tells the internal systems that the transfer needs a person, or how it ended. */
async function report(run: Run, outcome: Outcome): Promise<void> {
  await notify.reportIncomingOutcome(reportOf(run, outcome));
}

const reportOf = (run: Run, outcome: Outcome): IncomingOutcomeReport => ({
  transactionId: run.input.transactionId,
  outcome,
  networkStatus: run.state.networkStatus,
  subsidiaryDid: run.state.subsidiaryDid ?? null,
});

/** Waits for `done`, polling the network between webhooks so a lost webhook costs one interval, not the transfer. */
async function waitForNetwork(run: Run, done: () => boolean): Promise<void> {
  while (!done()) {
    run.updatedSince = false;
    if (await condition(() => done() || run.updatedSince, run.input.pollInterval)) continue;
    observe(run, await network.getIncomingTransaction(run.input.transactionId, { poll: true }));
  }
}

/** Applies what the network says (incoming/status.ts) and says a new status in the search attributes. */
function observe(run: Run, update: { status: string; beneficiaryVaspDid?: string }): void {
  if (!observeNetwork(run.state, update, run.input.subsidiaryDids)) return;
  if (run.lean && !run.statusSaid) return;
  upsertSearchAttributes([{ key: TransferStatus, value: run.state.networkStatus }]);
}

/** Says NeedsReview in the search attributes; in a lean run only when it changes (older runs say it every time). */
function sayNeedsReview(run: Run, value: boolean): void {
  if (run.lean && run.needsReview === value) return;
  run.needsReview = value;
  upsertSearchAttributes([{ key: NeedsReview, value }]);
}

const record = (run: Run, event: string, detail?: Record<string, unknown>) =>
  recordEvent(run.state, event, new Date(), detail);
const enter = (run: Run, phase: IncomingPhase) => enterPhase(run.state, phase, new Date());
const waitFor = (run: Run, after: Duration) => {
  run.facts.deadline = { from: new Date().toISOString(), after };
};
const refuse = (problem: string | undefined) => {
  if (problem) throw new Error(problem);
};

/**
 * Starts a write beside the next network step (the console's list entry, the routing's audit row): fewer local
 * activities in a row on the way to the confirmation. Marked handled now; a failure still surfaces where the writes
 * are awaited.
 */
function beside(run: Run, write: Promise<void>): void {
  write.catch(() => undefined);
  run.alongside.push(write);
}

/** An automatic decision's row in the audit chain, under the rule that took it. */
async function auditSystem(
  run: Run,
  component: 'routing' | 'screening' | 'policy',
  action: string,
  details: Record<string, unknown>,
): Promise<void> {
  await network.recordAudit({
    actor: `system:${component}`,
    action,
    subject: run.input.transactionId,
    details: { ...details, principal: systemPrincipal(component) },
  });
}

/** Tells the console's list where the transfer stands now. */
async function publish(run: Run): Promise<void> {
  try {
    await view.recordTransferView(incomingViewUpdate(run.state, run.facts));
  } catch (e) {
    log.warn('the console transfer list could not be updated', { error: (e as Error).message });
  }
}
