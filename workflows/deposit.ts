import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  addBusinessDays,
  decisionProblem,
  depositStatusFor,
  isFinalDepositStatus,
  nextRecheck,
  notifyAgain,
  RETURN_CONFIRMATION_BUSINESS_DAYS,
} from '../deposits/status';
import type { DepositDecisionRequest, DepositMatch, DepositStatus } from '../deposits/types';
import { summarizeFailure } from './failures';
import {
  depositDecisionUpdate,
  depositMatchMovedSignal,
  depositReturnedSignal,
  depositStateQuery,
  type DepositInput,
  type DepositState,
} from './deposit.messages';
import { countProofSignals, startProofDeadline, waitForProof } from './proof-wait';

/** Each write is one short, idempotent transaction: retried until the database answers. */
const STORE_RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' };
const store = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: STORE_RETRY });
/**
 * A check calls the network: retried with backoff while it is down or rate-limited (the report is idempotent there).
 * At most a minute apart: each refusal by the group's budget counts as an attempt, so under a burst of 429s the
 * doubling would otherwise reach minutes between reports while the deposit's funds wait on them.
 */
const NETWORK_RETRY = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' };
const network = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: NETWORK_RETRY });
/** Where a run's checks and writes go. */
interface Steps {
  checkDeposit: Activities['checkDeposit'];
  transitionDeposit: Activities['transitionDeposit'];
}
/** Runs from before local steps keep their scheduled activities. */
const scheduledSteps: Steps = { checkDeposit: network.checkDeposit, transitionDeposit: store.transitionDeposit };
/**
 * The same steps as local activities, run in the worker that runs the workflow: each is short and idempotent, and this
 * saves a trip through the task queue and a workflow task per step. Past 10 s of retries, the next attempt waits on a
 * durable timer, so a network down for hours holds no worker slot.
 */
const localSteps: Steps = {
  transitionDeposit: proxyLocalActivities<Activities>({
    startToCloseTimeout: '30 seconds',
    localRetryThreshold: '10 seconds',
    retry: STORE_RETRY,
  }).transitionDeposit,
  checkDeposit: proxyLocalActivities<Activities>({
    startToCloseTimeout: '1 minute',
    localRetryThreshold: '10 seconds',
    retry: NETWORK_RETRY,
  }).checkDeposit,
};

// The wait for a wallet's proof registers and re-checks through this: retried until the database answers.
const { awaitDepositProof } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** A callback is retried until the custody system acknowledges it: for hours if it is down. */
const custody = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

const SYSTEM = 'system:deposit';
const CHECKS_PER_RUN = 500;

/**
 * One deposit the custody system reported, HELD until it may be credited (RELEASED) or must go back (RETURN_REQUIRED):
 * below the receiving subsidiary's threshold it is released at once; otherwise it is reported to the network
 * (tx/notify), which answers the transfer it belongs to or an INCOMPLETE message (AWAITING_DATA) the originator is
 * asked to complete. It checks again on a durable timer with backoff (reporting again within the match window, then
 * reading the message) until the transfer is ACCEPTED (released), DECLINED or REJECTED (return), or an INCOMPLETE
 * message passes the data deadline, counted from the first INCOMPLETE match, when the originator was asked (the
 * subsidiary jurisdiction's deadline action: a return, a release, or a hold for a compliance officer while the checks
 * go on). The network answers one deposit with one message, so a deposit never yields two transfers. The row and its
 * audit entries are written by activities; no personal data passes here.
 */
export async function deposit(input: DepositInput): Promise<DepositState> {
  const state: DepositState = input.resumed?.state ?? { id: input.id, status: 'HELD' };
  const run = begin(input, state);
  await decide(input, state, run);
  // Callbacks to the custody system and the wait for a return's confirmation: absent from runs decided before them.
  if (run.current || patched('deposit-custody-callbacks')) await tellCustody(input, state, run);
  // The officer's update answers from the final state: it finishes before the run does.
  await condition(allHandlersFinished);
  return state;
}

