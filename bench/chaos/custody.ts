/**
 * The custody system in `npm run chaos` (issue 23, items 4 and 5): a receiver in the script's own process (never
 * killed) takes every `deposit.*` and `transfer.*` callback, checks its signature, and refuses the first delivery of
 * one message in five with a 503, so retries happen while workers, the Temporal server and the API are killed. The
 * check: every final outgoing transfer and deposit was told exactly one event (de-duplicated by webhook id, as a
 * custody system does), the event its outcome and its subsidiary's rule call for, and no delivery carried a bad
 * signature.
 */
import { createHash } from 'node:crypto';
import {
  startCustodyReceiver as startReceiver,
  type CustodyDelivery,
  type CustodyReceiver,
} from '../../test/harness/custody-receiver';
import { emptyCheck, type WorkCheck } from './check';
import { sleep } from './processes';

/** The verified deliveries of one webhook id: a retry is the same message. */
interface Message {
  event: string;
  subject: string;
  deliveries: number;
  acknowledged: boolean;
}

/** The receiver on a free loopback port; `seed` picks the one message in five whose first delivery gets a 503. */
export function startCustodyReceiver(secret: string, seed: number): Promise<CustodyReceiver> {
  return startReceiver({
    secret,
    refuseFirst: (id) => createHash('sha256').update(`${seed}:${id}`).digest()[0]! < 51,
    refuseWith: 503,
  });
}

/** The messages by webhook id, each from its verified deliveries (the first gives its event and subject). */
function messagesOf(deliveries: CustodyDelivery[]): Map<string, Message> {
  const messages = new Map<string, Message>();
  for (const d of deliveries) {
    if (!d.verified) continue;
    const m = messages.get(d.webhookId) ?? {
      event: String(d.body.event),
      subject: String(d.body.transferId ?? d.body.depositId),
      deliveries: 0,
      acknowledged: false,
    };
    m.deliveries++;
    if (d.answered === 200) m.acknowledged = true;
    messages.set(d.webhookId, m);
  }
  return messages;
}

/** What a final subject must have been told, by its outcome and rule; `either` when both are right (a timer race). */
export type Expected = 'release' | 'halt' | 'return' | 'either';

export interface CustodySubject {
  id: string;
  kind: 'transfer' | 'deposit';
  expected: Expected;
}

export type CustodyCheck = WorkCheck;

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
    for (const m of messagesOf(receiver.deliveries).values()) by.set(m.subject, [...(by.get(m.subject) ?? []), m]);
    return by;
  };
  const until = Date.now() + waitMs;
  while (Date.now() < until && subjects.some((s) => !(told().get(s.id) ?? []).some((m) => m.acknowledged)))
    await sleep(2000);
  const by = told();
  const check = emptyCheck(subjects.length);
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
  const badSignatures = receiver.deliveries.filter((d) => !d.verified).length;
  if (badSignatures) {
    check.wrong += badSignatures;
    check.notes.push(`${badSignatures} deliveries with a bad signature`);
  }
  const refused = receiver.deliveries.filter((d) => d.verified && d.answered !== 200).length;
  check.summary =
    `custody callbacks: ${check.completed}/${check.total} told exactly the expected event once ` +
    `(${refused} first deliveries refused with 503, ${retried} of these subjects' messages delivered more than once); ` +
    `${check.lost} told nothing, ${check.duplicated} told two events, ${check.wrong} wrong`;
  return check;
}
