/**
 * A reconciliation run's start and end: the VASP's run lock, the choice between a full and an incremental run, the
 * mirror of the result, and the report. The run's state lives in address_book_runs (db/address-book-runs.ts), so every
 * step resumes where the last stopped.
 */
import type { ReconcileMode, ReconcilePhase, ReconcileReport, ReconcileTrigger, RunSettings } from '../lib/address-book/reconcile-types';
import { withHeartbeat } from '../lib/temporal/heartbeat';
import { buildRunMirror, forgetResult, keepResult, mirrorState } from '../db/address-book-mirror';
import {
  databaseNow,
  findRun,
  finishRunRecord,
  getRun,
  insertRun,
  insertSkippedRun,
  reportFacts,
  runningRunOf,
  storedReport,
} from '../db/address-book-runs';
import { createListingPartition, dropStaging } from '../db/address-book-staging';
import { withTransaction } from '../db/transaction';
import { networkTotal } from '../network/address-book';
import type { AddressBookDeps } from './deps';

/**
 * Full or incremental. An incremental run needs the verified result of an earlier run (the mirror, intact) and a
 * network whose count still matches it; anything else (a first run, a failed last run, addresses added or removed
 * behind our back, a lost mirror) makes it a full run.
 */
async function chooseMode(deps: AddressBookDeps, vaspDid: string, requested: ReconcileMode): Promise<{ mode: 'full' | 'incremental'; reason: string }> {
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
 * Records the run and takes the VASP's run lock (one running run per VASP). A VASP with a run in progress gets a
 * 'skipped' record instead. Creates the run's listing partition. Returns the settings the run follows.
 */
export async function beginRun(
  deps: AddressBookDeps,
  input: { runId: string; vaspDid: string; workflowId: string; trigger: ReconcileTrigger; mode?: ReconcileMode },
): Promise<{ started: true; settings: RunSettings; mode: 'full' | 'incremental'; modeReason: string } | { started: false; busyRunId: string }> {
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
    try {
      // Taken before the lock: a run that then finds the VASP busy has only read.
      chosen = await chooseMode(deps, input.vaspDid, input.mode ?? 'auto');
      await insertRun(pool, { runId: input.runId, vaspDid: input.vaspDid, workflowId: input.workflowId, trigger: input.trigger, mode: chosen.mode });
    } catch (e) {
      if ((e as { code?: string }).code !== '23505') throw e;
      const busyRunId = (await runningRunOf(pool, input.vaspDid)) ?? 'unknown';
      await insertSkippedRun(pool, {
        runId: input.runId, vaspDid: input.vaspDid, workflowId: input.workflowId, trigger: input.trigger,
        error: `run ${busyRunId} was in progress for this VASP`,
      });
      return { started: false, busyRunId };
    }
  } else if (existing.status === 'skipped') {
    return { started: false, busyRunId: /run (\S+)/.exec(existing.error ?? '')?.[1] ?? 'unknown' };
  }
  // The delta's partition is created by the diff (db/address-book-diff.ts, createDeltaTable).
  await createListingPartition(pool, input.runId);
  return { started: true, settings: out, mode: chosen!.mode, modeReason: chosen!.reason };
}

/** Builds a full run's mirror (see db/address-book-mirror.ts): started beside the removals and uploads, awaited before the end. */
export async function buildMirror(deps: Pick<AddressBookDeps, 'pool'>, input: { runId: string }): Promise<{ built: boolean }> {
  const r = await getRun(deps.pool, input.runId);
  if (r.mode !== 'full' || r.mirror_built) return { built: r.mirror_built };
  await buildRunMirror(deps.pool, r);
  return { built: true };
}

/** Stores the run's report, releases the VASP's run lock and drops the run's staging. */
export async function finishRun(
  deps: Pick<AddressBookDeps, 'pool'>,
  input: { runId: string; status: 'succeeded' | 'failed'; error?: string; verifiedBy?: 'count' | 'listing'; phases: Partial<Record<ReconcilePhase, number>> },
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
    added: ok ? Math.max(0, toAdd - x.rejectedAdds) : 0,
    updated: ok ? toUpdate : 0,
    removed: ok ? Math.max(0, toRemove - x.rejectedRemoves) : 0,
    rejected: Number(r.rejected),
    chunks: x.chunks,
    verifiedBy: input.verifiedBy,
    phases: input.phases,
    error: input.error,
  };
  await withHeartbeat('result', () => withTransaction(pool, async (c) => {
    if (ok) await keepResult(c, r);
    else await forgetResult(c, r);
    // The run ends now, keeping the result included.
    const end = await databaseNow(c);
    report.finishedAt = end.toISOString();
    report.durationMs = end.getTime() - x.startedAt.getTime();
    report.phases = { ...report.phases, reporting: end.getTime() - x.now.getTime() };
    await finishRunRecord(c, input.runId, { status: input.status, report, error: input.error, at: end });
  }));
  await dropStaging(pool, input.runId);
  return report;
}
