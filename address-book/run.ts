/**
 * A reconciliation run's start and end: the VASP's run lock, the choice between a full and an incremental run, the
 * mirror of the result, and the report. The run's state lives in address_book_runs (address-book/store/runs.ts), so every
 * step resumes where the last stopped.
 */
import { metrics } from '../lib/metrics/registry';
import type { ReconcileMode, ReconcilePhase, ReconcileReport, ReconcileTrigger, RunSettings } from './types';
import { withHeartbeat } from '../lib/heartbeat';
import { buildRunMirror, forgetResult, keepResult, mirrorState } from './store/mirror';
import {
  closeAbandonedRun,
  databaseNow,
  findRun,
  finishRunRecord,
  getRun,
  insertRun,
  insertSkippedRun,
  reportFacts,
  runningRunOf,
  runningRunWithWorkflow,
  storedReport,
} from './store/runs';
import { createListingPartition, dropStaging, sentChanges } from './store/staging';
import { withTransaction } from '../db/transaction';
import { networkTotal } from '../network/address-book';
import type { AddressBookDeps } from './deps';

/**
 * Full or incremental. An incremental run needs the verified result of an earlier run (the mirror, intact) and a
 * network whose count still matches it; anything else (a first run, a failed last run, addresses added or removed
 * behind our back, a lost mirror) makes it a full run.
 */
async function chooseMode(
  deps: AddressBookDeps,
  vaspDid: string,
  requested: ReconcileMode,
): Promise<{ mode: 'full' | 'incremental'; reason: string }> {
  if (requested === 'full') return { mode: 'full', reason: 'a full run was asked for' };
  const st = await mirrorState(deps.pool, vaspDid);
  if (!st) return { mode: 'full', reason: 'no verified result of an earlier run' };
  if (st.mirrored !== st.distinctRows) return { mode: 'full', reason: 'the mirror of the last result was lost' };
  const total = await networkTotal(deps.network, vaspDid);
  if (total !== st.networkRows) {
    return { mode: 'full', reason: `the network lists ${total} rows where the last run left ${st.networkRows}` };
  }
  return { mode: 'incremental', reason: 'the network matches the last verified result' };
}

/**
 * Closes a run recorded as running whose workflow is gone (terminated, timed out): it releases the VASP's run lock and,
 * since the run may have changed the network half-way, forgets the last verified result, so the next run is a full
 * one that starts from the network's listing.
 */
export async function closeAbandoned(
  deps: Pick<AddressBookDeps, 'pool'>,
  run: { run_id: string; vasp_did: string },
  why: string,
): Promise<void> {
  await withTransaction(deps.pool, async (c) => {
    await closeAbandonedRun(c, run.run_id, why);
    await forgetResult(c, run);
  });
  await dropStaging(deps.pool, run.run_id);
}

/**
 * The VASP's running run, closed when its workflow is gone; true when the lock is free afterwards. A holder with the
 * asking run's own workflow id is an earlier execution of it, which has ended: a workflow id has one open execution.
 */
async function releaseAbandonedLock(deps: AddressBookDeps, vaspDid: string, workflowId: string): Promise<boolean> {
  const holder = await runningRunWithWorkflow(deps.pool, vaspDid);
  if (!holder) return true;
  const status = holder.workflow_id === workflowId ? 'ENDED' : await deps.workflowStatus?.(holder.workflow_id);
  if (status === undefined || status === 'RUNNING') return false;
  deps.logger.warn(
    { runId: holder.run_id, workflowId: holder.workflow_id, status },
    'closing an abandoned address-book run',
  );
  await closeAbandoned(
    deps,
    { run_id: holder.run_id, vasp_did: vaspDid },
    `abandoned: its workflow ${holder.workflow_id} is ${status}`,
  );
  return true;
}

/**
 * Records the run and takes the VASP's run lock (one running run per VASP). A lock held by a run whose workflow is
 * gone is released first; a VASP with a run in progress gets a 'skipped' record instead. Creates the run's listing
 * partition. Returns the settings the run follows.
 */
export async function beginRun(
  deps: AddressBookDeps,
  input: { runId: string; vaspDid: string; workflowId: string; trigger: ReconcileTrigger; mode?: ReconcileMode },
): Promise<
  | { started: true; settings: RunSettings; mode: 'full' | 'incremental'; modeReason: string }
  | { started: false; busyRunId: string }
