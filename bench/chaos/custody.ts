/**
 * The custody system in `npm run chaos` (issue 23, items 4 and 5): a receiver in the script's own process (never
 * killed) takes every `deposit.*` and `transfer.*` callback, checks its signature, and refuses the first delivery of
 * one message in five with a 503, so retries happen while workers, the Temporal server and the API are killed. The
 * check: every final outgoing transfer and deposit was told exactly one event (de-duplicated by webhook id, as a
 * custody system does), the event its outcome and its subsidiary's rule call for, and no delivery carried a bad
 * signature.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkWebhookSignature } from '../../lib/webhook-signature';
import { sleep } from './processes';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Message {
  event: string;
  subject: string;
  body: Json;
  deliveries: number;
  acknowledged: boolean;
}

export interface CustodyReceiver {
  url: string;
  /** By webhook id: a retry is the same message. */
  messages: Map<string, Message>;
  badSignatures: number;
  refused: number;
  close(): Promise<void>;
}

/** The receiver on a free loopback port; `seed` picks which messages' first delivery is refused. */
export async function startCustodyReceiver(secret: string, seed: number): Promise<CustodyReceiver> {
  const receiver: CustodyReceiver = {
    url: '',
    messages: new Map(),
    badSignatures: 0,
    refused: 0,
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (!checkWebhookSignature(secret, req.headers, raw).ok) {
        receiver.badSignatures++;
        res.writeHead(401).end();
        return;
      }
      const id = String(req.headers['webhook-id']);
      const body = JSON.parse(raw) as Json;
      const m = receiver.messages.get(id) ?? {
        event: String(body.event),
        subject: String(body.transferId ?? body.depositId),
        body,
        deliveries: 0,
        acknowledged: false,
      };
      m.deliveries++;
      receiver.messages.set(id, m);
      const refuse = m.deliveries === 1 && createHash('sha256').update(`${seed}:${id}`).digest()[0]! < 51;
      if (refuse) receiver.refused++;
      else m.acknowledged = true;
      res.writeHead(refuse ? 503 : 200).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/custody`;
  receiver.close = () => new Promise((done) => server.close(() => done()));
  return receiver;
}

/** What a final subject must have been told, by its outcome and rule; `either` when both are right (a timer race). */
export type Expected = 'release' | 'halt' | 'return' | 'either';

export interface CustodySubject {
  id: string;
  kind: 'transfer' | 'deposit';
  expected: Expected;
}

export interface CustodyCheck {
  total: number;
  completed: number;
  lost: number;
  duplicated: number;
  wrong: number;
  notes: string[];
  summary: string;
}

const EVENT: Record<'transfer' | 'deposit', Record<string, Expected>> = {
  transfer: { 'transfer.release': 'release', 'transfer.halt': 'halt' },
  deposit: { 'deposit.release': 'release', 'deposit.return': 'return' },
};

/**
 * Waits (up to `waitMs`) until every subject has an acknowledged message (the workflows end after the acknowledgement,
 * but their status is final before), then checks each.
 */
export async function checkCustody(
  receiver: CustodyReceiver,
  subjects: CustodySubject[],
  waitMs: number,
): Promise<CustodyCheck> {
  const told = () => {
    const by = new Map<string, Message[]>();
    for (const m of receiver.messages.values()) by.set(m.subject, [...(by.get(m.subject) ?? []), m]);
    return by;
  };
  const until = Date.now() + waitMs;
  while (Date.now() < until && subjects.some((s) => !(told().get(s.id) ?? []).some((m) => m.acknowledged)))
    await sleep(2000);
  const by = told();
  const check: CustodyCheck = {
    total: subjects.length,
    completed: 0,
    lost: 0,
    duplicated: 0,
    wrong: 0,
    notes: [],
    summary: '',
  };
  const wrong = new Map<string, number>();
  let retried = 0;
  for (const s of subjects) {
    const messages = (by.get(s.id) ?? []).filter((m) => m.acknowledged);
    retried += messages.filter((m) => m.deliveries > 1).length;
    if (messages.length === 0) {
      check.lost++;
      continue;
    }
    if (messages.length > 1) {
      check.duplicated += messages.length - 1;
      continue;
    }
    const got = EVENT[s.kind][messages[0]!.event];
    if (got && (s.expected === got || (s.expected === 'either' && got !== 'return'))) check.completed++;
    else {
      check.wrong++;
      const key = `${s.kind} expected ${s.expected}, told ${messages[0]!.event}`;
      wrong.set(key, (wrong.get(key) ?? 0) + 1);
    }
  }
  if (wrong.size) check.notes.push(`wrong: ${[...wrong].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  if (receiver.badSignatures) {
    check.wrong += receiver.badSignatures;
    check.notes.push(`${receiver.badSignatures} deliveries with a bad signature`);
  }
  check.summary =
    `custody callbacks: ${check.completed}/${check.total} told exactly the expected event once ` +
    `(${receiver.refused} first deliveries refused with 503, ${retried} of these subjects' messages delivered more than once); ` +
    `${check.lost} told nothing, ${check.duplicated} told two events, ${check.wrong} wrong`;
  return check;
}
