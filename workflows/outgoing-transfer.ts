import {
  ApplicationFailure,
  condition,
  log,
  patched,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { activityCause, summarizeFailure } from './failures';
import type { Activities } from '../activities';
import type { CreatedTransaction, TransferPlan, TransferReport } from '../activities/outgoing-transfers';
import { TransferStatus } from '../lib/temporal/search-attributes';
import { isFinalNetworkStatus, isNetworkStatus, networkStatusProgress, networkUpdatedAtOf } from '../lib/network-status';
import { outgoingViewUpdate, type TransferViewUpdate } from '../transfer-view/status';
import {
  transactionCreatedUpdate,
  transactionUpdatedSignal,
  transferStatusQuery,
  type TransactionUpdate,
  initialState,
  type TransferState,
} from './outgoing-transfer.messages';

import type { OutgoingTransferInput } from '../outgoing/types';

export type { OutgoingTransferInput } from '../outgoing/types';


// Local activities: each step is short (a few database reads, encryption, one or two HTTP calls) and idempotent, so
// running it in the worker that runs the workflow saves the server round trips of a scheduled activity (several
// history events and a task dispatch each) — most of a transfer's latency at load. Retries keep the same policy;
// past a minute of retrying, Temporal schedules the next attempt with a durable timer.
const { sendOutgoingTransfer, prepareOutgoingTransfer, createOutgoingTransaction } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 30 },
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
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 5 },
});
const { reportTransferStatus, finishOutgoingTransfer } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20 },
});

/**
 * One outgoing Travel Rule transfer: validate and encrypt (activity, which loads the originator's key by
 * VASP DID), create the network's transaction with transactionRef = the transfer id, then wait for the counterparty's
 * answer — webhook signals first, `GET /tx/info` polling as the fallback — until a final status or the deadline, and
 * report the outcome. A refused request (invalid IVMS101, the gateway as originator, an unknown VASP) fails the
 * workflow without retries, with the error naming the field.
 */
