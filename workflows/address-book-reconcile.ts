import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  continueAsNew,
  defineQuery,
  isCancellation,
  proxyActivities,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { activityCause, summarizeFailure } from './failures';
import type { Activities } from '../activities';
import type {
  DeltaSummary,
  ReconcileMode,
  ReconcilePhase,
  ReconcileProgress,
  ReconcileReport,
  ReconcileTrigger,
  RunSettings,
} from '../address-book/types';

/** Progress of the run: phase, rows and chunks done. Shared with the API and the CLI (`--follow`). */
export const addressBookProgressQuery = defineQuery<ReconcileProgress>('addressBookProgress');

export interface ReconcileInput {
  vaspDid: string;
  trigger: ReconcileTrigger;
  /** Default 'auto': incremental when the last verified result still matches the network, else full. */
  mode?: ReconcileMode;
  /** Set only by continue-as-new: where the run stands. Ids and counts only. */
  resume?: RunState;
}

interface RunState {
  runId: string;
  startedAtMs: number;
  phase: ReconcilePhase;
  execution: number;
  settings?: RunSettings;
  mode?: 'full' | 'incremental';
  delta?: DeltaSummary;
  /** Listing total the run expects once its removals are processed, and once its additions are. */
  expectedAfterRemovals?: number;
  expectedFinal?: number;
  /** Next chunk to upload (1-based). */
  nextChunk: number;
  rowsDone: number;
  chunksDone: number;
  countReached?: boolean;
  /** A full run's mirror of the expected result is built (it is built beside the removals and uploads). */
  mirrorBuilt?: boolean;
  /** A first sync computes its delta head first (abComputeHead) and uploads the head's chunks beside the rest of the
   *  diff; set once the listing came back empty. */
  headFirst?: boolean;
  phases: Partial<Record<ReconcilePhase, number>>;
}

