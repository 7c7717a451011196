/**
 * Deposits in `npm run chaos` (issue #23: "held deposits survive worker and server kills, 0 released twice, 0 lost").
 * Each round reports deposits through `POST /v1/deposits` at seeded moments during the process faults, each twice (the
 * same chain, txHash and output index; the second time with the hash in upper case, at once or a little later), of
 * four kinds: below the threshold (RELEASED at once, nothing at the network), the originator's transfer sent to the
 * gateway first (matched to it, RELEASED once the group ACCEPTED it), the originator answering the network's INCOMPLETE
 * message late (AWAITING_DATA, then RELEASED on the same message) and never (RETURN_REQUIRED at the run's short
 * DEPOSIT_DATA_DEADLINE, then RETURNED when the script, as the custody system, confirms the return). The sandbox's
 * simulated originator (`PUT /sandbox/counterparties/:vaspDID/deposits`) plays the late and silent originators. The
 * checks read each deposit through the API, its row, its audit entries (one `deposit.reported`, one decision, one
 * `deposit.returned` for a return), its workflow runs (one, completed) and the network's messages to its address (one
 * per deposit matched at the network, none below the threshold).
 */
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { simulateTransfer, type SandboxTestRoutes } from '../../sandbox/nested-routing/simulate-client';
import type { ApiCall } from './proofs';
import { emptyCheck, type WorkCheck } from './check';
import { sleep } from './processes';
import { workflowRuns } from './workflow-runs';

export type DepositKind = 'below' | 'transfer-first' | 'late' | 'never';
const EXPECTED: Record<DepositKind, string> = {
  below: 'RELEASED',
  'transfer-first': 'RELEASED',
  late: 'RELEASED',
  never: 'RETURNED',
};
/** The network status of the deposit's one message: none below the threshold (nothing is reported). */
const NETWORK_EXPECTED: Record<DepositKind, string | undefined> = {
  below: undefined,
  'transfer-first': 'ACCEPTED',
  late: 'ACCEPTED',
  never: 'INCOMPLETE',
};
const FINAL = new Set(['RELEASED', 'RETURNED']);
/** The decision's audit entry: one per deposit (two would be a deposit released or returned twice). */
const DECISION_AUDIT: Record<string, string> = {
  RELEASED: 'deposit.released',
  RETURNED: 'deposit.return-required',
};
/** 0.0001 ETH: below FATF's 1,000 USD threshold at the embedded price table's ETH price. */
const BELOW = 100_000_000_000_000n;
/** 1.5 ETH: above it. Each deposit adds its index, so no two in a round have the same amount. */
const ABOVE = 1_500_000_000_000_000_000n;

export interface PlannedDeposit {
  key: string;
  kind: DepositKind;
  expected: string;
  vaspDid: string;
  to: string;
  from: string;
  txHash: string;
  outputIndex: number;
  amount: string;
  /** The originator's natural person (transfer-first and late): personal data, searched for by the secrets scan. */
  originatorName?: [string, string];
  /** Late: seconds after the network's INCOMPLETE message until the simulated originator sends its data. */
  lateSeconds?: number;
  startAtMs: number;
  /** Transfer-first: from the transfer's send to the first report. */
  reportAfterMs: number;
  /** From the first report's answer to the second; undefined: both sent at once. */
  secondAfterMs?: number;
  /** The deposit's id, from the first report's answer. */
  id?: string;
  /** Each report's HTTP status and deposit id. */
  answers: { status: number; id?: string }[];
  /** Transfer-first: the ids of the transfers the counterparty sent, and its send attempts (more: a retry). */
  sent: string[];
  sendAttempts: number;
  status?: string;
  /** When the deposit became final, as the store recorded it (ms since the round's start). */
  finalAt?: number;
  /** Why the script could not drive it (an answer it did not expect); the deposit then counts as not completed. */
  error?: string;
}

