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
import { eventMs } from './cost';

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
  const started = events.find((e) => e.workflowExecutionStartedEventAttributes);
  const pickups = events.filter((e) => e.workflowTaskStartedEventAttributes && eventMs(e) <= t.confirmed);
  const failed = events.filter(
    (e) => (e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes) && eventMs(e) <= t.confirmed,
  );
  const startMs = started ? eventMs(started) : NaN;
  const pickupMs = pickups[0] ? eventMs(pickups[0]) : NaN;
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
export async function slowestSplits(
  address: string,
  times: readonly TransferTimes[],
  n = 3,
): Promise<{ slowest: TailSplit[]; median?: TailSplit }> {
  const byTotal = [...times].sort((a, b) => b.confirmed - b.received - (a.confirmed - a.received));
  const connection = await Connection.connect({ address, connectTimeout: '5s' });
  try {
    const client = new Client({ connection });
    const split = async (t: TransferTimes) =>
      splitTransfer(t, await client.workflow.getHandle(t.workflowId).fetchHistory());
    const slowest: TailSplit[] = [];
    for (const t of byTotal.slice(0, n)) slowest.push(await split(t));
    return byTotal.length > n
      ? { slowest, median: await split(byTotal[Math.floor(byTotal.length / 2)]!) }
      : { slowest };
  } finally {
    await connection.close();
  }
}

const ms = (x: number) => `${Math.round(x)}`.padStart(5);

const tailLine = (label: string, s: TailSplit) =>
  `    ${label} ${ms(s.total)} ms = received→started ${ms(s.toStart)} + started→picked up ${ms(s.toPickup)} + picked up→confirmed ${ms(s.toConfirm)}` +
  ` (${s.tasksBefore} task${s.tasksBefore === 1 ? '' : 's'}${s.failedBefore ? `, ${s.failedBefore} failed` : ''};` +
  ` received ${new Date(s.received).toISOString().slice(11, 23)})`;

/** One line per split, the slowest first, then the median: the whole, then its three parts, in ms. */
export const tailLines = ({ slowest, median }: { slowest: readonly TailSplit[]; median?: TailSplit }) => [
  ...slowest.map((s, i) => tailLine(`#${i + 1} slow`, s)),
  ...(median ? [tailLine('median ', median)] : []),
];
