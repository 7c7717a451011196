import type { Pool } from 'pg';
import { finishedRuns, runRejections } from './store/runs';

/**
 * The VASP's latest finished runs, newest first, each as its stored report (or, for a run that stopped before it
 * wrote one, what its record says) with up to `rejectedRows` of the rows the network refused.
 */
export async function latestReports(pool: Pool, vaspDid: string, limit: number, rejectedRows: number) {
  const rows = await finishedRuns(pool, vaspDid, limit);
  return Promise.all(
    rows.map(async (r) => {
      const rejected = await runRejections(pool, r.run_id, rejectedRows);
      const base = r.report ?? {
        runId: r.run_id,
        vaspDid,
        trigger: r.trigger,
        status: r.status,
        startedAt: r.started_at.toISOString(),
        finishedAt: (r.finished_at ?? r.started_at).toISOString(),
        durationMs: (r.finished_at ?? r.started_at).getTime() - r.started_at.getTime(),
        added: 0,
        updated: 0,
        removed: 0,
        rejected: 0,
        chunks: 0,
        phases: {},
        error: r.error ?? undefined,
      };
      return {
        ...base,
        rejectedRows: rejected.map((x) => ({
          action: x.action,
          address: x.address,
          asset: x.asset,
          customerRef: x.customer_ref,
          reason: x.reason,
        })),
      };
    }),
  );
}
