import {
  ApplicationFailure,
  condition,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { activityCause, summarizeFailure } from './failures';
import type { Activities } from '../activities';
import type {
  AwaitingProof,
  CreatedTransaction,
  HeldTransfer,
  SentTransfer,
  TransferReport,
} from '../activities/outgoing-transfers';
import type { TransferDecision, TransferFactsInput } from '../policy/types';
import { TransferStatus } from '../lib/temporal/search-attributes';
import { networkUpdatedAtOf } from '../lib/network-status';
import { outgoingViewUpdate } from '../transfer-view/status';
import {
  transactionCreatedUpdate,
  transactionUpdatedSignal,
  transferStatusQuery,
  reviewOutgoingUpdate,
  type TransactionUpdate,
  initialState,
  type TransferState,
} from './outgoing-transfer.messages';
import { countProofSignals, startProofDeadline, waitForProof } from './proof-wait';

import type { BroadcastInput, OutgoingTransferInput } from '../outgoing/types';
import {
  applyStatus,
  broadcastCallbackBody,
  broadcastDue,
  DEFAULT_BROADCAST,
  atDeadline,
  expiryOutcome,
  initialTracking,
  reviewRequestProblem,
  settleCancelled,
  type StatusChange,
  type StatusTracking,
} from '../outgoing/status';

export type { OutgoingTransferInput } from '../outgoing/types';

// Local activities: each step is short (a few database reads, encryption, one or two HTTP calls) and idempotent, so
// running it in the worker that runs the workflow saves the server round trips of a scheduled activity (several
// history events and a task dispatch each) — most of a transfer's latency at load. Retries keep the same policy;
// past a minute of retrying, Temporal schedules the next attempt with a durable timer.
const { sendOutgoingTransfer } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: {
    initialInterval: '200 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 30,
  },
});
const { fetchOutgoingStatus } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 3 },
});
// Withdrawing an expired transaction is worth a few minutes of retries: left open, the counterparty could still accept.
const { cancelOutgoingTransaction } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});
// The console's list is rebuilt from the network if need be: a write that keeps failing is logged and skipped.
const { recordTransferView } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '5 seconds',
    maximumAttempts: 5,
  },
});
// A person's decision on a held transfer, in the audit chain: idempotent (the activity's key), retried a while.
const { recordAudit } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
// The wait for a wallet's proof registers and re-checks through this: retried until the database answers.
const { awaitBeneficiaryProof } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
/**
 * transfer.release / transfer.halt to the custody system, retried until acknowledged: for hours if it is down. A
 * scheduled activity, so the wait for the counterparty's answer goes on meanwhile.
 */
const { deliverTransferCallback } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});
const { finishOutgoingTransfer } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20 },
});

/** One run of the workflow: the state its clients see, and what it keeps beside it. */
interface Run {
  input: OutgoingTransferInput;
  state: TransferState;
  tracking: StatusTracking;
  /** Updates that arrived before the transaction id was known (a webhook may beat the send step's result). */
  early: TransactionUpdate[];
  created?: CreatedTransaction;
  /** The history length the console's list entry was last written at. */
  viewVersion: number;
  /** How many walletProofVerifiedSignal arrived: each wakes a transfer in AWAITING_PROOF to look again. */
  proofSignals: () => number;
  /** When the funds may be broadcast; absent from runs started before the rule (not patched). */
  broadcast?: BroadcastInput;
  /** The after-timeout rule's timer fired. */
  broadcastTimeout: boolean;
  /** The custody system's acknowledgement of the announcement, awaited before the run ends. */
  announced?: Promise<void>;
}

/**
 * One outgoing Travel Rule transfer: validate, encrypt and create the network's transaction (one activity, which loads
 * the originator's key by VASP DID; transactionRef = the transfer id), then wait for the counterparty's answer —
 * webhook signals first, `GET /tx/info` polling as the fallback — until a final status or the deadline, and report the
 * outcome. A refused request (invalid IVMS101, the gateway as originator, an unknown VASP) fails the workflow without
 * retries, with the error naming the field.
 */
export async function outgoingTransfer(input: OutgoingTransferInput): Promise<TransferState> {
  const run = begin(input);
  const created = await create(run);
  if (created) await waitForAnswer(run, created.id);
  await finish(run);
  return run.state;
}

