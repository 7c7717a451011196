import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { NeedsReview } from '../lib/temporal/search-attributes';
import { depositMismatch } from '../wallet-proofs/status';
import type { ProofEvidence, ProofStatus } from '../wallet-proofs/types';
import { summarizeFailure } from './failures';
import {
  depositObservedUpdate,
  proofStateQuery,
  reviewProofUpdate,
  submitSignatureUpdate,
  type DepositObserved,
  type ProofDecision,
  type ProofState,
  type WalletProofInput,
} from './wallet-proof.messages';

/** Each write is one short, idempotent transaction: retried until the database answers. */
const store = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
/** A malformed signature is a ValidationError: not retried, the update fails with it. */
const verify = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

const SYSTEM = 'system:wallet-proof';

interface Run {
  input: WalletProofInput;
  state: ProofState;
  /** An update is writing its outcome: the deadline waits for it rather than race it. */
  busy: boolean;
  /** The deadline passed with no update running: EXPIRED is being written, and no message is taken any more. */
  expiring?: boolean;
  decision?: ProofDecision;
}

/**
 * One ownership proof of a self-hosted wallet, PENDING until it is VERIFIED, REJECTED or EXPIRED: a signature over
 * the challenge before it expires, a deposit of the exact test amount from the wallet before the deadline, or a
 * compliance officer's decision on a screenshot or self-declaration (escalated when it waits too long). The row and
 * its audit entry are written by activities; the workflow holds no key and no personal data.
 */
export async function walletProof(input: WalletProofInput): Promise<ProofState> {
  const run = begin(input);
  if (input.method === 'SIGNATURE') await awaitSignature(run);
  else if (input.method === 'SMALL_DEPOSIT') await awaitDeposit(run);
  else await awaitReview(run);
  await condition(allHandlersFinished);
  run.state.phase = 'done';
  return run.state;
}

function begin(input: WalletProofInput): Run {
  const run: Run = {
    input,
    state: { id: input.id, phase: phaseOf(input), status: 'PENDING', escalated: false },
    busy: false,
  };
  const { state } = run;
  setHandler(proofStateQuery, () => state);
  setHandler(submitSignatureUpdate, (req) => onSignature(run, req.signature), {
    validator: (_arg: unknown) => refuse(pendingProblem(run, 'SIGNATURE')),
  });
  setHandler(depositObservedUpdate, (deposit) => onDeposit(run, deposit), {
    validator: (deposit) => refuse(pendingProblem(run, 'SMALL_DEPOSIT', reportedAt(deposit))),
  });
  setHandler(
    reviewProofUpdate,
    // Answers once the decision is written, so the caller reads the proof as it now is.
    async (decision) => {
      run.decision = decision;
      await condition(() => state.status !== 'PENDING');
      return state;
    },
    { validator: (_arg: unknown) => refuse(pendingProblem(run, 'REVIEW')) },
  );
  return run;
}

const phaseOf = (input: WalletProofInput): ProofState['phase'] =>
  input.method === 'SIGNATURE'
    ? 'awaiting-signature'
    : input.method === 'SMALL_DEPOSIT'
      ? 'awaiting-deposit'
      : 'awaiting-review';

/**
 * Why the proof takes no such message now (the API answers 409), or undefined. `at`: when the message was received,
 * if earlier than now. A deposit reported before the deadline is taken in the task where the deadline's timer fires
 * too (updates are handled before timers in one activation), and the deadline then waits for it (untilDeadline).
 */
function pendingProblem(run: Run, kind: 'SIGNATURE' | 'SMALL_DEPOSIT' | 'REVIEW', at = Date.now()): string | undefined {
  const method = run.input.method;
  const takes = kind === 'REVIEW' ? method === 'SCREENSHOT' || method === 'SELF_DECLARATION' : method === kind;
  if (!takes) return `proof ${run.input.id} is a ${method} proof`;
  if (run.state.status !== 'PENDING' || run.decision || run.busy || run.expiring)
    return `proof ${run.input.id} is no longer pending (${run.state.status})`;
  if (at >= Date.parse(run.input.deadline)) return `proof ${run.input.id} expired at ${run.input.deadline}`;
  return undefined;
}

/** The API's receipt time of a deposit report, never later than now (a clock ahead gains nothing). */
function reportedAt(deposit: DepositObserved): number {
  const received = deposit.receivedAt === undefined ? NaN : Date.parse(deposit.receivedAt);
  return Number.isNaN(received) ? Date.now() : Math.min(received, Date.now());
}

