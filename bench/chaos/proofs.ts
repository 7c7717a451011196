/**
 * Wallet ownership proofs in `npm run chaos` (issue #22: "a worker killed while proofs wait loses none"). Each round
 * starts proofs before and during the process faults and completes them through the API while workers, the Temporal
 * server, the API and the sandbox are killed: SIGNATURE proofs signed (EIP-191) by wallets made here, SMALL_DEPOSIT
 * proofs whose exact deposit from the wallet is reported, SELF_DECLARATION proofs approved by a compliance principal.
 * A few must end otherwise: a signature by another wallet's key → REJECTED, a deposit never reported → EXPIRED at the
 * run's short WALLET_PROOF_DEPOSIT_DEADLINE. The checks read the proof through the API, its row, its audit entries
 * (one `wallet-proof.create`, one status change) and its workflow runs (exactly one, completed).
 */
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import type { Role } from '../../lib/principal';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { ethereumWallet, type EthereumWallet } from '../../test/harness/wallets';
import { emptyCheck, type WorkCheck } from './check';
import { sleep } from './processes';
import { workflowRuns } from './workflow-runs';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export type ApiCall = (
  method: string,
  path: string,
  role: Role,
  body?: unknown,
  headers?: Record<string, string>,
  patienceMs?: number,
) => Promise<{ status: number; body: Json }>;

export type ProofKind = 'signature' | 'deposit' | 'declaration' | 'wrong-signature' | 'never-deposited';
const METHOD: Record<ProofKind, string> = {
  signature: 'SIGNATURE',
  deposit: 'SMALL_DEPOSIT',
  declaration: 'SELF_DECLARATION',
  'wrong-signature': 'SIGNATURE',
  'never-deposited': 'SMALL_DEPOSIT',
};
const EXPECTED: Record<ProofKind, string> = {
  signature: 'VERIFIED',
  deposit: 'VERIFIED',
  declaration: 'VERIFIED',
  'wrong-signature': 'REJECTED',
  'never-deposited': 'EXPIRED',
};
const FINAL = new Set(['VERIFIED', 'REJECTED', 'EXPIRED']);
const TERMINAL_AUDIT: Record<string, string> = {
  VERIFIED: 'wallet-proof.verified',
  REJECTED: 'wallet-proof.rejected',
  EXPIRED: 'wallet-proof.expired',
};

export interface PlannedProof {
  /** The Idempotency-Key of its start, which becomes the proof's id. */
  id: string;
  kind: ProofKind;
  expected: string;
  customerRef: string;
  wallet: EthereumWallet;
  /** Signs instead of the wallet for a wrong-signature proof. */
  signer: EthereumWallet;
  startAtMs: number;
  actAfterMs: number;
  status?: string;
  /** When the proof left PENDING, as the store recorded it (ms since the round's start). */
  finalAt?: number;
  /** Why the script could not drive it (an answer it did not expect); the proof then counts as not completed. */
  error?: string;
  /** Attempts at its signature, deposit or review (more than one: a retry through a restart). */
  attempts: number;
}

/**
 * The round's proofs: `n` to be verified (half signatures, three in ten deposits, the rest declarations, drawn from the
 * seed) started over the fault window, and `odd` of each kind that must end otherwise; the deposits never reported are
 * started first, so their deadline ends them as early as possible.
 */
export function planProofs(opts: {
  prefix: string;
  n: number;
  odd: number;
  windowMs: number;
  random: () => number;
}): PlannedProof[] {
  const kinds: ProofKind[] = [
    ...Array.from({ length: opts.odd }, () => 'never-deposited' as const),
    ...Array.from({ length: opts.n }, (): ProofKind => {
      const x = opts.random();
      return x < 0.5 ? 'signature' : x < 0.8 ? 'deposit' : 'declaration';
    }),
    ...Array.from({ length: opts.odd }, () => 'wrong-signature' as const),
  ];
  return kinds.map((kind, i) => {
    const wallet = ethereumWallet();
    return {
      id: `${opts.prefix}-p${i}`,
      kind,
      expected: EXPECTED[kind],
      customerRef: `${opts.prefix}-wp${i}`,
      wallet,
      signer: kind === 'wrong-signature' ? ethereumWallet() : wallet,
      // The never-deposited ones at once; the others before and during the faults (which start 3 s in).
      startAtMs: kind === 'never-deposited' ? 0 : Math.round(opts.random() * (opts.windowMs + 3000)),
      actAfterMs: Math.round(opts.random() * 5000),
      attempts: 0,
    };
  });
}