/**
 * The round's deposits: `never` whose originator never answers, reported in the first 3 s (the faults start 3 s in) so
 * their deadline ends them as early as possible, then `n - never` of the three kinds that end RELEASED (one of each, the rest drawn
 * from the seed), reported before and during the faults (which start 3 s in).
 */
export function planDeposits(opts: {
  prefix: string;
  n: number;
  never: number;
  windowMs: number;
  vaspDids: [string, string];
  random: () => number;
}): PlannedDeposit[] {
  const { random } = opts;
  const others = Math.max(3, opts.n - opts.never);
  const kinds: DepositKind[] = [
    ...Array.from({ length: opts.never }, () => 'never' as const),
    'below',
    'transfer-first',
    'late',
    ...Array.from({ length: others - 3 }, (): DepositKind => {
      const x = random();
      return x < 0.3 ? 'below' : x < 0.65 ? 'transfer-first' : 'late';
    }),
  ];
  const hex = (bytes: number) => randomBytes(bytes).toString('hex');
  return kinds.map((kind, i) => {
    const named = kind === 'transfer-first' || kind === 'late';
    return {
      key: `${opts.prefix}-d${i}`,
      kind,
      expected: EXPECTED[kind],
      vaspDid: opts.vaspDids[i % 2]!,
      to: `0x${hex(20)}`,
      from: `0x${hex(20)}`,
      txHash: `0x${hex(32)}`,
      outputIndex: Math.floor(random() * 4),
      amount: String((kind === 'below' ? BELOW : ABOVE) + BigInt(i)),
      ...(named && { originatorName: [`Dep${hex(4)}`, `Orig${hex(4)}`] as [string, string] }),
      ...(kind === 'late' && { lateSeconds: 5 + Math.round(random() * 25) }),
      startAtMs: Math.round(random() * (kind === 'never' ? 3000 : opts.windowMs + 3000)),
      reportAfterMs: Math.round(1000 + random() * 7000),
      ...(random() < 0.5 && { secondAfterMs: Math.round(random() * 20_000) }),
      answers: [],
      sent: [],
      sendAttempts: 0,
    };
  });
}

/** The originators' personal data (names), for the secrets scan. */
export const depositNeedles = (deposits: PlannedDeposit[]) => deposits.flatMap((d) => d.originatorName ?? []);

/**
 * Before the round: every deposit's address registered to its subsidiary in the group's registry (a report to an
 * address not the group's is refused), and the simulated originator told how to answer each late and silent deposit.
 */
export async function prepareDeposits(
  deposits: PlannedDeposit[],
  ctx: { call: ApiCall; sandbox: SandboxTestRoutes; originatorDid: string },
): Promise<void> {
  const put = await ctx.call('PUT', '/v1/addresses', 'operator', {
    addresses: deposits.map((d) => ({ vaspDID: d.vaspDid, asset: 'ETH', address: d.to, customerRef: d.key })),
  });
  if (put.status !== 200)
    throw new Error(`PUT /v1/addresses (deposits) answered ${put.status}: ${JSON.stringify(put.body).slice(0, 300)}`);
  const answers: Record<string, unknown> = {};
  for (const d of deposits) {
    if (d.kind === 'never') answers[d.to] = 'never';
    if (d.kind === 'late') answers[d.to] = { afterSeconds: d.lateSeconds, originatorName: d.originatorName };
  }
  const r = await fetch(`${ctx.sandbox.url}/sandbox/counterparties/${ctx.originatorDid}/deposits`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ctx.sandbox.testToken}` },
    body: JSON.stringify(answers),
  });
  if (!r.ok) throw new Error(`configuring the deposits' originator answered ${r.status}: ${await r.text()}`);
}

/**
 * Drives one deposit: for a transfer-first one the counterparty's transfer to the gateway is sent (tried again while
 * the sandbox restarts), then the deposit is reported twice (each report repeated by the API client until an answer
 * comes: a killed API's lost answer gives 200 with the same deposit), and read until it is final.
 */
