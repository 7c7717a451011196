/**
 * Wallet ownership proofs: starting one (its challenge or deposit test, its row, its audit entry, its workflow),
 * reading them, and the status changes its workflow writes. The signature check itself is signature.ts's.
 */
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { appendAuditEntry } from '../audit/store';
import { withTransaction } from '../db/transaction';
import { ConflictError, NotFoundError, ValidationError } from '../lib/errors';
import type { GroupConfig } from '../lib/group';
import { auditActor, type Principal } from '../lib/principal';
import { VaspDid, Asset, NeedsReview } from '../lib/temporal/search-attributes';
import { workflowIds } from '../lib/temporal/workflow-ids';
import { isPriced, type Pricing } from '../pricing';
import { assertAddressForAsset, chainOfAssetOrThrow, schemesFor, toChecksumAddress } from './addresses';
import { challengeFor, SIGNATURE_SCHEMES, type ChallengeFields, type SignatureScheme } from './challenge';
import type { WalletProofConfig } from './config';
import { depositAmountFor } from './status';
import { verifyOwnershipSignature, type SignatureCheck } from './signature';
import { finishProof, getProof, insertProof, notePending, reusableProof, type NewProof } from './store';
import {
  PROOF_METHODS,
  type ProofEvidence,
  type ProofInstructions,
  type ProofMethod,
  type ProofTransition,
  type WalletProof,
  type WalletProofInput,
} from './types';

export interface ProofDeps {
  pool: Pool;
  temporal: Client;
  taskQueue: string;
  group: GroupConfig;
  config: WalletProofConfig;
  pricing?: Pricing;
}

export interface ProofRequest {
  customerRef: string;
  asset: string;
  address: string;
  method: string;
  vaspDid: string;
  /** For SIGNATURE: the scheme the wallet signs with (default: the chain's first, EIP191 or BIP137). */
  scheme?: string;
  /** A challenge nonce the caller already showed the customer (32 bytes hex); default: a fresh one. */
  nonce?: string;
}

export interface StartedProof {
  proof: WalletProof;
  instructions?: ProofInstructions;
  /** A verified proof of the same customer, asset and address (or the same Idempotency-Key) answered instead. */
  existing: boolean;
}

const NONCE = /^(?:0x)?[0-9a-fA-F]{64}$/;
const REF = /^[A-Za-z0-9._:@/-]{1,128}$/;

/** Checks the request (400 naming the field), answers a reusable proof, or starts a new one with its workflow. */
export async function startProof(
  deps: ProofDeps,
  request: ProofRequest,
  principal: Principal,
  idempotencyKey?: string,
): Promise<StartedProof> {
  const checked = checkRequest(deps, request);
  if (idempotencyKey !== undefined) {
    const earlier = await getProof(deps.pool, idempotencyKey);
    if (earlier) {
      const same = (['customerRef', 'asset', 'address', 'method', 'vaspDid'] as const).every(
        (k) => earlier[k] === checked[k],
      );
      if (!same) throw new ConflictError('Idempotency-Key names another proof request', { field: 'Idempotency-Key' });
      // A pending proof whose start did not get as far as its workflow (the process died between the two) gets it now.
      if (earlier.status === 'PENDING') await startWorkflow(deps, earlier);
      return { proof: earlier, instructions: instructionsOf(earlier), existing: true };
    }
  }
  const reusable = await reusableProof(deps.pool, checked, new Date());
  if (reusable) return { proof: reusable, existing: true };

  const now = Date.now();
  const window =
    checked.method === 'SIGNATURE'
      ? deps.config.challengeTtlMs
      : checked.method === 'SMALL_DEPOSIT'
        ? deps.config.depositDeadlineMs
        : deps.config.reviewDeadlineMs + deps.config.reviewExpiryMs;
  const row: NewProof = {
    id: idempotencyKey ?? `wp-${randomUUID()}`,
    ...checked,
    nonce: checked.nonce ?? randomBytes(32).toString('hex'),
    challengeExpiresAt: new Date(now + window).toISOString(),
    depositAddress: null,
    depositAmount: null,
    createdBy: auditActor(principal),
  };
  const perUsd = checked.method === 'SMALL_DEPOSIT' ? await baseUnitsPerUsd(deps, checked.asset) : 0;
  if (checked.method === 'SMALL_DEPOSIT') row.depositAddress = depositAddress(deps, checked.asset);
  const proof = await withTransaction(deps.pool, async (tx) => {
    // A few draws: an amount already open on the deposit address is drawn again (never two tests alike).
    for (let attempt = 0; attempt < 8; attempt++) {
      if (row.depositAddress)
        row.depositAmount = depositAmountFor(perUsd, deps.config.depositUsd, randomInt(0, 1_000_000) / 1_000_000);
      const inserted = await insertProof(tx, row);
      if (inserted === 'nonce')
        throw new ValidationError('nonce', 'was already used by another proof: a replayed challenge is refused');
      if (inserted === 'deposit') continue;
      await appendAuditEntry(tx, {
        actor: auditActor(principal),
        action: 'wallet-proof.create',
        subject: inserted.id,
        details: {
          principal,
          method: inserted.method,
          scheme: inserted.scheme,
          asset: inserted.asset,
          customerRef: inserted.customerRef,
          vaspDid: inserted.vaspDid,
          deadline: inserted.challengeExpiresAt,
        },
      });
      return inserted;
    }
    throw new ConflictError('no free test amount on the deposit address; try again shortly');
  });
  await startWorkflow(deps, proof);
  return { proof, instructions: instructionsOf(proof), existing: false };
}

