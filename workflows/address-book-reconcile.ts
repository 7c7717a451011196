import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  continueAsNew,
  defineQuery,
  isCancellation,
  patched,
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

// Ten minutes: the start reads the network's count, a call that may ride out transient failures for five.
const quick = { startToCloseTimeout: '10 minutes', retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 } } as const;
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
const { abListNetwork, abComputeHead, abComputeDelta, abBuildMirror, abApplyRemovals, abRegisterAdds, abUploadChunk, abVerify, abFinishRun } =
  proxyActivities<Activities>(long);

/**
 * Brings one subsidiary's address book at the network in line with the group's registry:
 * list what the network holds (into a staging table), diff, delete what the registry no longer has, add what it has
 * (single registrations for a small delta, CSV chunks otherwise), wait for the network's asynchronous processing,
 * verify, and store a report. Every step is an idempotent activity keyed by the run id, with its progress in Postgres,
 * so a worker crash resumes where it stopped; long uploads continue as new every few chunks to keep history short.
 */
export async function addressBookReconcile(input: ReconcileInput): Promise<ReconcileReport> {
  const s: RunState = input.resume
    ? { ...input.resume, execution: input.resume.execution + 1 }
    : { runId: uuid4(), startedAtMs: Date.now(), phase: 'starting', execution: 1, nextChunk: 1, rowsDone: 0, chunksDone: 0, phases: {} };
  const { vaspDid } = input;

  setHandler(addressBookProgressQuery, (): ReconcileProgress => ({
    runId: s.runId,
    vaspDid,
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

  let phaseStarted = Date.now();
  const enter = (phase: ReconcilePhase) => {
    s.phases[s.phase] = (s.phases[s.phase] ?? 0) + (Date.now() - phaseStarted);
    phaseStarted = Date.now();
    s.phase = phase;
  };

  // A full run's mirror build, running beside the removals and uploads (see below).
  let mirror: Promise<void> = Promise.resolve();
  try {
    if (s.phase === 'starting') {
      const begun = await abBeginRun({
        runId: s.runId, vaspDid, workflowId: workflowInfo().workflowId, trigger: input.trigger, mode: input.mode ?? 'auto',
      });
      if (!begun.started) {
        s.phase = 'skipped';
        const now = new Date().toISOString();
        return {
          runId: s.runId, vaspDid, trigger: input.trigger, status: 'skipped', startedAt: now, finishedAt: now, durationMs: 0,
          added: 0, updated: 0, removed: 0, rejected: 0, chunks: 0, phases: {}, busyRunId: begun.busyRunId,
          error: `run ${begun.busyRunId} is in progress for ${vaspDid}`,
        };
      }
      s.settings = begun.settings;
      s.mode = begun.mode;
      // An incremental run starts from the mirror of the last result: nothing to list.
      enter(begun.mode === 'incremental' ? 'diff' : 'listing');
    }
    const settings = s.settings!;
    const timeouts = { timeoutMs: settings.processingTimeoutMs, pollMs: settings.pollIntervalMs, settleMs: settings.settleMs };
    // The waiting activity polls for as long as the network may take, heartbeating at every poll.
    const { abAwaitNetworkCount } = proxyActivities<Activities>({
      startToCloseTimeout: settings.processingTimeoutMs + 5 * 60_000,
      scheduleToCloseTimeout: long.scheduleToCloseTimeout,
      heartbeatTimeout: Math.max(60_000, 3 * settings.pollIntervalMs),
      retry: long.retry,
    });

    /**
     * A first sync: the head of the delta first (abComputeHead), then its chunks upload while abComputeDelta computes
     * the rest, so the network has work from the head's end instead of the whole diff's. Both are awaited before a
     * failure of either is acted on: a failing run must not drop its staging under a running upload or diff. The head
     * is a few chunks, so this runs no continue-as-new; the adding loop counts its chunks. A head that is the whole
     * delta (small desired set) or a run that does not qualify comes back complete.
     */
    let headUploaded = 0;
    const headFirst = async (): Promise<DeltaSummary> => {
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
          headUploaded += 1;
        }
      })();
      const [d, u] = await Promise.allSettled([rest, uploads]);
      if (d.status === 'rejected') throw d.reason;
      if (u.status === 'rejected') throw u.reason;
      return d.value;
    };

    if (s.phase === 'listing') {
      const listed = await abListNetwork({ runId: s.runId, vaspDid });
      // A first sync: every desired row is an addition, so uploads may start before the whole diff is done.
      if (listed.total === 0 && listed.rows === 0 && patched('address-book-head-first')) s.headFirst = true;
      enter('diff');
    }

    if (s.phase === 'diff') {
      if (s.headFirst) s.delta = await headFirst();
      else s.delta = await abComputeDelta({ runId: s.runId, vaspDid });
      enter('removing');
    }
    const delta = s.delta!;
    // A full run prepares the next runs' mirror while the network works; an execution never ends with it pending.
    // An upload starts it once its first chunk is sent: building it takes the database and the CPU the first chunk
    // needs, while the network has nothing to work on yet.
    let mirrorStarted = false;
    const startMirror = () => {
      if (mirrorStarted) return;
      mirrorStarted = true;
      mirror = s.mode === 'full' && !s.mirrorBuilt
        ? abBuildMirror({ runId: s.runId }).then(() => void (s.mirrorBuilt = true))
        : Promise.resolve();
      mirror.catch(() => undefined);
    };
    if (!(delta.method === 'upload' && patched('address-book-mirror-after-first-chunk'))) startMirror();

    if (s.phase === 'removing') {
      // Deletions first, and their processing awaited, so the count the additions wait for cannot be met by chance.
      s.expectedAfterRemovals = delta.networkBefore - delta.removeRows;
      if (delta.toRemove > 0) {
        const applied = await abApplyRemovals({ runId: s.runId, vaspDid });
        s.expectedAfterRemovals += applied.refusedListingRows;
        const waited = await abAwaitNetworkCount({
          runId: s.runId, vaspDid, from: delta.networkBefore, expected: s.expectedAfterRemovals, direction: 'down', ...timeouts,
        });
        s.countReached = waited.reached && waited.count === s.expectedAfterRemovals;
        s.rowsDone += delta.toRemove;
      } else {
        s.countReached = true;
      }
      enter('adding');
    }

    s.expectedFinal ??= s.expectedAfterRemovals! + delta.toAdd;
    if (s.phase === 'adding') {
      if (delta.method === 'register') {
        const registered = await abRegisterAdds({ runId: s.runId, vaspDid });
        s.expectedFinal = s.expectedAfterRemovals! + delta.toAdd - registered.rejectedNew;
        s.rowsDone += delta.toAdd + delta.toUpdate;
      } else if (delta.method === 'upload') {
        // A first sync's head chunks, uploaded during the diff in this execution, count towards it.
        let thisExecution = headUploaded;
        while (s.nextChunk <= delta.chunks) {
          if (thisExecution >= settings.chunksPerExecution || workflowInfo().continueAsNewSuggested) {
            await mirror;
            return await continueAsNew<typeof addressBookReconcile>({ ...input, resume: s });
          }
          const done = await abUploadChunk({ runId: s.runId, vaspDid, chunkNo: s.nextChunk, baseCount: s.expectedAfterRemovals!, ...timeouts });
          startMirror();
          s.rowsDone += done.rows;
          s.chunksDone += 1;
          s.nextChunk += 1;
          thisExecution += 1;
        }
      }
      enter('processing');
    }
    startMirror();

    if (s.phase === 'processing') {
      // With nothing to add, the count after the removals is the final one.
      if (delta.method !== 'none') {
        const waited = await abAwaitNetworkCount({
          runId: s.runId, vaspDid, from: s.expectedAfterRemovals!, expected: s.expectedFinal, direction: 'up', ...timeouts,
        });
        s.countReached = waited.reached && waited.count === s.expectedFinal;
      }
      enter('verifying');
    }

    let verifiedBy: 'count' | 'listing' | undefined;
    if (s.phase === 'verifying') {
      const verified = await abVerify({ runId: s.runId, vaspDid, countReached: s.countReached ?? false, verify: settings.verify });
      verifiedBy = verified.verifiedBy;
      enter('reporting');
    }

    await mirror;
    const report = await abFinishRun({ runId: s.runId, status: 'succeeded', verifiedBy, phases: s.phases });
    s.phase = 'done';
    return report;
  } catch (e) {
    if (e instanceof ContinueAsNew || s.phase === 'skipped' || s.phase === 'starting') throw e;
    const message = (e as Error).message ?? String(e);
    const cause = activityCause(e) !== e ? summarizeFailure(e).message : undefined;
    const failedIn = s.phase;
    enter('failed');
    // A cancelled run still records its report; nothing else may run in a cancelled scope, so it runs outside it.
    if (isCancellation(e)) {
      await CancellationScope.nonCancellable(() =>
        abFinishRun({ runId: s.runId, status: 'failed', error: `cancelled in phase ${failedIn}`, phases: s.phases }),
      );
      throw e;
    }
    // The mirror build must not outlive the failed run's bookkeeping (its partition would be left behind).
    await mirror.catch(() => undefined);
    await abFinishRun({ runId: s.runId, status: 'failed', error: `${failedIn}: ${cause ?? message}`, phases: s.phases });
    throw ApplicationFailure.nonRetryable(`address-book run ${s.runId} failed in phase ${failedIn}: ${cause ?? message}`, 'AddressBookRunFailed');
  }
}