/** The state before anything happened, and the handlers of the signal, the query and the update. */
function begin(input: OutgoingTransferInput): Run {
  const run: Run = {
    input,
    state: initialState(input, workflowInfo().workflowId, new Date()),
    tracking: initialTracking(),
    early: [],
    viewVersion: 0,
    proofSignals: countProofSignals(),
    broadcastTimeout: false,
  };
  if (patched('outgoing-broadcast-callbacks')) run.broadcast = input.broadcast ?? DEFAULT_BROADCAST;
  setHandler(transferStatusQuery, () => run.state);
  setHandler(transactionUpdatedSignal, (update) => {
    if (!run.state.transactionId) run.early.push(update);
    else if (update.transactionId === run.state.transactionId) advance(run, update);
  });
  setHandler(transactionCreatedUpdate, async () => {
    await condition(() => run.created !== undefined || run.state.error !== undefined);
    return run.created ?? { error: run.state.error! };
  });
  setHandler(
    reviewOutgoingUpdate,
    (request) => {
      run.state.review = { ...request, at: new Date().toISOString() };
      return run.state;
    },
    {
      validator: (request) => {
        const problem = run.state.review ? 'transfer was already reviewed' : reviewRequestProblem(run.state, request);
        if (problem) throw new Error(problem);
      },
    },
  );
  return run;
}

/**
 * Decides by the outgoing policy, prepares and creates the network's transaction in one local activity, which also
 * writes the console's list entry of the created transaction. A transfer the policy does not approve is refused or
 * held for a person (undefined when it ends unsent). A failure ends the transfer FAILED, reported, and fails the
 * workflow.
 */
async function create(run: Run): Promise<CreatedTransaction | undefined> {
  const { state } = run;
  let sent = await send(run, true);
  if ('held' in sent) {
    if (!(await hold(run, sent.held))) return undefined;
    sent = await send(run, false);
    if ('held' in sent) throw ApplicationFailure.nonRetryable('the send step held a transfer a person released');
  }
  // The self-hosted wallet's proof is missing: wait for it, then send (the policy approved already). A proof that
  // expired between the wait's check and the send step sends the transfer back to waiting.
  while ('awaitingProof' in sent) {
    if (sent.policy) state.policy = sent.policy.decision;
    if (!(await awaitProof(run))) return undefined;
    sent = await send(run, false);
    if ('held' in sent) throw ApplicationFailure.nonRetryable('the send step held a transfer the policy approved');
  }
  if (sent.policy) state.policy = sent.policy.decision;
  state.mode = sent.plan.mode;
  state.beneficiaryVaspDid = sent.plan.beneficiaryVaspDid;
  // Not searchable: the created transaction's status follows at once, and one upsert says both.
  advance(run, { status: 'PREPARED', source: 'orchestrator' }, false);
  run.created = sent.created;
  const sentView = sent.view;
  const created = run.created;
  state.transactionId = created.id;
  state.beneficiaryVaspDid = created.beneficiaryVaspDid ?? state.beneficiaryVaspDid;
  advance(run, { status: created.status, source: 'network', updatedAt: networkUpdatedAtOf(created.transaction) });
  startBroadcastTimer(run);
  for (const update of run.early.splice(0)) if (update.transactionId === created.id) advance(run, update);
  // What the send step wrote counts when it is where the workflow stands (no webhook got in between). Compared by
  // version and status only: the entry also holds the first activation's clock reading, which differs on replay.
  if (sentView && sentView.version === state.history.length && sentView.status === state.status)
    run.viewVersion = sentView.version;
  await publish(run);
  return created;
}

/** The send step (with the policy's decision first when `decide`); a failure ends the transfer FAILED. */
async function send(run: Run, decide: boolean): Promise<SentTransfer | HeldTransfer | AwaitingProof> {
  const { input, state } = run;
  try {
    return await sendOutgoingTransfer({
      id: input.id,
      plan: input.plan,
      view: outgoingViewUpdate(state),
      ...(decide ? { decide: transferFacts(input, state) } : {}),
    });
  } catch (e) {
    state.error = describe(e);
    advance(run, { status: 'FAILED', source: 'orchestrator' });
    await finish(run);
    throw ApplicationFailure.create({
      type: state.error.type,
      message: state.error.message,
      nonRetryable: true,
      details: [state.error],
    });
  }
}

/**
 * The policy did not approve: REJECT refuses the transfer; anything else holds it (HELD) until a person releases it
 * (true) or refuses it. The person's decision joins the audit chain.
 */