/** The wallets' private keys in the encodings they could leak in, for the secrets scan. */
export const walletKeyNeedles = (proofs: PlannedProof[]) =>
  proofs
    .flatMap((p) => [p.wallet, ...(p.signer === p.wallet ? [] : [p.signer])])
    .flatMap((w) => {
      const key = Buffer.from(w.secretKey);
      return [key.toString('hex'), key.toString('base64'), key.toString('base64url')];
    });

/**
 * Starts one proof (repeated under its Idempotency-Key until an answer comes) and completes it: its signature, deposit
 * or review is sent, and sent again while the proof stays PENDING (an answer lost with a killed API, an update the
 * restarted Temporal server forgot, a 409 while an earlier attempt is still being written), until it reads final.
 */
export async function driveProof(
  p: PlannedProof,
  ctx: { call: ApiCall; t0: number; deadline: number; vaspDid: string; patienceMs: number },
): Promise<void> {
  const { call } = ctx;
  const wait = ctx.t0 + p.startAtMs - Date.now();
  if (wait > 0) await sleep(wait);
  const created = await call(
    'POST',
    '/v1/wallet-proofs',
    'operator',
    {
      customerRef: p.customerRef,
      asset: 'ETH',
      address: p.wallet.address,
      method: METHOD[p.kind],
      vaspDid: ctx.vaspDid,
    },
    { 'idempotency-key': p.id },
  ).catch((e: Error) => ({ status: 0, body: { error: e.message } }));
  if (created.status !== 201 && created.status !== 200) {
    p.error = `POST /v1/wallet-proofs answered ${created.status}: ${JSON.stringify(created.body).slice(0, 200)}`;
    return;
  }
  const act = actionFor(p, created.body);
  await sleep(p.actAfterMs);
  while (Date.now() < ctx.deadline) {
    if (act) {
      p.attempts++;
      const r = await call('POST', act.path, act.role, act.body, {}, ctx.patienceMs).catch(() => ({
        status: 0,
        body: undefined,
      }));
      if (r.status === 200 && FINAL.has(r.body?.status)) return settle(p, r.body, ctx.t0);
      // 409: the proof takes no such message now (an earlier attempt is being written, or it is final: read below).
      // A 5xx or 429 still there after `call`'s patience is "no answer yet" too: the API answers 503 when the workflow
      // did not take the message in time (its worker down or behind), and asks for the record to be read, or the
      // message sent again. Anything else is the run's failure.
      if (r.status !== 0 && r.status !== 409 && r.status < 500 && r.status !== 429) {
        p.error = `${act.path} answered ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`;
        return;
      }
    }
    await sleep(5000);
    const g = await call('GET', `/v1/wallet-proofs/${p.id}`, 'viewer', undefined, {}, ctx.patienceMs);
    if (g.status === 200 && FINAL.has(g.body.status)) return settle(p, g.body, ctx.t0);
  }
  p.error = 'not final before the quiescence deadline';
}

function settle(p: PlannedProof, body: Json, t0: number): void {
  p.status = body.status;
  const at = Date.parse(body.updatedAt ?? '');
  p.finalAt = (Number.isFinite(at) ? at : Date.now()) - t0;
}

function actionFor(p: PlannedProof, created: Json): { path: string; role: Role; body: unknown } | undefined {
  const base = `/v1/wallet-proofs/${p.id}`;
  if (p.kind === 'signature' || p.kind === 'wrong-signature') {
    const message = created.instructions?.challenge?.message as string;
    return { path: `${base}/signature`, role: 'operator', body: { signature: p.signer.personalSign(message) } };
  }
  if (p.kind === 'deposit') {
    const amount = created.instructions?.deposit?.amount as string;
    const txHash = `0x${randomBytes(32).toString('hex')}`;
    return { path: `${base}/deposit-observed`, role: 'operator', body: { txHash, from: p.wallet.address, amount } };
  }
  if (p.kind === 'declaration')
    return { path: `${base}/review`, role: 'compliance', body: { decision: 'approve', reason: 'chaos declaration' } };
  return undefined;
}

export interface ProofCheck extends WorkCheck {
  completions: number[];
}

/**
 * Every proof read through `GET /v1/wallet-proofs/:id` with its expected final status; its row; one create and one
 * status-change audit entry naming that status (two would be a proof verified twice); one workflow run, completed.
 */