function refuse(problem: string | undefined): void {
  if (problem) throw new Error(problem);
}

const remaining = (run: Run) => Math.max(0, Date.parse(run.input.deadline) - Date.now());

/** Signature: the update verifies and writes; the challenge's expiry is the deadline. */
async function awaitSignature(run: Run): Promise<void> {
  await untilDeadline(run, 'the challenge expired before a valid signature arrived');
}

/** Small deposit: deposits observed are checked by the update; the deadline expires the test. */
async function awaitDeposit(run: Run): Promise<void> {
  await untilDeadline(run, 'no deposit of the test amount from the wallet arrived before the deadline');
}

/** Waits for an update to finish the proof, or expires it at the deadline (after a running update is done). */
async function untilDeadline(run: Run, reason: string): Promise<void> {
  if (await condition(() => run.state.status !== 'PENDING', remaining(run))) return;
  await condition(() => !run.busy);
  if (run.state.status !== 'PENDING') return;
  run.expiring = true;
  await finish(run, 'EXPIRED', { reason });
}

/** Screenshot or declaration: a compliance officer decides; escalated at the review deadline, expired at the last. */
async function awaitReview(run: Run): Promise<void> {
  upsertSearchAttributes([{ key: NeedsReview, value: true }]);
  const decided = () => run.decision !== undefined;
  if (!(await condition(decided, run.input.reviewDeadline))) {
    run.state.escalated = true;
    await store.recordAudit({
      actor: SYSTEM,
      action: 'wallet-proof.review.escalated',
      subject: run.input.id,
      details: { waited: run.input.reviewDeadline },
    });
    if (!(await condition(decided, remaining(run)))) {
      upsertSearchAttributes([{ key: NeedsReview, value: false }]);
      await finish(run, 'EXPIRED', { reason: 'nobody reviewed the proof before its deadline' });
      return;
    }
  }
  const d = run.decision!;
  upsertSearchAttributes([{ key: NeedsReview, value: false }]);
  await finish(run, d.decision === 'approve' ? 'VERIFIED' : 'REJECTED', {
    reason: d.reason,
    evidence: { reviewedBy: d.actor, decision: d.decision },
    actor: d.actor,
    principal: d.principal,
  });
}

async function onSignature(run: Run, signature: string): Promise<ProofState> {
  run.busy = true;
  try {
    let check;
    try {
      check = await verify.verifyProofSignature({ id: run.input.id, signature });
    } catch (e) {
      // Malformed (wrong length, not hex/base64): the update fails with the field and rule; the proof stays PENDING.
      const failure = summarizeFailure(e);
      if (failure.type === 'ValidationError') throw ApplicationFailure.nonRetryable(failure.message, failure.type);
      throw e;
    }
    if (check.valid) await finish(run, 'VERIFIED', { evidence: { signature } });
    else await finish(run, 'REJECTED', { reason: check.reason, evidence: { signature } });
    return run.state;
  } finally {
    run.busy = false;
  }
}

async function onDeposit(run: Run, deposit: DepositObserved): Promise<ProofState> {
  run.busy = true;
  try {
    const expected = { address: run.input.address, amount: run.input.depositAmount ?? '' };
    const mismatch = depositMismatch(expected, deposit);
    // A wrong deposit does not reject the test: anyone who knows the deposit address could send one, and the customer
    // may still send the exact amount before the deadline. Its reason is recorded and shown.
    if (mismatch) {
      run.state.reason = mismatch;
      await store.recordWalletProofMismatch({ id: run.input.id, reason: mismatch, evidence: { ...deposit } });
    } else {
      await finish(run, 'VERIFIED', { evidence: { ...deposit } });
    }
    return run.state;
  } finally {
    run.busy = false;
  }
}

async function finish(
  run: Run,
  status: Exclude<ProofStatus, 'PENDING'>,
  opts: { reason?: string; evidence?: ProofEvidence; actor?: string; principal?: unknown },
): Promise<void> {
  await store.finishWalletProof({
    id: run.input.id,
    status,
    ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
    ...(opts.evidence ? { evidence: opts.evidence } : {}),
    actor: opts.actor ?? SYSTEM,
    ...(opts.principal ? { principal: opts.principal } : {}),
    ...(status === 'VERIFIED' ? { validDays: run.input.validDays } : {}),
  });
  run.state.status = status;
  if (opts.reason !== undefined) run.state.reason = opts.reason;
  else if (status === 'VERIFIED') delete run.state.reason;
}