/** Where the run's steps go, and the handlers of the query, the signals and the officer's update. */
function begin(input: DepositInput, state: DepositState): Run {
  // One patch for the four below, asked first: a run that has it takes all four changes without asking them, and so
  // writes one patch marker and one upsert instead of four of each. Runs started before it ask the four as they did.
  const current = patched('deposit-patches-folded');
  const run: Run = {
    current,
    matchMoved: 0,
    returned: false,
    steps: current || patched('deposit-local-steps') ? localSteps : scheduledSteps,
    // Asked in the first activation, and only by runs whose input says no callback URL is configured.
    callsCustody: input.custodyCallbacks !== false || (!current && !patched('deposit-callbacks-with-url')),
  };
  setHandler(depositStateQuery, () => state);
  setHandler(depositMatchMovedSignal, () => {
    run.matchMoved++;
  });
  setHandler(
    depositDecisionUpdate,
    async (request) => {
      run.decision = request;
      // Answers once the deposit is final: by this decision, or by the workflow's own if that was written first.
      await condition(() => isFinalDepositStatus(state.status));
      if (state.decidedBy !== request.actor)
        throw ApplicationFailure.nonRetryable(`the deposit became ${state.status} before the decision was taken`);
      return { ...state };
    },
    {
      validator: (request) => {
        const problem = decisionProblem(state.status, run.decision, request);
        if (problem) throw new Error(problem);
      },
    },
  );
  setHandler(depositReturnedSignal, () => {
    run.returned = true;
  });
  return run;
}

/**
 * The decision, told to the custody system when a callback URL is configured (deposit.release or deposit.return,
 * retried until acknowledged). A return then waits for its confirmation (POST /v1/deposits/:id/returned, which writes
 * RETURNED and signals): not confirmed within 10 business days of the decision, it escalates once, and the run ends; a
 * later confirmation is still taken by the route.
 */
async function tellCustody(input: DepositInput, state: DepositState, run: Run): Promise<void> {
  const event = state.status === 'RELEASED' ? 'deposit.release' : 'deposit.return';
  if (run.callsCustody) await custody.deliverCustodyCallback({ id: state.id, event });
  if (state.status !== 'RETURN_REQUIRED') return;
  const now = Date.now();
  const deadline = input.returnConfirmationMs
    ? now + input.returnConfirmationMs
    : addBusinessDays(now, RETURN_CONFIRMATION_BUSINESS_DAYS);
  if (await condition(() => run.returned, deadline - now)) {
    state.status = 'RETURNED';
    return;
  }
  await store.escalateReturn({ id: state.id, deadline: new Date(deadline).toISOString() });
  state.escalated = true;
}

/**
 * What a run carries beside its state: what ends a wait early (a compliance officer's decision, once the update
 * delivered it, taken at the workflow's next step; the count of depositMatchMovedSignal), whether the custody system
 * confirmed a return (depositReturnedSignal) and where its steps run.
 */
interface Run {
  /** Started with every change the four earlier patches guard ('deposit-patches-folded'). */
  current: boolean;
  decision?: DepositDecisionRequest;
  matchMoved: number;
  returned: boolean;
  /** Whether the decision is called back (deliverCustodyCallback): not when no callback URL is configured. */
  callsCustody: boolean;
  /** The run's checks and writes. */
  steps: Steps;
}

/** What one check passes to the next, and one run to the next (DepositInput.resumed). */
interface Checks {
  /** Until when a check reports the deposit to the network again (tx/notify) rather than reading its message. */
  matchUntil: number;
  /** The data deadline, in epoch ms. */
  deadline: number;
  /**
   * True while the deadline waits to be counted from the originator's request: the first INCOMPLETE match starts it
   * (`dataDeadlineMs` from then) and sets this false. False from the start on runs whose input has no
   * `dataDeadlineMs`, or that continue a run which started it (the deadline then stands as given).
   */
  countFromRequest: boolean;
  /** The last wait between checks: the backoff doubles from it. */
  waitMs?: number;
  /** Past the deadline, held for a compliance officer (deadlineAction 'review'): checks go on, the deadline acted. */
  reviewing: boolean;
}

async function decide(input: DepositInput, state: DepositState, run: Run): Promise<void> {
  // Decided at intake; absent from the deposits reported before, whose histories take the paths below unchanged.
  if (input.proofRequired) return awaitProof(input, state, run);
  if (input.classification === 'BELOW_THRESHOLD') {
    await write(run, state, 'RELEASED', 'below the receiving subsidiary’s Travel Rule threshold');
    return;
  }
  const checks: Checks = {
    matchUntil: input.resumed?.matchUntil ?? Date.now() + input.matchWindowMs,
    deadline: input.resumed?.deadline ?? Date.parse(input.dataDeadlineAt),
    waitMs: input.resumed?.waitMs,
    reviewing: input.resumed?.reviewing ?? false,
    // Asked in the first activation (before any local activity), and only by runs whose input gives the wait.
    countFromRequest:
      input.dataDeadlineMs !== undefined &&
      input.resumed?.deadline === undefined &&
      (run.current || patched('deposit-deadline-from-request')),
  };
  for (let count = 0; ; count++) {
    if (run.decision) return writeDecision(run, state, run.decision);
    // A deposit may wait days: each run keeps its history short, and the next one carries on where it stopped.
    if (count >= (input.checksPerRun ?? CHECKS_PER_RUN) || workflowInfo().continueAsNewSuggested)
      await continueAsNew<typeof deposit>({ ...input, resumed: resumeFrom(state, checks) });
    const match = await check(input, state, run, checks);
    if (!match) {
      await pause(run, backoff(input, checks));
      continue;
    }
    const next = depositStatusFor(match.networkStatus);
    if (isFinalDepositStatus(next)) return writeFinal(run, state, next, match);
    const started = next === 'AWAITING_DATA' && startDeadline(input, checks, match);
    if (await actOnDeadline(input, state, run, checks, next, match)) return;
    const moved = await writeIfMoved(run, state, next, match, started ? checks.deadline : undefined);
    await pause(run, waitAfterMatch(input, checks, next, moved));
  }
}

