/**
 * The internal systems in `npm run chaos`: a receiver in the script's own process (never killed) takes every report to
 * TRANSFER_CALLBACK_URL, and refuses the first delivery of one report in five with a 503, so the reports are retried
 * while workers, the Temporal server and the API are killed. The check: every final outgoing transfer was reported
 * with its final status, and every final incoming transfer with its outcome and final network status. Reports are
 * delivered at least once: a repeated delivery of the same report is a retry, two different final reports of one
 * transfer are a duplicate.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { emptyCheck, type WorkCheck } from './check';
import { sleep } from './processes';

type Json = Record<string, unknown>;

export interface ReportReceiver {
  url: string;
  /** Every delivery, with its answer (refused ones too). */
  deliveries: { body: Json; answered: number }[];
  close(): Promise<void>;
}

/** The reports an incoming transfer may get before its outcome: a person is needed. */
const ESCALATIONS = new Set(['route-escalated', 'review-escalated']);

/** What identifies one report, retries alike: an outgoing transfer's status, an incoming transfer's outcome. */
const reportKey = (b: Json) =>
  b.direction === 'incoming'
    ? `in:${String(b.transactionId)}:${String(b.outcome)}`
    : `out:${String(b.id)}:${String(b.status)}`;

/** The receiver on a free loopback port; `seed` picks the one report in five whose first delivery gets a 503. */
export async function startReportReceiver(seed: number): Promise<ReportReceiver> {
  const deliveries: ReportReceiver['deliveries'] = [];
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      let body: Json;
      try {
        body = JSON.parse(text) as Json;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const key = reportKey(body);
      const refuse = !seen.has(key) && createHash('sha256').update(`${seed}:${key}`).digest()[0]! < 51;
      seen.add(key);
      const answered = refuse ? 503 : 204;
      deliveries.push({ body, answered });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/transfer-callback`,
    deliveries,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
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

/** The final reports each subject was sent and acknowledged, by their key (one per distinct report). */
function finalReports(receiver: ReportReceiver, s: ReportSubject): Json[] {
  const reports = new Map<string, Json>();
  for (const d of receiver.deliveries) {
    if (d.answered >= 300) continue;
    const b = d.body;
    const mine =
      s.direction === 'incoming'
        ? b.direction === 'incoming' && b.transactionId === s.id && !ESCALATIONS.has(String(b.outcome))
        : b.direction !== 'incoming' && b.id === s.id;
    if (mine) reports.set(reportKey(b), b);
  }
  return [...reports.values()];
}

/** Waits (up to `waitMs`) until every subject has an acknowledged final report, then checks each. */
export async function checkReports(
  receiver: ReportReceiver,
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