export async function outgoingTransfer(input: OutgoingTransferInput): Promise<TransferState> {
  const state: TransferState = initialState(input, workflowInfo().workflowId, new Date());
  let created: CreatedTransaction | undefined;
  /** Updates that arrived before the transaction id was known (a webhook may beat the create activity's result). */
  const early: TransactionUpdate[] = [];

  /** The answer deadline, once the transaction exists; a CANCELLED heard after it is the deadline's own cancellation. */
  let deadline = Infinity;
  /**
   * Since 'answer-deadline-timer' the deadline is a timer of its own and `expired` says that it fired, so every decision
   * about the deadline follows from the history's events. Before, the workflow compared its clock with `deadline`; but
   * when a local activity outlives 80 % of the workflow task timeout, the worker heartbeats the task, and core replays
   * such heartbeats (after a task without commands) as one task with the last one's start time: the activation that
   * started a long poll read a later clock on replay than when it ran, and crossed the deadline where the run had not
   * (12.3 in docs/reliability.md). `deadline` stays for histories recorded before.
   */
  let deadlineTimer = false;
  let expired = false;
  const pastDeadline = () => (deadlineTimer ? expired : Date.now() >= deadline);
  /** A CANCELLED heard while the deadline's timer had not been seen to fire: the wait below settles whose it is. */
  let cancelledHeard: string | undefined;
  /** Settled: the network's CANCELLED came before the deadline, so someone else cancelled the transaction. */
  let cancelledByOthers = false;
  /** The network's `updatedAt` of the newest status applied (ms), when the updates carried one. */
  let networkUpdatedAt: number | undefined;
  /**
   * An update older than the status the workflow holds: the network delivers webhooks concurrently and retries them, so
   * a SENT can arrive after the NOT_READY that followed it. Ordered by the network's `updatedAt` when both have one,
   * else (and on a tie) by how far each status has come. A final status is never stale: nothing follows it; nor is
   * one of the workflow's own (PREPARED, EXPIRED, FAILED), which it sets in order.
   */
  const stale = (status: string, at: number): boolean => {
    if (isFinalNetworkStatus(status) || !isNetworkStatus(status)) return false;
    if (!Number.isNaN(at) && networkUpdatedAt !== undefined && at !== networkUpdatedAt) return at < networkUpdatedAt;
    return networkStatusProgress(status) < networkStatusProgress(state.status);
  };
  /** `searchable` false: the next status follows in the same activation, and one search-attribute upsert says both. */
  const advance = (status: string, source: string, searchable = true, updatedAt?: string) => {
    // The network's CANCELLED webhook can reach the workflow before the cancel call's answer, even in the activation
    // where the deadline's timer fires (signals are handled first): it still means the transfer expired.
    if (status === 'CANCELLED' && !state.final && deadlineTimer && !cancelledByOthers) {
      if (!expired) {
        cancelledHeard ??= source;
        return;
      }
      [status, source] = ['EXPIRED', `deadline: cancelled at the network (${source})`];
    } else if (status === 'CANCELLED' && !state.final && !deadlineTimer && Date.now() >= deadline && patched('expiry-owns-cancelled')) {
      [status, source] = ['EXPIRED', `deadline: cancelled at the network (${source})`];
    }
    if (state.final || status === state.status) return;
    // Histories recorded before this check replay the regressions they applied.
    const at = updatedAt === undefined ? NaN : Date.parse(updatedAt);
    if (ordersStatuses && stale(status, at)) return;
    if (!Number.isNaN(at)) networkUpdatedAt = Math.max(networkUpdatedAt ?? at, at);
    state.status = status;
    state.history.push({ status, at: new Date().toISOString(), source });
    state.final = isFinalNetworkStatus(status) || status === 'FAILED' || status === 'EXPIRED';
    if (searchable) upsertSearchAttributes([{ key: TransferStatus, value: status }]);
  };

  // Histories recorded before the console's transfer list existed replay without its writes (and its wake-ups).
  const writesView = patched('console-transfer-view');
  let viewVersion = 0;
  const viewBehind = () => writesView && viewVersion !== state.history.length;
  /** Tells the console's list where the transfer stands, when that changed since the last time. */
  const publish = async () => {
    if (!viewBehind()) return;
    const update = outgoingViewUpdate(state);
    // Counted as written even when the write fails, so the wait below does not wake for it again and again.
    viewVersion = update.version;
    try {
      await recordTransferView(update);
    } catch (e) {
      log.warn('the console transfer list could not be updated', { error: describe(e).message });
    }
  };

  // Since 'outgoing-one-step': one local activity prepares and creates (and writes the list entry after it), and one
  // writes the final entry and reports: 4 activations and 2 markers per accepted transfer instead of 8 and 5.
  // Histories recorded before replay the separate steps.
  const oneStep = patched('outgoing-one-step');
  // Asked here, in the first activation, not where they are used: asked after a local activity, a patch can be missed on
  // replay. When the activity outlived a workflow-task heartbeat, replay hands its result to the activation before the
  // one that used it, where the patch's marker (recorded in the later task) is not known yet, and the replay fails with
  // a nondeterminism error (the first chaos run on this code: a finished transfer's status query failed).
  const answerDeadlineTimer = patched('answer-deadline-timer');
  const ordersStatuses = patched('outgoing-status-order');
  /** The final list entry and the report, in one local activity when oneStep. */
  const finish = async () => {
    if (!oneStep) {
      await publish();
      return report(input, state);
    }
    const view = viewBehind() ? outgoingViewUpdate(state) : undefined;
    try {
      const { viewWritten } = await finishOutgoingTransfer({ view, report: input.report ? reportOf(state) : undefined });
      if (view && viewWritten) viewVersion = view.version;
    } catch (e) {
      // The transfer's outcome stands; a callback that never succeeds is visible in the history and the log.
      log.error('final status could not be reported', { error: describe(e).message });
    }
    await publish();
  };

  setHandler(transferStatusQuery, () => state);
  setHandler(transactionUpdatedSignal, (update) => {
    if (!state.transactionId) early.push(update);
    else if (update.transactionId === state.transactionId) advance(update.status, update.source, true, update.updatedAt);
  });
  setHandler(transactionCreatedUpdate, async () => {
    await condition(() => created !== undefined || state.error !== undefined);
    return created ?? { error: state.error! };
  });

  /** The list entry the send step wrote for the created transaction, if it wrote one. */
  let sentView: TransferViewUpdate | undefined;
  try {
    if (oneStep) {
      const sent = await sendOutgoingTransfer({ id: input.id, plan: input.plan, view: writesView ? outgoingViewUpdate(state) : undefined });
      state.mode = sent.plan.mode;
      state.beneficiaryVaspDid = sent.plan.beneficiaryVaspDid;
      advance('PREPARED', 'orchestrator', false);
      created = sent.created;
      sentView = sent.view;
    } else {
      const { plan } = await prepareOutgoingTransfer({ id: input.id });
      state.mode = plan.mode;
      state.beneficiaryVaspDid = plan.beneficiaryVaspDid;
      advance('PREPARED', 'orchestrator');
      await publish();
      created = await createOutgoingTransaction({ id: input.id, plan: plan satisfies TransferPlan });
    }
  } catch (e) {
    state.error = describe(e);
    advance('FAILED', 'orchestrator');
    await finish();
    throw ApplicationFailure.create({ type: state.error.type, message: state.error.message, nonRetryable: true, details: [state.error] });
  }

  state.transactionId = created.id;
  state.beneficiaryVaspDid = created.beneficiaryVaspDid ?? state.beneficiaryVaspDid;
  advance(created.status, 'network', true, networkUpdatedAtOf(created.transaction));
  for (const update of early.splice(0)) if (update.transactionId === created.id) advance(update.status, update.source, true, update.updatedAt);
  // What the send step wrote counts when it is where the workflow stands (no webhook got in between). Compared by
  // version and status only: the entry also holds the first activation's clock reading, which differs on replay.
  if (sentView && sentView.version === state.history.length && sentView.status === state.status) viewVersion = sentView.version;
  await publish();

  deadlineTimer = answerDeadlineTimer;
  // The timer is only cancelled with the workflow, whose other waits then end it too.
  if (deadlineTimer) void sleep(input.answerDeadlineMs).then(() => (expired = true), () => undefined);
  else deadline = Date.now() + input.answerDeadlineMs;
  while (!state.final) {
    if (pastDeadline()) {
      if (cancelledHeard !== undefined) advance('EXPIRED', `deadline: cancelled at the network (${cancelledHeard})`);
      else await expire(created.id, advance);
      break;
    }
    // Woken early by a final status, the deadline, a CANCELLED to settle or, for the console's list, by any other change
    // a webhook brought.
    const woken = await condition(
      () => state.final || viewBehind() || expired || cancelledHeard !== undefined,
      deadlineTimer ? input.pollIntervalMs : Math.min(input.pollIntervalMs, deadline - Date.now()),
    );
    // A final status's entry is written with the report (oneStep), in the same local activity.
    if (state.final && oneStep) break;
    await publish();
    if (state.final) break;
    if (cancelledHeard !== undefined && !expired) {
      // Heard before the deadline's timer was seen to fire. It may have fired in the same activation (the webhook of
      // the cancel call of a worker that died before recording it: signals are handled first, the timer after), so the
      // CANCELLED is confirmed at the network first; that answer comes in a later activation, which sees the timer.
      // Still not expired then: someone else cancelled the transaction.
      await fetchOutgoingStatus({ transactionId: created.id }).catch((e: unknown) => log.warn('status poll failed', { error: describe(e).message }));
      if (!expired) {
        cancelledByOthers = true;
        advance('CANCELLED', cancelledHeard);
      }
      continue;
    }
    if (woken || pastDeadline()) continue;
    try {
      const { status, updatedAt } = await fetchOutgoingStatus({ transactionId: created.id });
      advance(status, 'poll', true, updatedAt);
      if (!(state.final && oneStep)) await publish();
    } catch (e) {
      // A failed poll changes nothing: the next poll or a webhook will tell.
      log.warn('status poll failed', { error: describe(e).message });
    }
  }
  await finish();
  return state;
}