export async function checkProofs(
  proofs: PlannedProof[],
  opts: { call: ApiCall; orch: Pool; temporalAddress: string; patienceMs: number },
): Promise<ProofCheck> {
  const ids = proofs.map((p) => p.id);
  const notes: string[] = [];
  for (const p of proofs) {
    const g = await opts.call('GET', `/v1/wallet-proofs/${p.id}`, 'viewer', undefined, {}, opts.patienceMs);
    if (g.status === 200) p.status = g.body.status;
    else if (g.status === 404) p.status = undefined;
  }
  const { rows: stored } = await opts.orch.query<{ id: string; status: string }>(
    'select id, status from wallet_proofs where id = any($1)',
    [ids],
  );
  const rowOf = new Map(stored.map((r) => [r.id, r.status]));
  const { rows: audits } = await opts.orch.query<{ subject: string; action: string; n: number }>(
    `select subject, action, count(*)::int as n from audit_log
      where subject = any($1) and action like 'wallet-proof.%' group by 1, 2`,
    [ids],
  );
  const auditOf = new Map<string, Map<string, number>>();
  for (const a of audits) auditOf.set(a.subject, (auditOf.get(a.subject) ?? new Map()).set(a.action, a.n));
  const runs = await workflowRuns(
    opts.temporalAddress,
    'walletProof',
    new Set(ids.map((id) => workflowIds.walletProof(id))),
  );

  const result: ProofCheck = { ...emptyCheck(proofs.length, notes), completions: [] };
  const problems = new Map<string, number>();
  const problem = (what: string) => problems.set(what, (problems.get(what) ?? 0) + 1);
  for (const p of proofs) {
    const actions = auditOf.get(p.id) ?? new Map<string, number>();
    const created = actions.get('wallet-proof.create') ?? 0;
    const changes = Object.values(TERMINAL_AUDIT).reduce((n, a) => n + (actions.get(a) ?? 0), 0);
    const pRuns = runs.get(workflowIds.walletProof(p.id)) ?? [];
    const lost = !rowOf.has(p.id) || !p.status || !FINAL.has(p.status) || pRuns.length === 0 || changes === 0;
    const twice = Math.max(0, created - 1) + Math.max(0, changes - 1) + Math.max(0, pRuns.length - 1);
    if (lost) {
      result.lost++;
      problem(
        `${p.kind}: ${rowOf.has(p.id) ? `${p.status ?? 'unread'}, ${pRuns.length} runs, ${changes} changes` : 'no row'}`,
      );
    }
    if (twice) {
      result.duplicated += twice;
      problem(`${p.kind}: ${created} creates, ${changes} status changes, ${pRuns.length} workflow runs`);
    }
    const right =
      p.status === p.expected &&
      rowOf.get(p.id) === p.expected &&
      actions.get(TERMINAL_AUDIT[p.expected]!) === 1 &&
      pRuns.every((s) => s === 'COMPLETED');
    if (right && !twice && !p.error) result.completed++;
    else if (!lost) {
      result.wrong++;
      problem(`${p.kind} → ${p.status} (row ${rowOf.get(p.id)}, runs ${pRuns.join('/')})`);
    }
    if (p.error) notes.push(`${p.id}: ${p.error}`);
    if (p.finalAt !== undefined) result.completions.push(p.finalAt);
  }
  if (problems.size) notes.unshift(`problems: ${[...problems].map(([k, n]) => `${k} ×${n}`).join('; ')}`);
  const by = (kind: ProofKind) => proofs.filter((p) => p.kind === kind && p.status === p.expected).length;
  const count = (kind: ProofKind) => proofs.filter((p) => p.kind === kind).length;
  const retried = proofs.filter((p) => p.attempts > 1).length;
  result.summary =
    `proofs: ${result.completed}/${result.total} final as expected ` +
    `(VERIFIED: ${by('signature')}/${count('signature')} EIP-191 signatures, ${by('deposit')}/${count('deposit')} deposits, ` +
    `${by('declaration')}/${count('declaration')} declarations; REJECTED: ${by('wrong-signature')}/${count('wrong-signature')} ` +
    `signed by another key; EXPIRED: ${by('never-deposited')}/${count('never-deposited')} deposits never made), ` +
    `${result.lost} lost, ${result.duplicated} started or decided twice, ${result.wrong} wrong; ` +
    `${retried} needed more than one attempt at their signature, deposit or review`;
  return result;
}