> {
  const { pool } = deps;
  const s = deps.settings;
  const out: RunSettings = {
    chunksPerExecution: s.chunksPerExecution,
    processingTimeoutMs: s.processingTimeoutMs,
    pollIntervalMs: s.pollIntervalMs,
    settleMs: s.settleMs,
    verify: s.verify,
  };
  const existing = await findRun(pool, input.runId);
  let chosen = existing ? { mode: existing.mode, reason: existing.error ?? '' } : undefined;
  if (!existing) {
    const insert = async () => {
      // Taken before the lock: a run that then finds the VASP busy has only read.
      chosen = await chooseMode(deps, input.vaspDid, input.mode ?? 'auto');
      await insertRun(pool, {
        runId: input.runId,
        vaspDid: input.vaspDid,
        workflowId: input.workflowId,
        trigger: input.trigger,
        mode: chosen.mode,
      });
    };
    const lockTaken = (e: unknown) => (e as { code?: string }).code === '23505';
    try {
      // The mode is chosen again after an abandoned run is closed: that run may have changed the network.
      await insert().catch(async (e) => {
        if (!lockTaken(e) || !(await releaseAbandonedLock(deps, input.vaspDid, input.workflowId))) throw e;
        await insert();
      });
    } catch (e) {
      if (!lockTaken(e)) throw e;
      const busyRunId = (await runningRunOf(pool, input.vaspDid)) ?? 'unknown';
      await insertSkippedRun(pool, {
        runId: input.runId,
        vaspDid: input.vaspDid,
        workflowId: input.workflowId,
        trigger: input.trigger,
        error: `run ${busyRunId} was in progress for this VASP`,
      });
      return { started: false, busyRunId };
    }
  } else if (existing.status === 'skipped') {
    return { started: false, busyRunId: /run (\S+)/.exec(existing.error ?? '')?.[1] ?? 'unknown' };
  }
  // The delta's partition is created by the diff (address-book/store/diff.ts, createDeltaTable).
  await createListingPartition(pool, input.runId);
  return { started: true, settings: out, mode: chosen!.mode, modeReason: chosen!.reason };
}

/** Builds a full run's mirror (see address-book/store/mirror.ts): started beside the removals and uploads, awaited before the end. */
export async function buildMirror(
  deps: Pick<AddressBookDeps, 'pool'>,
  input: { runId: string },
): Promise<{ built: boolean }> {
  const r = await getRun(deps.pool, input.runId);
  if (r.mode !== 'full' || r.mirror_built) return { built: r.mirror_built };
  await buildRunMirror(deps.pool, r);
  return { built: true };
}

/** Stores the run's report, releases the VASP's run lock and drops the run's staging. */
export async function finishRun(
  deps: Pick<AddressBookDeps, 'pool' | 'heartbeat'>,
  input: {
    runId: string;
    status: 'succeeded' | 'failed';
    error?: string;
    verifiedBy?: 'count' | 'listing';
    phases: Partial<Record<ReconcilePhase, number>>;
  },
): Promise<ReconcileReport> {
  const { pool } = deps;
  const r = await getRun(pool, input.runId);
  if (r.status !== 'running') {
    const stored = await storedReport(pool, input.runId);
    if (stored) return stored;
  }
  const x = await reportFacts(pool, input.runId);
  const toAdd = Number(r.to_add ?? 0);
  const toUpdate = Number(r.to_update ?? 0);
  const toRemove = Number(r.to_remove ?? 0);
  const ok = input.status === 'succeeded';
  // A failed run says how far it got: what it sent (less what the network refused) and what it never sent.
  const sent = ok ? undefined : await sentChanges(pool, input.runId);
  const report: ReconcileReport = {
    runId: r.run_id,
    vaspDid: r.vasp_did,
    trigger: x.trigger,
    status: input.status,
    startedAt: x.startedAt.toISOString(),
    finishedAt: x.now.toISOString(),
    durationMs: x.now.getTime() - x.startedAt.getTime(),
    mode: r.mode,
    method: r.method ?? undefined,
    desired: r.desired === null ? undefined : Number(r.desired),
    networkBefore: r.network_before === null ? undefined : Number(r.network_before),
    networkAfter: r.network_after === null ? undefined : Number(r.network_after),
    // What was added, updated and removed, net of the rows the network refused or did not take.
    added: Math.max(0, (sent ? sent.additions : toAdd) - x.rejectedAdds),
    updated: ok ? toUpdate : 0,
    removed: Math.max(0, (sent ? sent.removals : toRemove) - x.rejectedRemoves),
    ...(sent && { pending: { additions: toAdd + toUpdate - sent.additions, removals: toRemove - sent.removals } }),
    rejected: Number(r.rejected),
    chunks: x.chunks,
    verifiedBy: input.verifiedBy,
    phases: input.phases,
    error: input.error,
  };
  await withHeartbeat(deps.heartbeat, 'result', () =>
    withTransaction(pool, async (c) => {
      if (ok) await keepResult(c, r);
      else await forgetResult(c, r);
      // The run ends now, keeping the result included.
      const end = await databaseNow(c);
      report.finishedAt = end.toISOString();
      report.durationMs = end.getTime() - x.startedAt.getTime();
      report.phases = { ...report.phases, reporting: end.getTime() - x.now.getTime() };
      await finishRunRecord(c, input.runId, { status: input.status, report, error: input.error, at: end });
    }),
  );
  await dropStaging(pool, input.runId);
  metrics.addressBookRuns.inc({ outcome: input.status });
  metrics.addressBookRunSeconds.observe(report.durationMs / 1000);
  return report;
}