/**
 * The deadline passed without a final answer: the transaction is cancelled at the network (histories recorded before
 * this step existed replay without it). Should the counterparty's final answer beat the cancellation, that answer is
 * the outcome; should the network stay unreachable, the transfer still ends EXPIRED, and the history says the
 * network's transaction may still be open.
 */
async function expire(transactionId: string, advance: (status: string, source: string) => void): Promise<void> {
  if (!patched('cancel-expired-at-network')) return advance('EXPIRED', 'deadline');
  try {
    const { status, cancelled } = await cancelOutgoingTransaction({ transactionId, reason: 'no answer from the beneficiary VASP before the deadline' });
    if (cancelled) advance('EXPIRED', 'deadline: cancelled at the network');
    else advance(status, 'network');
  } catch (e) {
    log.error('the expired transaction could not be cancelled at the network', { transactionId, error: describe(e).message });
    advance('EXPIRED', 'deadline: not cancelled at the network (unreachable), the transaction may still be open there');
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

async function report(input: OutgoingTransferInput, state: TransferState): Promise<void> {
  if (!input.report) return;
  try {
    await reportTransferStatus(reportOf(state));
  } catch (e) {
    // The transfer's outcome stands; a callback that never succeeds is visible in the history and the log.
    log.error('final status could not be reported', { error: describe(e).message });
  }
}

function describe(e: unknown): NonNullable<TransferState['error']> {
  const { type, message, details } = summarizeFailure(e);
  if (!(activityCause(e) instanceof ApplicationFailure)) return { type, message };
  const fields = (details[0] ?? {}) as { field?: string; rule?: string };
  return { type, message, field: fields.field, rule: fields.rule };
}