// Ten minutes: the start reads the network's count, a call that may ride out transient failures for five. It
// heartbeats, so a worker that dies during it is noticed within the heartbeat timeout, not the ten minutes.
const quick = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
} as const;
const { abBeginRun } = proxyActivities<Activities>(quick);
// Long activities heartbeat; a worker that dies is noticed within the heartbeat timeout and the attempt moves on. Each
// attempt resumes from the step's checkpoint and its calls ride out transient network failures themselves, so an
// attempt fails only on a worker's death or an outage longer than the client's policy: those are retried without a
// count, up to half a day, and a permanent refusal (non-retryable) fails the run at once.
const long = {
  startToCloseTimeout: '2 hours',
  scheduleToCloseTimeout: '12 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const;
const {
  abListNetwork,
  abComputeHead,
  abComputeDelta,
  abBuildMirror,
  abApplyRemovals,
  abRegisterAdds,
  abUploadChunk,
  abVerify,
  abFinishRun,
} = proxyActivities<Activities>(long);

/** One execution of the run: the state it carries across continue-as-new, and what lives only in this execution. */
interface Run {
  input: ReconcileInput;
  s: RunState;
  phaseStarted: number;
  /** A full run's mirror build, running beside the removals and uploads; an execution never ends with it pending. */
  mirror: Promise<void>;
  mirrorStarted: boolean;
  /** A first sync's head chunks uploaded during this execution's diff: they count towards its chunks. */
  headUploaded: number;
}

/** The settings' timeouts for the waiting steps, and the activity that waits for the network's count. */
type Waiting = ReturnType<typeof waitingFor>;

/**
 * Brings one subsidiary's address book at the network in line with the group's registry:
 * list what the network holds (into a staging table), diff, delete what the registry no longer has, add what it has
 * (single registrations for a small delta, CSV chunks otherwise), wait for the network's asynchronous processing,
 * verify, and store a report. Every step is an idempotent activity keyed by the run id, with its progress in Postgres,
 * so a worker crash resumes where it stopped; long uploads continue as new every few chunks to keep history short.
 */
export async function addressBookReconcile(input: ReconcileInput): Promise<ReconcileReport> {
  const run = resume(input);
  const { s } = run;
  try {
    if (s.phase === 'starting') {
      const skipped = await beginRun(run);
      if (skipped) return skipped;
    }
    const waiting = waitingFor(s.settings!);
    if (s.phase === 'listing') await list(run);
    if (s.phase === 'diff') await diff(run, waiting);
    // A full run prepares the next runs' mirror while the network works. An upload starts it once its first chunk is
    // sent: building it takes the database and the CPU the first chunk needs, while the network has nothing to work on yet.
    if (s.delta!.method !== 'upload') startMirror(run);
    if (s.phase === 'removing') await remove(run, waiting);
    s.expectedFinal ??= s.expectedAfterRemovals! + s.delta!.toAdd;
    if (s.phase === 'adding') await add(run, waiting);
    startMirror(run);
    if (s.phase === 'processing') await awaitProcessing(run, waiting);
    let verifiedBy: 'count' | 'listing' | undefined;
    if (s.phase === 'verifying') {
      const verified = await abVerify({
        runId: s.runId,
        vaspDid: input.vaspDid,
        countReached: s.countReached ?? false,
        verify: s.settings!.verify,
      });
      verifiedBy = verified.verifiedBy;
      enter(run, 'reporting');
    }
    await run.mirror;
    const report = await abFinishRun({ runId: s.runId, status: 'succeeded', verifiedBy, phases: s.phases });
    s.phase = 'done';
    return report;
  } catch (e) {
    return fail(run, e);
  }
}

/** A new run, or the one continued as new; its progress query. */
function resume(input: ReconcileInput): Run {
  const s: RunState = input.resume
    ? { ...input.resume, execution: input.resume.execution + 1 }
    : {
        runId: uuid4(),
        startedAtMs: Date.now(),
        phase: 'starting',
        execution: 1,
        nextChunk: 1,
        rowsDone: 0,
        chunksDone: 0,
        phases: {},
      };
  setHandler(addressBookProgressQuery, (): ReconcileProgress => ({
    runId: s.runId,
    vaspDid: input.vaspDid,
    mode: s.mode,
    phase: s.phase,
    startedAt: new Date(s.startedAtMs).toISOString(),
    rowsDone: s.rowsDone,
    rowsTotal: s.delta ? s.delta.toAdd + s.delta.toUpdate + s.delta.toRemove : undefined,
    chunksDone: s.chunksDone,
    chunksTotal: s.delta?.chunks,
    delta: s.delta,
    execution: s.execution,
  }));
  return { input, s, phaseStarted: Date.now(), mirror: Promise.resolve(), mirrorStarted: false, headUploaded: 0 };
}

function enter(run: Run, phase: ReconcilePhase): void {
  const { s } = run;
  s.phases[s.phase] = (s.phases[s.phase] ?? 0) + (Date.now() - run.phaseStarted);
  run.phaseStarted = Date.now();
  s.phase = phase;
}

function waitingFor(settings: RunSettings) {
  // The waiting activity polls for as long as the network may take, heartbeating at every poll.
  const { abAwaitNetworkCount } = proxyActivities<Activities>({
    startToCloseTimeout: settings.processingTimeoutMs + 5 * 60_000,
    scheduleToCloseTimeout: long.scheduleToCloseTimeout,
    heartbeatTimeout: Math.max(60_000, 3 * settings.pollIntervalMs),
    retry: long.retry,
  });
  return {
    timeouts: { timeoutMs: settings.processingTimeoutMs, pollMs: settings.pollIntervalMs, settleMs: settings.settleMs },
    abAwaitNetworkCount,
  };
}

/** Claims the VASP for this run; another run in progress makes this one a skipped report. */
async function beginRun(run: Run): Promise<ReconcileReport | undefined> {
  const { input, s } = run;
  const { vaspDid } = input;
  const begun = await abBeginRun({
    runId: s.runId,
    vaspDid,
    workflowId: workflowInfo().workflowId,
    trigger: input.trigger,
    mode: input.mode ?? 'auto',
  });
  if (!begun.started) {
    s.phase = 'skipped';
    const now = new Date().toISOString();
    return {
      runId: s.runId,
      vaspDid,
      trigger: input.trigger,
      status: 'skipped',
      startedAt: now,
      finishedAt: now,
      durationMs: 0,
      added: 0,
      updated: 0,
      removed: 0,
      rejected: 0,
      chunks: 0,
      phases: {},
      busyRunId: begun.busyRunId,
      error: `run ${begun.busyRunId} is in progress for ${vaspDid}`,
    };
  }
  s.settings = begun.settings;
  s.mode = begun.mode;
  // An incremental run starts from the mirror of the last result: nothing to list.
  enter(run, begun.mode === 'incremental' ? 'diff' : 'listing');
  return undefined;
}

async function list(run: Run): Promise<void> {
  const listed = await abListNetwork({ runId: run.s.runId, vaspDid: run.input.vaspDid });
  // A first sync: every desired row is an addition, so uploads may start before the whole diff is done.
  if (listed.total === 0 && listed.rows === 0) run.s.headFirst = true;
  enter(run, 'diff');
}

async function diff(run: Run, waiting: Waiting): Promise<void> {
  const { s } = run;
  s.delta = s.headFirst
    ? await headFirst(run, waiting)
    : await abComputeDelta({ runId: s.runId, vaspDid: run.input.vaspDid });
  enter(run, 'removing');
}

/**
 * A first sync: the head of the delta first (abComputeHead), then its chunks upload while abComputeDelta computes the
 * rest, so the network has work from the head's end instead of the whole diff's. Both are awaited before a failure of
 * either is acted on: a failing run must not drop its staging under a running upload or diff. The head is a few
 * chunks, so this runs no continue-as-new; the adding step counts its chunks. A head that is the whole delta (small
 * desired set) or a run that does not qualify comes back complete.
 */
async function headFirst(run: Run, { timeouts }: Waiting): Promise<DeltaSummary> {
  const { s } = run;
  const { vaspDid } = run.input;
  const head = await abComputeHead({ runId: s.runId, vaspDid });
  if (head.complete) return head.delta;
  const rest = abComputeDelta({ runId: s.runId, vaspDid });
  const uploads = (async () => {
    while (s.nextChunk <= head.headChunks) {
      // The network listed nothing: the count an interrupted chunk is checked against starts at 0.
      const done = await abUploadChunk({ runId: s.runId, vaspDid, chunkNo: s.nextChunk, baseCount: 0, ...timeouts });
      s.rowsDone += done.rows;
      s.chunksDone += 1;
      s.nextChunk += 1;
      run.headUploaded += 1;
    }
  })();
  const [d, u] = await Promise.allSettled([rest, uploads]);
  if (d.status === 'rejected') throw d.reason;
  if (u.status === 'rejected') throw u.reason;
  return d.value;
}

function startMirror(run: Run): void {
  if (run.mirrorStarted) return;
  run.mirrorStarted = true;
  const { s } = run;
  run.mirror =
    s.mode === 'full' && !s.mirrorBuilt
      ? abBuildMirror({ runId: s.runId }).then(() => void (s.mirrorBuilt = true))
      : Promise.resolve();
  run.mirror.catch(() => undefined);
}

/** Deletions first, and their processing awaited, so the count the additions wait for cannot be met by chance. */
async function remove(run: Run, { timeouts, abAwaitNetworkCount }: Waiting): Promise<void> {
  const { s } = run;
  const { vaspDid } = run.input;
  const delta = s.delta!;
  s.expectedAfterRemovals = delta.networkBefore - delta.removeRows;
  if (delta.toRemove > 0) {
    const applied = await abApplyRemovals({ runId: s.runId, vaspDid });
    s.expectedAfterRemovals += applied.refusedListingRows;
    const waited = await abAwaitNetworkCount({
      runId: s.runId,
      vaspDid,
      from: delta.networkBefore,
      expected: s.expectedAfterRemovals,
      direction: 'down',
      ...timeouts,
    });
    s.countReached = waited.reached && waited.count === s.expectedAfterRemovals;
    s.rowsDone += delta.toRemove;
  } else {
    s.countReached = true;
  }
  enter(run, 'adding');
}

/** Additions: single registrations for a small delta, CSV chunks otherwise, continuing as new every few chunks. */
async function add(run: Run, { timeouts }: Waiting): Promise<void> {
  const { input, s } = run;
  const delta = s.delta!;
  if (delta.method === 'register') {
    const registered = await abRegisterAdds({ runId: s.runId, vaspDid: input.vaspDid });
    s.expectedFinal = s.expectedAfterRemovals! + delta.toAdd - registered.rejectedNew;
    s.rowsDone += delta.toAdd + delta.toUpdate;
  } else if (delta.method === 'upload') {
    // A first sync's head chunks, uploaded during the diff in this execution, count towards it.
    let thisExecution = run.headUploaded;
    while (s.nextChunk <= delta.chunks) {
      if (thisExecution >= s.settings!.chunksPerExecution || workflowInfo().continueAsNewSuggested) {
        await run.mirror;
        await continueAsNew<typeof addressBookReconcile>({ ...input, resume: s });
      }
      const done = await abUploadChunk({
        runId: s.runId,
        vaspDid: input.vaspDid,
        chunkNo: s.nextChunk,
        baseCount: s.expectedAfterRemovals!,
        ...timeouts,
      });
      startMirror(run);
      s.rowsDone += done.rows;
      s.chunksDone += 1;
      s.nextChunk += 1;
      thisExecution += 1;
    }
  }
  enter(run, 'processing');
}

/** The network's asynchronous processing of the additions; with nothing to add, the count after the removals is final. */
async function awaitProcessing(run: Run, { timeouts, abAwaitNetworkCount }: Waiting): Promise<void> {
  const { s } = run;
  if (s.delta!.method !== 'none') {
    const waited = await abAwaitNetworkCount({
      runId: s.runId,
      vaspDid: run.input.vaspDid,
      from: s.expectedAfterRemovals!,
      expected: s.expectedFinal!,
      direction: 'up',
      ...timeouts,
    });
    s.countReached = waited.reached && waited.count === s.expectedFinal;
  }
  enter(run, 'verifying');
}

/** A failed run records its report and fails the workflow; continue-as-new and a run never begun pass through. */
async function fail(run: Run, e: unknown): Promise<never> {
  const { s } = run;
  if (e instanceof ContinueAsNew || s.phase === 'skipped' || s.phase === 'starting') throw e;
  const message = (e as Error).message ?? String(e);
  const cause = activityCause(e) !== e ? summarizeFailure(e).message : undefined;
  const failedIn = s.phase;
  enter(run, 'failed');
  // A cancelled run still records its report; nothing else may run in a cancelled scope, so it runs outside it.
  if (isCancellation(e)) {
    await CancellationScope.nonCancellable(() =>
      abFinishRun({ runId: s.runId, status: 'failed', error: `cancelled in phase ${failedIn}`, phases: s.phases }),
    );
    throw e;
  }
  // The mirror build must not outlive the failed run's bookkeeping (its partition would be left behind).
  await run.mirror.catch(() => undefined);
  await abFinishRun({ runId: s.runId, status: 'failed', error: `${failedIn}: ${cause ?? message}`, phases: s.phases });
  throw ApplicationFailure.nonRetryable(
    `address-book run ${s.runId} failed in phase ${failedIn}: ${cause ?? message}`,
    'AddressBookRunFailed',
  );
}
