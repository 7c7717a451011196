import { CancellationScope, condition, setHandler, sleep } from '@temporalio/workflow';
import { walletProofVerifiedSignal } from './wallet-proof.messages';

/**
 * The wait of a workflow in AWAITING_PROOF for the customer's VERIFIED ownership proof of a self-hosted wallet (a
 * deposit's sending wallet, an outgoing transfer's beneficiary wallet). Not a workflow: what both share.
 */

/**
 * How often a wait asks the store again without a signal: the wallet-proof workflow's signal may be lost (its notify
 * step failed, or the proof was verified while the waiter registered).
 */
const PROOF_RECHECK = '1 hour';

/** Counts walletProofVerifiedSignal from now on: each wakes a wait to ask the store again. */
export function countProofSignals(): () => number {
  let signals = 0;
  setHandler(walletProofVerifiedSignal, () => {
    signals++;
  });
  return () => signals;
}

/**
 * The wait's deadline: a timer of its own, so the decision follows from the history's events (never from the
 * workflow's clock, which replay may read later than the run did). Cancelled by its owner once a proof is there.
 */
export interface ProofDeadline {
  passed: () => boolean;
  cancel: () => void;
}

export function startProofDeadline(ms: number): ProofDeadline {
  let passed = false;
  const scope = new CancellationScope();
  scope
    .run(() => sleep(ms))
    .then(
      () => (passed = true),
      () => undefined,
    );
  return { passed: () => passed, cancel: () => scope.cancel() };
}

/** What one workflow's wait asks through: its own activities, its own deadline. */
export interface ProofWait<Answer> {
  deadline: ProofDeadline;
  /** From countProofSignals. */
  signals: () => number;
  /** Registers the workflow as a waiter of the wallet (again: idempotent) and asks the store for a usable proof. */
  check: () => Promise<Answer>;
  /** Whether the check's answer is the customer's VERIFIED proof. */
  verified: (answer: Answer) => boolean;
  /** Removes the waiter. */
  stop: () => Promise<unknown>;
  /** Once, after the first check found none: the workflow says it waits. */
  waiting?: () => Promise<void>;
  /** Ends the wait before the deadline (a person's decision). */
  interrupted?: () => boolean;
}

/**
 * Checks, then waits for walletProofVerifiedSignal or PROOF_RECHECK and checks again, until a check answers a VERIFIED
 * proof (that answer: the caller cancels the deadline) or the deadline passed or the wait was interrupted (undefined,
 * the waiter removed). A REJECTED or EXPIRED proof changes nothing: another may follow.
 */
export async function waitForProof<Answer>(wait: ProofWait<Answer>): Promise<Answer | undefined> {
  const ended = () => wait.deadline.passed() || (wait.interrupted?.() ?? false);
  for (let first = true; ; first = false) {
    const answer = await wait.check();
    if (wait.verified(answer)) return answer;
    if (first && wait.waiting) await wait.waiting();
    if (ended()) break;
    const seen = wait.signals();
    await condition(() => wait.signals() !== seen || ended(), PROOF_RECHECK);
  }
  await wait.stop();
  return undefined;
}
