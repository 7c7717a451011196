/**
 * The internal systems in `npm run chaos`: a receiver in the script's own process (never killed) takes every report to
 * TRANSFER_CALLBACK_URL, and refuses the first delivery of one report in five with a 503, so the reports are retried
 * while workers, the Temporal server and the API are killed. The check: every final outgoing transfer was reported
 * with its final status, and every final incoming transfer with its outcome and final network status. Reports are
 * delivered at least once: a repeated delivery of the same report (its Idempotency-Key) is a retry, two different final
 * reports of one transfer are a duplicate, and a report without a key is wrong.
 */
import { createHash } from 'node:crypto';
import {
  startCallbackReceiver,
  type CallbackDelivery,
  type CallbackReceiver,
} from '../../test/harness/callback-receiver';
import { emptyCheck, type WorkCheck } from './check';
import { sleep } from './processes';

/** The reports an incoming transfer may get before its outcome: a person is needed. */
const ESCALATIONS = new Set(['route-escalated', 'review-escalated']);

/**
 * The receiver on a free loopback port; `seed` picks the one report in five (by its Idempotency-Key, which a retry
 * repeats) whose first delivery gets a 503.
 */
export function startReportReceiver(seed: number): Promise<CallbackReceiver> {
  return startCallbackReceiver({
    refuseFirst: (key) => createHash('sha256').update(`${seed}:${key}`).digest()[0]! < 51,
    refuseWith: 503,
  });
}

/** A final transfer and what its report must say. */
export interface ReportSubject {
  direction: 'outgoing' | 'incoming';
  /** The outgoing transfer's id, or the incoming transfer's transaction id. */
  id: string;
  /** The final status: the outgoing transfer's, or the incoming transfer's at the network. */
  status: string;
}

export type ReportCheck = WorkCheck;

/** The final reports each subject was sent and acknowledged, one per Idempotency-Key (a retry repeats it). */
function finalReports(receiver: CallbackReceiver, s: ReportSubject): CallbackDelivery['body'][] {
  const reports = new Map<string, CallbackDelivery['body']>();
  for (const d of receiver.deliveries) {
    if (d.answered >= 300) continue;
    const b = d.body;
    const mine =
      s.direction === 'incoming'
        ? b.direction === 'incoming' && b.transactionId === s.id && !ESCALATIONS.has(String(b.outcome))
        : b.direction !== 'incoming' && b.id === s.id;
    if (mine) reports.set(d.idempotencyKey ?? JSON.stringify(b), b);
  }
  return [...reports.values()];
}

/** Waits (up to `waitMs`) until every subject has an acknowledged final report, then checks each. */
export async function checkReports(
  receiver: CallbackReceiver,
  subjects: ReportSubject[],
  waitMs: number,
): Promise<ReportCheck> {
  const until = Date.now() + waitMs;
  while (Date.now() < until && subjects.some((s) => finalReports(receiver, s).length === 0)) await sleep(2000);
  const check = emptyCheck(subjects.length);
  const wrong = new Map<string, number>();
  for (const s of subjects) {
    const reports = finalReports(receiver, s);
    if (reports.length === 0) {
      check.lost++;
      continue;
    }
    if (reports.length > 1) {
      check.duplicated += reports.length - 1;
      continue;
    }
    const r = reports[0]!;
    const told = String(s.direction === 'incoming' ? r.networkStatus : r.status);
    if (told === s.status) check.completed++;
    else {
      check.wrong++;
      const key = `${s.direction} ${s.status}, reported ${told}`;
      wrong.set(key, (wrong.get(key) ?? 0) + 1);
    }
  }
  if (wrong.size) check.notes.push(`wrong: ${[...wrong].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  // Without its key, a retried report could not be told from a new one.
  const keyless = receiver.deliveries.filter((d) => d.idempotencyKey === undefined).length;
  if (keyless) {
    check.wrong += keyless;
    check.notes.push(`${keyless} reports without an Idempotency-Key`);
  }
  const refused = receiver.deliveries.filter((d) => d.answered >= 300).length;
  const escalations = receiver.deliveries.filter(
    (d) => d.answered < 300 && d.body.direction === 'incoming' && ESCALATIONS.has(String(d.body.outcome)),
  ).length;
  check.summary =
    `transfer reports: ${check.completed}/${check.total} reported once with their final status ` +
    `(${refused} first deliveries refused with 503; ${escalations} escalations reported too); ` +
    `${check.lost} not reported, ${check.duplicated} reported two outcomes, ${check.wrong} wrong`;
  return check;
}