async function hold(run: Run, verdict: TransferDecision): Promise<boolean> {
  const { state } = run;
  state.policy = verdict.decision;
  if (verdict.decision.action === 'REJECT') {
    state.error = { type: 'PolicyRefused', message: `refused by the outgoing policy: ${verdict.decision.reason}` };
    advance(run, { status: 'REFUSED', source: 'policy' });
    return false;
  }
  advance(run, { status: 'HELD', source: 'policy' });
  await publish(run);
  await condition(() => state.review !== undefined);
  const review = state.review!;
  await recordAudit({
    actor: review.actor,
    action: `outgoing.${review.decision}`,
    subject: state.id,
    details: { reason: review.reason, ...(review.principal ? { principal: review.principal } : {}) },
  });
  if (review.decision === 'release') return true;
  state.error = { type: 'ReviewRefused', message: `refused by ${review.actor}: ${review.reason}` };
  advance(run, { status: 'REFUSED', source: 'review' });
  return false;
}

/**
 * AWAITING_PROOF: the sending subsidiary's jurisdiction asks for the self-hosted beneficiary wallet's ownership proof
 * and none is given or VERIFIED. The workflow waits as a waiter of the wallet (proof-wait.ts) until the customer's
 * proof is VERIFIED (true). The answer deadline (TRANSFER_ANSWER_DEADLINE) ends the wait: the transfer EXPIRED,
 * nothing sent (false).
 */
async function awaitProof(run: Run): Promise<boolean> {
  const { input, state } = run;
  const workflowId = workflowInfo().workflowId;
  advance(run, { status: 'AWAITING_PROOF', source: 'wallet-proof' });
  await publish(run);
  const deadline = startProofDeadline(input.answerDeadlineMs);
  const proof = await waitForProof({
    deadline,
    signals: run.proofSignals,
    check: () => awaitBeneficiaryProof({ id: input.id, workflowId }),
    verified: (answer) => answer.verified,
    stop: () => awaitBeneficiaryProof({ id: input.id, workflowId, stop: true }),
  });
  if (proof) {
    deadline.cancel();
    return true;
  }
  state.error = {
    type: 'OwnershipProofMissing',
    message: 'no VERIFIED ownership proof of the self-hosted beneficiary wallet before the deadline; nothing was sent',
  };
  advance(run, { status: 'EXPIRED', source: 'deadline: no ownership proof' });
  return false;
}

/**
 * Waits for a final status until the answer deadline, a timer of its own, so every decision about the deadline follows
 * from the history's events (never from the workflow's clock, which replay may read later than the run did). Woken
 * early by a final status, the deadline, a CANCELLED to settle or, for the console's list, by any other change a
 * webhook brought; else it polls the network every interval.
 */
async function waitForAnswer(run: Run, transactionId: string): Promise<void> {
  const { input, state, tracking } = run;
  tracking.deadline = 'running';
  // The timer is only cancelled with the workflow, whose other waits then end it too.
  void sleep(input.answerDeadlineMs).then(
    () => (tracking.deadline = 'passed'),
    () => undefined,
  );
  while (!state.final) {
    const due = atDeadline(state, tracking);
    if (due === 'cancel-at-network') return expire(run, transactionId);
    if (due !== 'none') return advance(run, due.expire);
    const woken = await condition(
      () => state.final || viewBehind(run) || tracking.deadline === 'passed' || tracking.cancelledHeard !== undefined,
      input.pollIntervalMs,
    );
    // A final status's list entry is written with the report, in the same local activity.
    if (state.final) return;
    await publish(run);
    if (state.final) return;
    if (tracking.cancelledHeard !== undefined && tracking.deadline === 'running') await settle(run, transactionId);
    else if (!woken && tracking.deadline === 'running') await poll(run, transactionId);
  }
}

async function poll(run: Run, transactionId: string): Promise<void> {
  try {
    const { status, updatedAt } = await fetchOutgoingStatus({ transactionId });
    advance(run, { status, source: 'poll', updatedAt });
    if (!run.state.final) await publish(run);
  } catch (e) {
    // A failed poll changes nothing: the next poll or a webhook will tell.
    log.warn('status poll failed', { error: describe(e).message });
  }
}

/**
 * A CANCELLED heard before the deadline's timer was seen to fire. The timer may have fired in the same activation (the
 * webhook of the cancel call of a worker that died before recording it: signals are handled first, the timer after),
 * so the CANCELLED is confirmed at the network first; that answer comes in a later activation, which sees the timer.
 * Still running then: someone else cancelled the transaction.
 */
async function settle(run: Run, transactionId: string): Promise<void> {
  await fetchOutgoingStatus({ transactionId }).catch((e: unknown) =>
    log.warn('status poll failed', { error: describe(e).message }),
  );
  if (!settleCancelled(run.state, run.tracking, new Date())) return;
  upsertSearchAttributes([{ key: TransferStatus, value: run.state.status }]);
  announce(run);
}

/**
 * The deadline passed without a final answer: the transaction is cancelled at the network. Should the counterparty's
 * final answer beat the cancellation, that answer is the outcome; should the network stay unreachable, the transfer
 * still ends EXPIRED, and the history says the network's transaction may still be open.
 */
