/**
 * What a workflow costs Temporal, counted from its history (issue 27, "know the cost"): workflow tasks, activities and
 * local activities, timers, signals, updates, events and payload bytes, per workflow id (every run of a
 * continue-as-new chain), and database writes around a benchmark's phase. The benchmarks print these for a sample of
 * their workflows after the timed phase, next to the empty workflow of the floor (bench/floor.ts).
 *
 * Counts do not depend on the machine's load; the times read from the events' timestamps (a workflow task's wait and
 * run, start to close) do, and say where one workflow's latency goes when it runs alone (BENCH_CONCURRENCY=1).
 */
import { Client, Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { EncryptionCodec, type CodecKeyring } from '../lib/temporal/codec';
import { payloadsIn, timestampMs } from '../test/harness/history';
import { quantile } from './stats';

type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface WorkflowCost {
  /** Runs counted (more than one when the workflow continued as new). */
  runs: number;
  /** WorkflowTaskCompleted events: the tasks that moved the workflow on. */
  workflowTasks: number;
  /** Workflow task attempts that failed or timed out (each one a task the worker ran again). */
  failedWorkflowTasks: number;
  /**
   * Activations, estimated: one per workflow task started plus one per local activity (its result comes back to the
   * workflow in an activation of its own within the task). Evictions and queries are not counted.
   */
  activations: number;
  /** ActivityTaskScheduled events. */
  activities: number;
  /** MarkerRecorded events named core_local_activity. */
  localActivities: number;
  timers: number;
  signals: number;
  /** Updates accepted. */
  updates: number;
  /** Child workflows started. */
  children: number;
  events: number;
  /** Payloads anywhere in the history (inputs, results, markers, memo, search attributes, headers). */
  payloads: number;
  /** Their size as stored, i.e. after the codec: each Payload's protobuf encoding (metadata and data). */
  payloadBytes: number;
  /** The same payloads decoded (before the codec), when a keyring was given; else 0. */
  plainBytes: number;
  /** Runs not closed when read (their counts are so far). */
  open: number;
  /**
   * Times from the events' timestamps, in ms (they depend on the load: read them with one workflow in flight): each
   * workflow task's wait from scheduled to started (the dispatch to a worker), summed; …
   */
  taskWaitMs: number;
  /** … each workflow task's run from started to completed (the activations, local activities included), summed; … */
  taskRunMs: number;
  /** … and the first event to the closing one (NaN while open). */
  lifeMs: number;
}

export const COST_KEYS = [
  'runs',
  'workflowTasks',
  'failedWorkflowTasks',
  'activations',
  'activities',
  'localActivities',
  'timers',
  'signals',
  'updates',
  'children',
  'events',
  'payloads',
  'payloadBytes',
  'plainBytes',
  'open',
  'taskWaitMs',
  'taskRunMs',
  'lifeMs',
] as const satisfies readonly (keyof WorkflowCost)[];

export const emptyCost = (): WorkflowCost =>
  Object.fromEntries(COST_KEYS.map((k) => [k, 0])) as unknown as WorkflowCost;

export function addCosts(a: WorkflowCost, b: WorkflowCost): WorkflowCost {
  return Object.fromEntries(COST_KEYS.map((k) => [k, a[k] + b[k]])) as unknown as WorkflowCost;
}

/** The protobuf field of an event (its attributes) says its type, whether the history came as JSON or from the server. */
const has = (e: HistoryEvent, attrs: keyof HistoryEvent) => e[attrs] != null;

const CLOSING: (keyof HistoryEvent)[] = [
  'workflowExecutionCompletedEventAttributes',
  'workflowExecutionFailedEventAttributes',
  'workflowExecutionTimedOutEventAttributes',
  'workflowExecutionCanceledEventAttributes',
  'workflowExecutionTerminatedEventAttributes',
  'workflowExecutionContinuedAsNewEventAttributes',
];

/** An event's time in ms since the epoch (NaN without one). */
export const eventMs = (e: HistoryEvent) => (e.eventTime ? timestampMs(e.eventTime) : NaN);

/** The time from each event of `attrs` back to the event it names by `idOf`, summed. */
function spans(events: HistoryEvent[], attrs: keyof HistoryEvent, idOf: (e: HistoryEvent) => unknown): number {
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  return events
    .filter((e) => has(e, attrs))
    .reduce((sum, e) => {
      const from = byId.get(Number(idOf(e)));
      return from ? sum + eventMs(e) - eventMs(from) : sum;
    }, 0);
}

/** The counts of one run's history (pure; payload bytes as stored, plainBytes left 0). */
export function countHistory(history: History): WorkflowCost {
  const events = history.events ?? [];
  const n = (attrs: keyof HistoryEvent) => events.filter((e) => has(e, attrs)).length;
  const localActivities = events.filter(
    (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
  ).length;
  const payloads = payloadsIn(history);
  const closing = events.find((e) => CLOSING.some((k) => has(e, k)));
  return {
    runs: 1,
    workflowTasks: n('workflowTaskCompletedEventAttributes'),
    failedWorkflowTasks: n('workflowTaskFailedEventAttributes') + n('workflowTaskTimedOutEventAttributes'),
    activations: n('workflowTaskStartedEventAttributes') + localActivities,
    activities: n('activityTaskScheduledEventAttributes'),
    localActivities,
    timers: n('timerStartedEventAttributes'),
    signals: n('workflowExecutionSignaledEventAttributes'),
    updates: n('workflowExecutionUpdateAcceptedEventAttributes'),
    children: n('startChildWorkflowExecutionInitiatedEventAttributes'),
    events: events.length,
    payloads: payloads.length,
    payloadBytes: payloads.reduce((s, p) => s + temporal.api.common.v1.Payload.encode(p).finish().length, 0),
    plainBytes: 0,
    open: closing ? 0 : 1,
    taskWaitMs: spans(
      events,
      'workflowTaskStartedEventAttributes',
      (e) => e.workflowTaskStartedEventAttributes?.scheduledEventId,
    ),
    taskRunMs: spans(
      events,
      'workflowTaskCompletedEventAttributes',
      (e) => e.workflowTaskCompletedEventAttributes?.startedEventId,
    ),
    lifeMs: closing && events[0] ? eventMs(closing) - eventMs(events[0]) : NaN,
  };
}

/** The decoded size of a history's encrypted payloads (the others, e.g. search attributes, count as they are). */
async function plainBytes(history: History, codec: EncryptionCodec): Promise<number> {
  const decoded = await codec.decode(payloadsIn(history) as Payload[]);
  return decoded.reduce((s, p) => s + temporal.api.common.v1.Payload.encode(p).finish().length, 0);
}

/**
 * The cost of each workflow id, every run of it: the newest run's history first, then each run it continued from
 * (its start event names the previous run). Histories are read as stored; `keyring` adds their decoded size.
 */
export async function workflowCosts(
  address: string,
  workflowIds: readonly string[],
  keyring?: CodecKeyring,
): Promise<Map<string, WorkflowCost>> {
  const connection = await Connection.connect({ address, connectTimeout: '5s' });
  const codec = keyring && new EncryptionCodec(keyring);
  const out = new Map<string, WorkflowCost>();
  try {
    const client = new Client({ connection });
    for (const id of workflowIds) {
      let total = emptyCost();
      let runId: string | undefined;
      for (let guard = 0; guard < 1000; guard++) {
        const history = await client.workflow.getHandle(id, runId).fetchHistory();
        const cost = countHistory(history);
        if (codec) cost.plainBytes = await plainBytes(history, codec);
        total = addCosts(total, cost);
        runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
        if (!runId) break;
      }
      out.set(id, total);
    }
  } finally {
    await connection.close();
  }
  return out;
}

/** Up to `n` of `ids`, evenly spread (the first, then every k-th). */
export function sample<T>(ids: readonly T[], n = 50): T[] {
  if (ids.length <= n) return [...ids];
  const step = ids.length / n;
  return Array.from({ length: n }, (_, i) => ids[Math.floor(i * step)]!);
}

export interface CostSummary {
  type: string;
  workflows: number;
  mean: WorkflowCost;
  p50: WorkflowCost;
  max: WorkflowCost;
}

export function summarize(type: string, costs: Iterable<WorkflowCost>): CostSummary {
  const all = [...costs];
  const stat = (f: (xs: number[]) => number) =>
    Object.fromEntries(COST_KEYS.map((k) => [k, f(all.map((c) => c[k]))])) as unknown as WorkflowCost;
  return {
    type,
    workflows: all.length,
    mean: stat((xs) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : NaN)),
    p50: stat((xs) => quantile(xs, 0.5)),
    max: stat((xs) => (xs.length ? Math.max(...xs) : NaN)),
  };
}

/** The columns of the cost table: a heading and the key it shows. */
const COLUMNS: [string, keyof WorkflowCost][] = [
  ['runs', 'runs'],
  ['workflow tasks', 'workflowTasks'],
  ['failed/timed-out tasks', 'failedWorkflowTasks'],
  ['activations (est.)', 'activations'],
  ['activities', 'activities'],
  ['local activities', 'localActivities'],
  ['timers', 'timers'],
  ['signals', 'signals'],
  ['updates', 'updates'],
  ['events', 'events'],
  ['payload bytes (stored, after codec)', 'payloadBytes'],
  ['payload bytes (decoded)', 'plainBytes'],
  ['workflow tasks waiting, ms', 'taskWaitMs'],
  ['workflow tasks running, ms', 'taskRunMs'],
  ['start to close, ms', 'lifeMs'],
];

const num = (x: number) => (Number.isNaN(x) ? '–' : Number.isInteger(x) ? String(x) : x.toFixed(1));

export const costTableHeader = () =>
  `| workflow type | sampled | ${COLUMNS.map(([h]) => h).join(' | ')} | open |\n|---|${'---:|'.repeat(COLUMNS.length + 2)}`;

/** One table line per workflow type: each count as mean / p50 / max over the sampled workflows. */
export const costTableLine = (s: CostSummary) =>
  `| ${s.type} | ${s.workflows} | ${COLUMNS.map(([, k]) => `${num(s.mean[k])} / ${num(s.p50[k])} / ${num(s.max[k])}`).join(' | ')} | ${s.max.open ? `${num(s.mean.open * s.workflows)}` : '0'} |`;

/** The whole "cost per workflow" block: a title, the header and a line per type. */
export const costBlock = (title: string, summaries: CostSummary[], notes: string[] = []) =>
  [
    `${title} (each cell mean / p50 / max over the sampled workflows, all runs of each; counts, independent of load, ` +
      `and times from the events' timestamps, which are not)`,
    costTableHeader(),
    ...summaries.map(costTableLine),
    ...notes,
  ].join('\n');

/** Samples up to `n` ids, reads their histories and summarizes them under `type`; a failure is reported, not thrown. */
export async function sampledCost(
  address: string,
  type: string,
  ids: readonly string[],
  keyring?: CodecKeyring,
  n = 50,
): Promise<CostSummary | string> {
  try {
    return summarize(type, (await workflowCosts(address, sample(ids, n), keyring)).values());
  } catch (e) {
    return `| ${type} | cost not read: ${(e as Error).message.split('\n')[0]} |`;
  }
}

export const costLines = (rows: (CostSummary | string)[]) =>
  rows.map((r) => (typeof r === 'string' ? r : costTableLine(r)));

// ---- Database writes -------------------------------------------------------------------------------------------

export interface DbWrites {
  /** Transactions committed in the whole database (every schema and client, this reader's own included). */
  commits: number;
  /** Rows inserted, updated and deleted in the schema's tables. */
  inserted: number;
  updated: number;
  deleted: number;
  /** Rows written (inserted + updated + deleted) by table. */
  tables: Record<string, number>;
}

async function readWrites(pool: Pool, schema: string): Promise<DbWrites> {
  const { rows } = await pool.query<{ commits: string; name: string; ins: string; upd: string; del: string }>(
    `select (select xact_commit from pg_stat_database where datname = current_database()) commits,
            relname name, n_tup_ins ins, n_tup_upd upd, n_tup_del del
       from pg_stat_user_tables where schemaname = $1`,
    [schema],
  );
  const sum = (k: 'ins' | 'upd' | 'del') => rows.reduce((s, r) => s + Number(r[k]), 0);
  return {
    commits: Number(rows[0]?.commits ?? 0),
    inserted: sum('ins'),
    updated: sum('upd'),
    deleted: sum('del'),
    tables: Object.fromEntries(rows.map((r) => [r.name, Number(r.ins) + Number(r.upd) + Number(r.del)])),
  };
}

/**
 * The database's write counters for `schema`, once they have settled. PostgreSQL's statistics are flushed lazily: a
 * busy backend at most once a second, an idle one within 10 s of its last transaction (PG 15's PGSTAT_IDLE_INTERVAL),
 * and pg_stat_force_next_flush() flushes only the calling backend. So this reads once a second until two reads agree
 * (at most `maxWaitMs`); writes still trickling in then (a workflow still running) land in the next phase's figures.
 */
export async function dbWrites(pool: Pool, schema = 'orchestrator', maxWaitMs = 12_000): Promise<DbWrites> {
  await pool.query('select pg_stat_force_next_flush()').catch(() => undefined); // PG 15+: our own backend's counts
  const deadline = Date.now() + maxWaitMs;
  let last = await readWrites(pool, schema);
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = await readWrites(pool, schema);
    // Settled by the schema's rows only: the commits count every client of the database (the sandbox's polling too).
    const same = now.inserted === last.inserted && now.updated === last.updated && now.deleted === last.deleted;
    last = now;
    if (same) break;
  }
  return last;
}

/** Writes per transfer between two readings. */
export function writesPer(before: DbWrites, after: DbWrites, transfers: number) {
  const per = (k: 'commits' | 'inserted' | 'updated' | 'deleted') => (after[k] - before[k]) / transfers;
  const tables = Object.entries(after.tables)
    .map(([t, n]): [string, number] => [t, (n - (before.tables[t] ?? 0)) / transfers])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  return {
    tables,
    commits: per('commits'),
    inserted: per('inserted'),
    updated: per('updated'),
    deleted: per('deleted'),
    rows: per('inserted') + per('updated') + per('deleted'),
  };
}

export const describeWrites = (label: string, w: ReturnType<typeof writesPer>, schema = 'orchestrator') =>
  `${label}: ${w.rows.toFixed(1)} rows written in the ${schema} schema per transfer (${w.inserted.toFixed(1)} inserted, ` +
  `${w.updated.toFixed(1)} updated, ${w.deleted.toFixed(1)} deleted); ${w.commits.toFixed(1)} commits per transfer in the ` +
  `whole database (every schema and client on it, the sandbox's included); by table: ` +
  (w.tables.map(([t, n]) => `${t} ${n.toFixed(1)}`).join(', ') || 'none');