/** Where the next run carries on: its continue-as-new input. */
function resumeFrom(state: DepositState, checks: Checks): NonNullable<DepositInput['resumed']> {
  const { matchUntil, waitMs, reviewing, deadline, countFromRequest } = checks;
  return {
    state,
    matchUntil,
    waitMs,
    ...(reviewing ? { reviewing } : {}),
    ...(countFromRequest === false ? { deadline } : {}),
  };
}

/**
 * The first INCOMPLETE match: the network has just asked the originator for its data, and the subsidiary's wait
 * (`dataDeadlineMs`) counts from its answer. True when it started the deadline here (the match's write records it).
 */
function startDeadline(input: DepositInput, checks: Checks, match: DepositMatch): boolean {
  if (!checks.countFromRequest || input.dataDeadlineMs === undefined) return false;
  checks.deadline = (match.checkedAt ?? Date.now()) + input.dataDeadlineMs;
  checks.countFromRequest = false;
  return true;
}

/**
 * One check at the network: the deposit reported again (tx/notify) when notifyAgain says so, else its message read. A
 * refusal for good (a 400 is not retried) answers undefined: the deposit stays held, with the reason for a person to
 * see, and is checked again after the next wait rather than lost with a failed workflow.
 */
async function check(
  input: DepositInput,
  state: DepositState,
  run: Run,
  checks: Checks,
): Promise<DepositMatch | undefined> {
  try {
    return await run.steps.checkDeposit({
      id: input.id,
      notify: notifyAgain(state.networkStatus, Date.now() < checks.matchUntil),
    });
  } catch (e) {
    const failure = summarizeFailure(e);
    const reason = `the network refused the check: ${failure.type}: ${failure.message}`.slice(0, 500);
    if (reason !== state.reason) await write(run, state, state.status, reason);
    return undefined;
  }
}

/** The matched transfer's final status decides: ACCEPTED releases the deposit, DECLINED or REJECTED returns it. */
async function writeFinal(run: Run, state: DepositState, next: DepositStatus, match: DepositMatch): Promise<void> {
  const why =
    next === 'RELEASED' ? 'the matched transfer was accepted' : `the matched transfer was ${match.networkStatus}`;
  await write(run, state, next, why, match);
}

/**
 * An INCOMPLETE message at or past the data deadline, once: the subsidiary's deadline action returns or releases the
 * deposit (true: decided), or holds it for a compliance officer while the checks go on.
 */
async function actOnDeadline(
  input: DepositInput,
  state: DepositState,
  run: Run,
  checks: Checks,
  next: DepositStatus,
  match: DepositMatch,
): Promise<boolean> {
  if (next !== 'AWAITING_DATA' || Date.now() < checks.deadline || checks.reviewing) return false;
  const action = input.deadlineAction ?? 'return';
  if (action === 'review') {
    await write(
      run,
      state,
      'AWAITING_DATA',
      'the originator’s data did not arrive before the deadline: held for a compliance officer to release or return',
      match,
    );
    checks.reviewing = true;
    return false;
  }
  const [status, why] =
    action === 'release'
      ? (['RELEASED', 'the subsidiary’s policy releases a deposit whose originator’s data did not arrive'] as const)
      : (['RETURN_REQUIRED', 'the originator’s Travel Rule data did not arrive before the deadline'] as const);
  await write(run, state, status, why, match);
  return true;
}

/** Writes the match when it moved (found, or its message went on), with the deadline when it started: true then. */
async function writeIfMoved(
  run: Run,
  state: DepositState,
  next: DepositStatus,
  match: DepositMatch,
  deadline?: number,
): Promise<boolean> {
  const moved =
    next !== state.status ||
    match.transactionId !== state.transactionId ||
    match.networkStatus !== state.networkStatus ||
    deadline !== undefined;
  if (moved) await write(run, state, next, undefined, match, deadline !== undefined ? { deadline } : {});
  return moved;
}