async function expire(run: Run, transactionId: string): Promise<void> {
  let answer: { status: string; cancelled: boolean } | 'unreachable';
  try {
    answer = await cancelOutgoingTransaction({
      transactionId,
      reason: 'no answer from the beneficiary VASP before the deadline',
    });
  } catch (e) {
    log.error('the expired transaction could not be cancelled at the network', {
      transactionId,
      error: describe(e).message,
    });
    answer = 'unreachable';
  }
  advance(run, expiryOutcome(answer));
}

/** The final list entry and the report, in one local activity. */
async function finish(run: Run): Promise<void> {
  const view = viewBehind(run) ? outgoingViewUpdate(run.state) : undefined;
  try {
    const { viewWritten } = await finishOutgoingTransfer({
      view,
      report: run.input.report ? reportOf(run.state) : undefined,
    });
    if (view && viewWritten) run.viewVersion = view.version;
  } catch (e) {
    // The transfer's outcome stands; a callback that never succeeds is visible in the history and the log.
    log.error('final status could not be reported', { error: describe(e).message });
  }
  await publish(run);
  await run.announced;
}

/**
 * Applies a status (outgoing/status.ts) and, when it changed and `searchable`, says it in the search attributes; then
 * makes the broadcast announcement the change made due.
 */
function advance(run: Run, change: StatusChange, searchable = true): void {
  if (!applyStatus(run.state, run.tracking, change, new Date())) return;
  if (searchable) upsertSearchAttributes([{ key: TransferStatus, value: run.state.status }]);
  announce(run);
}

/** The after-timeout rule counts from the transaction's creation: its timer ends with the run. */
function startBroadcastTimer(run: Run): void {
  const rule = run.broadcast?.rule;
  if (rule?.when !== 'after-timeout') return;
  void sleep(rule.afterMs).then(
    () => {
      run.broadcastTimeout = true;
      announce(run);
    },
    () => undefined,
  );
}

/**
 * The one transfer.release or transfer.halt (outgoing/status.ts broadcastDue), once due: kept in the state and, with a custody
 * callback URL, delivered by an activity that runs beside the wait and that the run's end waits for.
 */
function announce(run: Run): void {
  const { state } = run;
  if (!run.broadcast) return;
  const due = broadcastDue(run.broadcast.rule, state, run.broadcastTimeout);
  if (!due) return;
  state.broadcast = { ...due, at: new Date().toISOString() };
  if (!run.broadcast.callback) return;
  const input = { id: state.id, event: due.event, body: broadcastCallbackBody(state, state.broadcast) };
  run.announced = deliverTransferCallback(input).then(
    () => undefined,
    (e: unknown) => log.error('the custody system was not told', { event: due.event, error: describe(e).message }),
  );
}

const viewBehind = (run: Run) => run.viewVersion !== run.state.history.length;

/** Tells the console's list where the transfer stands, when that changed since the last time. */
async function publish(run: Run): Promise<void> {
  if (!viewBehind(run)) return;
  const update = outgoingViewUpdate(run.state);
  // Counted as written even when the write fails, so the wait does not wake for it again and again.
  run.viewVersion = update.version;
  try {
    await recordTransferView(update);
  } catch (e) {
    log.warn('the console transfer list could not be updated', { error: describe(e).message });
  }
}

function reportOf(state: TransferState): TransferReport {
  return {
    id: state.id,
    workflowId: state.workflowId,
    status: state.status,
    transactionId: state.transactionId,
    originatorVaspDid: state.originatorVaspDid,
    beneficiaryVaspDid: state.beneficiaryVaspDid,
    mode: state.mode,
    error: state.error,
    history: state.history,
  };
}

function describe(e: unknown): NonNullable<TransferState['error']> {
  const { type, message, details } = summarizeFailure(e);
  if (!(activityCause(e) instanceof ApplicationFailure)) return { type, message };
  const fields = (details[0] ?? {}) as { field?: string; rule?: string };
  return { type, message, field: fields.field, rule: fields.rule };
}

/** What the outgoing policy decides on: metadata only (the customers stay in the sealed request). */
function transferFacts(input: OutgoingTransferInput, state: TransferState): TransferFactsInput {
  return {
    transferId: input.id,
    direction: 'outgoing',
    vaspDid: input.originatorVaspDid,
    counterpartyDid: input.plan?.beneficiaryVaspDid ?? input.beneficiaryVaspDid,
    asset: input.asset,
    amount: input.amount,
    createdAt: state.history[0]?.at ?? new Date().toISOString(),
  };
}