async function startWorkflow(deps: ProofDeps, proof: WalletProof): Promise<void> {
  const input: WalletProofInput = {
    id: proof.id,
    method: proof.method,
    scheme: proof.scheme,
    asset: proof.asset,
    address: proof.address,
    deadline: proof.challengeExpiresAt,
    reviewDeadline: deps.config.reviewDeadline,
    validDays: deps.config.validDays,
    depositAmount: proof.depositAmount,
  };
  try {
    await deps.temporal.workflow.start('walletProof', {
      taskQueue: deps.taskQueue,
      workflowId: workflowIds.walletProof(proof.id),
      args: [input],
      typedSearchAttributes: [
        { key: VaspDid, value: proof.vaspDid },
        { key: Asset, value: proof.asset },
        { key: NeedsReview, value: false },
      ],
    });
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) return;
    // No workflow will ever finish this row: close it, so it neither blocks a deposit amount nor looks pending.
    await transition(deps.pool, {
      id: proof.id,
      status: 'REJECTED',
      reason: 'its workflow could not be started',
      actor: 'system:wallet-proof',
    }).catch(() => undefined);
    throw e;
  }
}

function checkRequest(deps: ProofDeps, r: ProofRequest) {
  if (!(PROOF_METHODS as readonly string[]).includes(r.method))
    throw new ValidationError('method', `must be one of ${PROOF_METHODS.join(', ')}`);
  const method = r.method as ProofMethod;
  const chain = chainOfAssetOrThrow('asset', r.asset);
  assertAddressForAsset('address', r.asset, r.address);
  if (!REF.test(r.customerRef))
    throw new ValidationError(
      'customerRef',
      'must be 1 to 128 characters of A-Z a-z 0-9 . _ : @ / - (a reference, not a name)',
    );
  const ours = [deps.group.gatewayDid, ...deps.group.subsidiaryDids].filter(Boolean);
  if (!ours.includes(r.vaspDid)) throw new ValidationError('vaspDid', 'must be a VASP of the group');
  let scheme: SignatureScheme | null = null;
  if (method === 'SIGNATURE') {
    const allowed = schemesFor(chain);
    scheme = (r.scheme ?? allowed[0]) as SignatureScheme;
    if (!allowed.includes(scheme))
      throw new ValidationError('scheme', `must be one of ${allowed.join(', ')} for an asset on ${chain}`);
  } else if (r.scheme !== undefined) {
    throw new ValidationError('scheme', 'is only for the SIGNATURE method');
  }
  if (r.nonce !== undefined && (method !== 'SIGNATURE' || !NONCE.test(r.nonce)))
    throw new ValidationError('nonce', 'must be 32 bytes in hex (64 hex characters), for the SIGNATURE method');
  if (method === 'SMALL_DEPOSIT' && !deps.config.depositAddresses[chain])
    throw new ValidationError(
      'method',
      `no deposit address is configured for ${chain} (WALLET_PROOF_DEPOSIT_ADDRESSES)`,
    );
  return {
    customerRef: r.customerRef,
    asset: r.asset,
    address: storedSpelling(r.address),
    vaspDid: r.vaspDid,
    method,
    scheme,
    nonce: r.nonce?.replace(/^0x/, '').toLowerCase(),
  };
}

/**
 * The one spelling proofs are stored under, so reuse and the list's filter find a proof whatever case the caller wrote:
 * EIP-55 for an Ethereum address, as given otherwise.
 */
export const storedSpelling = (address: string) =>
  /^0x[0-9a-fA-F]{40}$/.test(address) ? toChecksumAddress(address) : address;

function depositAddress(deps: ProofDeps, asset: string): string {
  return deps.config.depositAddresses[chainOfAssetOrThrow('asset', asset)]!;
}