export async function driveDeposit(
  d: PlannedDeposit,
  ctx: {
    call: ApiCall;
    t0: number;
    deadline: number;
    patienceMs: number;
    sandbox: SandboxTestRoutes;
    originatorDid: string;
    gatewayDid: string;
  },
): Promise<void> {
  const { call } = ctx;
  const wait = ctx.t0 + d.startAtMs - Date.now();
  if (wait > 0) await sleep(wait);
  if (d.kind === 'transfer-first') {
    for (;;) {
      d.sendAttempts++;
      try {
        const tx = await simulateTransfer(ctx.sandbox, {
          from: ctx.originatorDid,
          to: ctx.gatewayDid,
          destination: d.to,
          origin: d.from,
          originatorName: d.originatorName,
          amount: d.amount,
        });
        d.sent.push(tx.id);
        break;
      } catch (e) {
        if (d.sendAttempts >= 60) {
          d.error = `the counterparty's transfer was not sent: ${(e as Error).message}`;
          return;
        }
        await sleep(1000);
      }
    }
    await sleep(d.reportAfterMs);
  }
  const body = {
    vaspDid: d.vaspDid,
    asset: 'ETH',
    txHash: d.txHash,
    outputIndex: d.outputIndex,
    to: d.to,
    from: d.from,
    amount: d.amount,
  };
  // The same output again, its hash in upper case: the same deposit.
  const again = { ...body, txHash: `0x${d.txHash.slice(2).toUpperCase()}` };
  const report = (b: typeof body) =>
    call('POST', '/v1/deposits', 'operator', b).catch((e: Error) => ({ status: 0, body: { error: e.message } }));
  const answers =
    d.secondAfterMs === undefined
      ? await Promise.all([report(body), report(again)])
      : [await report(body), await sleep(d.secondAfterMs).then(() => report(again))];
  d.answers = answers.map((a) => ({ status: a.status, id: a.body?.id }));
  const bad = answers.find((a) => a.status !== 200 && a.status !== 201);
  if (bad) {
    d.error = `POST /v1/deposits answered ${bad.status}: ${JSON.stringify(bad.body).slice(0, 200)}`;
    return;
  }
  d.id = answers[0]!.body.id;
  while (Date.now() < ctx.deadline) {
    const g = await call('GET', `/v1/deposits/${d.id}`, 'viewer', undefined, {}, ctx.patienceMs);
    if (g.status === 200 && g.body.status === 'RETURN_REQUIRED') {
      // The custody system returns the funds and confirms it; 409: confirmed already (an answer lost), read again.
      const r = await call('POST', `/v1/deposits/${d.id}/returned`, 'operator', {
        txHash: `0x${randomBytes(32).toString('hex')}`,
      });
      if (r.status !== 200 && r.status !== 409) {
        d.error = `POST /v1/deposits/${d.id}/returned answered ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`;
        return;
      }
      continue;
    }
    if (g.status === 200 && FINAL.has(g.body.status)) {
      d.status = g.body.status;
      const at = Date.parse(g.body.decidedAt ?? g.body.updatedAt ?? '');
      d.finalAt = (Number.isFinite(at) ? at : Date.now()) - ctx.t0;
      return;
    }
    await sleep(5000);
  }
  d.error = 'not final before the quiescence deadline';
}

export interface DepositCheck extends WorkCheck {
  completions: number[];
}

/**
 * Every deposit read through `GET /v1/deposits/:id` with its expected final status; one row for its address; one
 * `deposit.reported` and one change to a final status in the audit log (two would be a deposit released twice); one
 * workflow (runs continued as new are the same one), completed; both reports answered with the same deposit; and at the
 * network, the messages to its address: one (the transfer or the INCOMPLETE report, with the expected status, the
 * one the deposit is matched to), none below the threshold. A counterparty's transfer sent again by the script's own
 * retry is counted as the network knows it and not held against the deposit.
 */
