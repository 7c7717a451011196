/**
 * What the reconciliation workflow, its activities, the API and the CLI exchange. Types only: workflows may import
 * this file. Everything here is small (ids, counts, cursors): address rows never travel through workflow history.
 */

export type ReconcileTrigger = 'schedule' | 'api' | 'cli' | 'bench' | 'test';

/**
 * 'full' starts from the network's whole listing; 'incremental' from the mirror of the last verified result, for the
 * addresses the registry changed since (only when the network's count still matches it); 'auto' picks incremental
 * whenever it may, full otherwise.
 */
export type ReconcileMode = 'auto' | 'full' | 'incremental';

export type ReconcilePhase =
  | 'starting'
  | 'listing'
  | 'diff'
  | 'removing'
  | 'adding'
  | 'processing'
  | 'verifying'
  | 'reporting'
  | 'done'
  | 'failed'
  | 'skipped';

/** The worker's settings a run follows, read once at its start and carried across continue-as-new. */
export interface RunSettings {
  chunksPerExecution: number;
  processingTimeoutMs: number;
  pollIntervalMs: number;
  settleMs: number;
  verify: 'count' | 'listing';
}

export interface DeltaSummary {
  /** Addresses the registry wants at the network (tag expansion included). */
  desired: number;
  /** Rows the network listed at the start, and distinct addresses among them. */
  networkBefore: number;
  networkBeforeDistinct: number;
  toAdd: number;
  /** Listed addresses whose customerRef differs: registered again. */
  toUpdate: number;
  toRemove: number;
  /** Listing rows the removals take away (an address listed under several assets goes in one deletion). */
  removeRows: number;
  method: 'none' | 'register' | 'upload';
  chunks: number;
}

export interface ReconcileProgress {
  runId: string;
  vaspDid: string;
  mode?: 'full' | 'incremental';
  phase: ReconcilePhase;
  startedAt: string;
  /** Rows of the delta handled so far (removals plus additions), and their total once known. */
  rowsDone: number;
  rowsTotal?: number;
  chunksDone: number;
  chunksTotal?: number;
  delta?: DeltaSummary;
  /** Executions of the workflow this run has used so far (continue-as-new). */
  execution: number;
}

export interface ReconcileReport {
  runId: string;
  vaspDid: string;
  trigger: ReconcileTrigger;
  status: 'succeeded' | 'failed' | 'skipped';
  mode?: 'full' | 'incremental';
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  method?: DeltaSummary['method'];
  desired?: number;
  networkBefore?: number;
  networkAfter?: number;
  added: number;
  updated: number;
  removed: number;
  rejected: number;
  chunks: number;
  /** How the result was checked: the listing's total, or the whole listing compared row by row. */
  verifiedBy?: 'count' | 'listing';
  /** Phase durations in milliseconds. */
  phases: Partial<Record<ReconcilePhase, number>>;
  error?: string;
  /**
   * A failed run's delta rows that never reached the network. Its `added` (updates included) and `removed` count what
   * did; the next run starts from the network's listing, so it completes what is pending.
   */
  pending?: { additions: number; removals: number };
  /** When a run was skipped: the run already in progress for the VASP. */
  busyRunId?: string;
}