/** How many base units of the asset one USD buys, from pricing/ (400 naming asset when it has no price). */
async function baseUnitsPerUsd(deps: ProofDeps, asset: string): Promise<number> {
  const symbol = asset.split(/[-@]/)[0]!.toUpperCase();
  const decimals = deps.pricing?.decimals(symbol);
  if (!deps.pricing || decimals === undefined)
    throw new ValidationError('asset', `has no price to size a test deposit of about 1 USD (${symbol})`);
  const whole = 10n ** BigInt(decimals);
  const priced = await deps.pricing.toFiat({ asset: symbol, amount: whole.toString(), currency: 'USD' });
  if (!isPriced(priced) || !(priced.value > 0))
    throw new ValidationError(
      'asset',
      `has no price to size a test deposit (${isPriced(priced) ? 'zero' : priced.unknown})`,
    );
  return Number(whole) / priced.value;
}

/** The challenge fields of a proof, as signed. */
export const challengeFieldsOf = (p: WalletProof): ChallengeFields => ({
  nonce: p.nonce,
  address: p.address,
  asset: p.asset,
  customerRef: p.customerRef,
  vaspDid: p.vaspDid,
  expiresAt: p.challengeExpiresAt,
});

/** What the caller needs to complete a PENDING proof. */
export function instructionsOf(p: WalletProof): ProofInstructions | undefined {
  if (p.status !== 'PENDING') return undefined;
  if (p.method === 'SIGNATURE') {
    const c = challengeFor(p.scheme!, challengeFieldsOf(p));
    return { challenge: { ...c, expiresAt: p.challengeExpiresAt } };
  }
  if (p.method === 'SMALL_DEPOSIT')
    return {
      deposit: { address: p.depositAddress!, amount: p.depositAmount!, asset: p.asset, deadline: p.challengeExpiresAt },
    };
  return { review: { deadline: p.challengeExpiresAt } };
}

export async function proofOrNotFound(pool: Pool, id: string): Promise<WalletProof> {
  const proof = await getProof(pool, id);
  if (!proof) throw new NotFoundError(`no wallet proof ${id}`, { field: 'id' });
  return proof;
}

/** Verifies a signature over the proof's challenge; ValidationError (400) for a malformed one. */
export async function checkProofSignature(pool: Pool, id: string, signature: string): Promise<SignatureCheck> {
  const proof = await proofOrNotFound(pool, id);
  if (proof.method !== 'SIGNATURE' || !proof.scheme)
    throw new ValidationError('signature', `proof ${id} is not a signature proof`);
  return verifyOwnershipSignature(proof.scheme, challengeFieldsOf(proof), signature);
}

const ACTION = {
  VERIFIED: 'wallet-proof.verified',
  REJECTED: 'wallet-proof.rejected',
  EXPIRED: 'wallet-proof.expired',
};

/**
 * A status change out of PENDING with its audit entry, in one transaction. Idempotent: a proof no longer PENDING is
 * left as it is (a retried write, or the other side of a race), and the audit entry is keyed by `idempotencyKey`.
 */
export async function transition(pool: Pool, t: ProofTransition, idempotencyKey?: string): Promise<WalletProof> {
  if (t.status === 'PENDING') throw new ValidationError('status', 'a transition leaves PENDING');
  const status = t.status;
  return withTransaction(pool, async (tx) => {
    const changed = await finishProof(tx, {
      id: t.id,
      status,
      reason: t.reason ?? null,
      ...(t.evidence ? { evidence: t.evidence } : {}),
      ...(t.validDays ? { validDays: t.validDays } : {}),
    });
    if (!changed) return proofOrNotFound(pool, t.id);
    await appendAuditEntry(
      tx,
      {
        actor: t.actor,
        action: ACTION[status],
        subject: t.id,
        details: {
          ...(t.principal ? { principal: t.principal } : {}),
          method: changed.method,
          asset: changed.asset,
          customerRef: changed.customerRef,
          ...(t.reason ? { reason: t.reason } : {}),
          ...(changed.expiresAt ? { validUntil: changed.expiresAt } : {}),
        },
      },
      { idempotencyKey },
    );
    return changed;
  });
}

/** An observed deposit that did not prove the wallet: its reason and evidence recorded, the proof still PENDING. */
export async function recordMismatch(
  pool: Pool,
  change: { id: string; reason: string; evidence: ProofEvidence },
  idempotencyKey?: string,
): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const noted = await notePending(tx, change.id, change.reason, change.evidence);
    if (!noted) return;
    await appendAuditEntry(
      tx,
      {
        actor: 'system:wallet-proof',
        action: 'wallet-proof.deposit-mismatch',
        subject: change.id,
        details: { reason: change.reason, evidence: change.evidence },
      },
      { idempotencyKey },
    );
  });
}

export { SIGNATURE_SCHEMES };