export async function checkDeposits(
  deposits: PlannedDeposit[],
  opts: { call: ApiCall; orch: Pool; net: Pool; temporalAddress: string; patienceMs: number },
): Promise<DepositCheck> {
  const notes: string[] = [];
  for (const d of deposits) {
    if (!d.id) continue;
    const g = await opts.call('GET', `/v1/deposits/${d.id}`, 'viewer', undefined, {}, opts.patienceMs);
    if (g.status === 200) d.status = g.body.status;
    else if (g.status === 404) d.status = undefined;
  }
  const addresses = deposits.map((d) => d.to);
  const { rows: stored } = await opts.orch.query<{
    id: string;
    to: string;
    status: string;
    transaction_id: string | null;
  }>('select id, to_address as to, status, transaction_id from deposits where to_address = any($1)', [addresses]);
  const rowsOf = new Map<string, typeof stored>();
  for (const r of stored) rowsOf.set(r.to, [...(rowsOf.get(r.to) ?? []), r]);
  const ids = stored.map((r) => r.id);
  const { rows: audits } = await opts.orch.query<{ subject: string; action: string; n: number }>(
    `select subject, action, count(*)::int as n from audit_log
      where subject = any($1) and action like 'deposit.%' group by 1, 2`,
    [ids],
  );
  const auditOf = new Map<string, Map<string, number>>();
  for (const a of audits) auditOf.set(a.subject, (auditOf.get(a.subject) ?? new Map()).set(a.action, a.n));
  const runs = await workflowRuns(opts.temporalAddress, 'deposit', new Set(ids.map((id) => workflowIds.deposit(id))));
  const { rows: messages } = await opts.net.query<{ id: string; to: string; status: string; first: string }>(
    `select id::text, body -> 'transactionBlockchainInfo' ->> 'destination' as to, status,
            body -> 'actions' -> 0 ->> 'action' as first
       from transactions where body -> 'transactionBlockchainInfo' ->> 'destination' = any($1)`,
    [addresses],
  );
  const messagesOf = new Map<string, typeof messages>();
  for (const m of messages) messagesOf.set(m.to, [...(messagesOf.get(m.to) ?? []), m]);

  const result: DepositCheck = { ...emptyCheck(deposits.length, notes), completions: [] };
  const problems = new Map<string, number>();
  const problem = (what: string) => problems.set(what, (problems.get(what) ?? 0) + 1);
  let sameAnswer = 0;
  let awaited = 0;
  let resent = 0;
  let matchedAtNetwork = 0;
  for (const d of deposits) {
    const rows = rowsOf.get(d.to) ?? [];
    const row = rows[0];
    const actions = (row && auditOf.get(row.id)) || new Map<string, number>();
    const reported = actions.get('deposit.reported') ?? 0;
    const changes = Object.values(DECISION_AUDIT).reduce((n, a) => n + (actions.get(a) ?? 0), 0);
    const confirmations = actions.get('deposit.returned') ?? 0;
    // A run continued as new and the run it started are one workflow; any other run under the id is a second one.
    const dRuns = row ? (runs.get(workflowIds.deposit(row.id)) ?? []) : [];
    const workflows = dRuns.filter((s) => s !== 'CONTINUED_AS_NEW').length;
    const msgs = messagesOf.get(d.to) ?? [];
    // Messages the deposit's reports made (the network's INCOMPLETE ones) and transfers the counterparty sent.
    const reportedMsgs = msgs.filter((m) => m.first === 'notify');
    const sentMsgs = msgs.filter((m) => m.first !== 'notify');
    if (sentMsgs.length > 1 && d.sendAttempts > 1) resent++;
    const answeredIds = new Set(d.answers.map((a) => a.id));
    const answeredSame = d.answers.length === 2 && answeredIds.size === 1 && answeredIds.has(row?.id);
    if (answeredSame) sameAnswer++;
    if ((actions.get('deposit.awaiting-data') ?? 0) > 0 && d.kind === 'late') awaited++;

    const lost = !row || !d.status || !FINAL.has(d.status) || workflows === 0 || changes === 0;
    // Messages beyond the deposit's one: a report that made a message beside the transfer, or a second report's.
    const extraMessages =
      d.kind === 'below'
        ? msgs.length
        : d.kind === 'transfer-first'
          ? reportedMsgs.length + (d.sendAttempts > 1 ? 0 : Math.max(0, sentMsgs.length - 1))
          : Math.max(0, msgs.length - 1);
    const twice =
      Math.max(0, rows.length - 1) +
      Math.max(0, reported - 1) +
      Math.max(0, changes - 1) +
      Math.max(0, confirmations - 1) +
      Math.max(0, workflows - 1) +
      (d.answers.length === 2 && answeredIds.size > 1 ? 1 : 0) +
      extraMessages;
    if (lost) {
      result.lost++;
      problem(
        `${d.kind}: ${row ? `${d.status ?? 'unread'}, ${workflows} workflows, ${changes} final changes` : 'no row'}`,
      );
    }
    if (twice) {
      result.duplicated += twice;
      problem(
        `${d.kind}: ${rows.length} rows, ${reported} reported, ${changes} final changes, ${workflows} workflows, ` +
          `${msgs.length} network messages (${reportedMsgs.length} from reports)`,
      );
    }
    const matched = NETWORK_EXPECTED[d.kind]
      ? msgs.find((m) => m.id === row?.transaction_id && m.status === NETWORK_EXPECTED[d.kind])
      : undefined;
    if (matched) matchedAtNetwork++;
    const right =
      d.status === d.expected &&
      row?.status === d.expected &&
      actions.get(DECISION_AUDIT[d.expected]!) === 1 &&
      confirmations === (d.expected === 'RETURNED' ? 1 : 0) &&
      dRuns.every((s) => s === 'COMPLETED' || s === 'CONTINUED_AS_NEW') &&
      answeredSame &&
      (NETWORK_EXPECTED[d.kind] ? matched !== undefined : row?.transaction_id === null);
    if (right && !twice && !d.error) result.completed++;
    else if (!lost) {
      result.wrong++;
      problem(
        `${d.kind} → ${d.status} (row ${row?.status}, runs ${dRuns.join('/')}, matched ${row?.transaction_id ?? 'none'}: ` +
          `${msgs.map((m) => `${m.status}${m.id === row?.transaction_id ? '*' : ''}`).join('/') || 'no message'})`,
      );
    }
    if (d.error) notes.push(`${d.key}: ${d.error}`);
    if (d.finalAt !== undefined) result.completions.push(d.finalAt);
  }
  if (resent) notes.push(`${resent} transfers sent twice by the counterparty's retries (not held against the deposit)`);
  if (problems.size) notes.unshift(`problems: ${[...problems].map(([k, n]) => `${k} ×${n}`).join('; ')}`);
  const by = (kind: DepositKind) => deposits.filter((d) => d.kind === kind && d.status === d.expected).length;
  const count = (kind: DepositKind) => deposits.filter((d) => d.kind === kind).length;
  result.summary =
    `deposits: ${result.completed}/${result.total} final as expected ` +
    `(RELEASED: ${by('below')}/${count('below')} below the threshold at once, ${by('transfer-first')}/${count('transfer-first')} ` +
    `whose transfer came first, ${by('late')}/${count('late')} whose originator answered late (${awaited} of them ` +
    `through AWAITING_DATA); RETURN_REQUIRED, then RETURNED by the custody system's confirmation: ${by('never')}/${count('never')} whose originator never answered), ` +
    `${result.lost} lost, ${result.duplicated} released, returned, stored, started or sent to the network twice, ` +
    `${result.wrong} wrong; ${sameAnswer}/${result.total} reported twice answered with the same deposit, ` +
    `${matchedAtNetwork} matched to their one network message`;
  return result;
}