/** The next wait between checks, doubling from the last one, or from the first wait again when `restart`. */
function backoff(input: DepositInput, checks: Checks, restart = false): number {
  checks.waitMs = nextRecheck(restart ? undefined : checks.waitMs, input.recheckInitialMs, input.recheckMaxMs);
  return checks.waitMs;
}

/**
 * The wait after a check that found the deposit's match. A match that moved is near its answer: the backoff starts
 * again from the first wait rather than the one it had grown to. An INCOMPLETE message is checked once more at the
 * deadline rather than after it.
 */
function waitAfterMatch(input: DepositInput, checks: Checks, next: DepositStatus, moved: boolean): number {
  const wait = backoff(input, checks, moved);
  const untilDeadline = checks.reviewing ? 0 : checks.deadline - Date.now();
  return next === 'AWAITING_DATA' && untilDeadline > 0 ? Math.min(wait, untilDeadline) : wait;
}

/**
 * The wait between checks, cut short by an officer's decision or by the webhook's word that the matched message moved.
 * The same timer as a plain sleep when neither comes, so the histories of runs from before them replay unchanged.
 */
async function pause(run: Run, ms: number): Promise<void> {
  if (run.decision) return;
  const seen = run.matchMoved;
  await condition(() => run.decision !== undefined || run.matchMoved !== seen, ms);
}

/** The officer's decision, written under the officer's name with the reason given (audited with the principal). */
async function writeDecision(run: Run, state: DepositState, decision: DepositDecisionRequest): Promise<void> {
  await write(
    run,
    state,
    decision.decision === 'release' ? 'RELEASED' : 'RETURN_REQUIRED',
    decision.reason,
    undefined,
    {
      actor: decision.actor,
      decision,
    },
  );
}

/**
 * A deposit from a self-hosted wallet above the subsidiary's proof threshold. It is not reported to the network: no
 * originator VASP sends Travel Rule data for a self-hosted wallet, so tx/notify would only make an INCOMPLETE message
 * nobody completes. The customer's VERIFIED ownership proof of the sending wallet releases it, at once when it exists;
 * otherwise the deposit is AWAITING_PROOF, a waiter of the wallet (proof-wait.ts), until an officer's decision or the
 * data deadline, which requires a return.
 */
async function awaitProof(input: DepositInput, state: DepositState, run: Run): Promise<void> {
  const workflowId = workflowInfo().workflowId;
  const signals = countProofSignals();
  const deadline = startProofDeadline(Math.max(1, Date.parse(input.dataDeadlineAt) - Date.now()));
  const proof = await waitForProof({
    deadline,
    signals,
    check: () => awaitDepositProof({ id: input.id, workflowId }),
    verified: (answer) => !!answer.proofId,
    stop: () => awaitDepositProof({ id: input.id, workflowId, stop: true }),
    waiting: () =>
      write(run, state, 'AWAITING_PROOF', 'from a self-hosted wallet: waiting for the customer’s ownership proof'),
    interrupted: () => run.decision !== undefined,
  });
  if (proof?.proofId) {
    deadline.cancel();
    await write(
      run,
      state,
      'RELEASED',
      `the customer’s VERIFIED ownership proof ${proof.proofId} of the self-hosted sending wallet`,
      undefined,
      { proofId: proof.proofId },
    );
    return;
  }
  if (run.decision) {
    deadline.cancel();
    return writeDecision(run, state, run.decision);
  }
  await write(
    run,
    state,
    'RETURN_REQUIRED',
    'no VERIFIED ownership proof of the self-hosted sending wallet before the deadline',
  );
}

async function write(
  run: Run,
  state: DepositState,
  status: DepositStatus,
  reason?: string,
  match?: DepositMatch,
  by: { proofId?: string; actor?: string; decision?: DepositDecisionRequest; deadline?: number } = {},
): Promise<void> {
  const actor = by.actor ?? SYSTEM;
  await run.steps.transitionDeposit({
    id: state.id,
    status,
    ...(reason !== undefined ? { reason } : {}),
    ...(match ? { match } : {}),
    ...(by.proofId ? { proofId: by.proofId } : {}),
    ...(by.deadline !== undefined ? { dataDeadlineAt: new Date(by.deadline).toISOString() } : {}),
    ...(by.decision ? { decision: by.decision } : {}),
    actor,
  });
  state.status = status;
  if (isFinalDepositStatus(status)) state.decidedBy = actor;
  if (reason !== undefined) state.reason = reason;
  if (match) {
    state.transactionId = match.transactionId;
    state.networkStatus = match.networkStatus;
  }
}
