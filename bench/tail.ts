/**
 * Where the slowest incoming transfers' time went (issue 27's p99 target): for each, the time from the webhook's
 * receipt to the network's confirmation split at the workflow's start and at its first workflow task's pickup, read
 * from the history's event times and the two servers' own timestamps:
 *   received → started:   the API (signature, the webhook's row) and the server's signal-with-start;
 *   started → picked up:  the first workflow task waiting for a worker (and the server's own scheduling);
 *   picked up → confirmed: the worker's run of it: the transaction read and the confirmation at the network, local
 *                          activities, plus any failed task and its retry.
 * The clocks are one machine's, so the parts add up to the whole.
 */
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { timestampMs } from '../test/harness/history';

type History = temporal.api.history.v1.IHistory;

/** One transfer's webhook receipt and confirmation at the network, ms since the epoch. */
export interface TransferTimes {
  id: string;
  workflowId: string;
  received: number;
  confirmed: number;
}

export interface TailSplit {
  id: string;
  /** When the webhook was received, ms since the epoch: to find the moment in the processes' logs. */
  received: number;
  total: number;
  /** Webhook received → WorkflowExecutionStarted. */
  toStart: number;
  /** WorkflowExecutionStarted → the first WorkflowTaskStarted. */
  toPickup: number;
  /** The first WorkflowTaskStarted → confirmed at the network. */
  toConfirm: number;
  /** Workflow tasks started before the confirmation (1 when it came in the first). */
  tasksBefore: number;
  /** Workflow tasks that failed or timed out before the confirmation. */
  failedBefore: number;
}

/** The split of one transfer (pure): NaN parts when the history lacks the events. */
export function splitTransfer(t: TransferTimes, history: History): TailSplit {
  const events = history.events ?? [];
  const at = (e: (typeof events)[number]) => (e.eventTime ? timestampMs(e.eventTime) : NaN);
  const started = events.find((e) => e.workflowExecutionStartedEventAttributes);
  const pickups = events.filter((e) => e.workflowTaskStartedEventAttributes && at(e) <= t.confirmed);
  const failed = events.filter(
    (e) => (e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes) && at(e) <= t.confirmed,
  );
  const startMs = started ? at(started) : NaN;
  const pickupMs = pickups[0] ? at(pickups[0]) : NaN;
  return {
    id: t.id,
    received: t.received,
    total: t.confirmed - t.received,
    toStart: startMs - t.received,
    toPickup: pickupMs - startMs,
    toConfirm: t.confirmed - pickupMs,
    tasksBefore: pickups.length,
    failedBefore: failed.length,
  };
}

/** The `n` slowest transfers and the median one, each split from its workflow's history. */
export async function slowestSplits(address: string, times: readonly TransferTimes[], n = 3): Promise<TailSplit[]> {
  const byTotal = [...times].sort((a, b) => b.confirmed - b.received - (a.confirmed - a.received));
  const picked = [...byTotal.slice(0, n), ...(byTotal.length > n ? [byTotal[Math.floor(byTotal.length / 2)]!] : [])];
  const connection = await Connection.connect({ address, connectTimeout: '5s' });
  try {
    const client = new Client({ connection });
    const out: TailSplit[] = [];
    for (const t of picked) out.push(splitTransfer(t, await client.workflow.getHandle(t.workflowId).fetchHistory()));
    return out;
  } finally {
    await connection.close();
  }
}

const ms = (x: number) => `${Math.round(x)}`.padStart(5);

/** One line per split: the whole, then its three parts, in ms. */
export const tailLines = (splits: readonly TailSplit[], medianIndex: number) =>
  splits.map(
    (s, i) =>
      `    ${i === medianIndex ? 'median ' : `#${i + 1} slow`} ${ms(s.total)} ms = received→started ${ms(s.toStart)} + started→picked up ${ms(s.toPickup)} + picked up→confirmed ${ms(s.toConfirm)}` +
      ` (${s.tasksBefore} task${s.tasksBefore === 1 ? '' : 's'}${s.failedBefore ? `, ${s.failedBefore} failed` : ''};` +
      ` received ${new Date(s.received).toISOString().slice(11, 23)})`,
  );
