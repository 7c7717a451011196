/**
 * The network's transaction of an outgoing transfer: created once (the transfer id is its `transactionRef`), read
 * back, withdrawn when the counterparty does not answer in time, and the final status reported to the internal systems.
 */
import type { DecideDeps } from '../policy/decide';
import type { TransferDecision, TransferFactsInput } from '../policy/types';
import { decideBeforeSending } from './decide';
import { FINAL_NETWORK_STATUSES, networkUpdatedAtOf } from '../lib/network-status';
import type { StoredPii } from './store';
import { toNetworkError } from '../network/client';
import { txCancel, txCreate, txInfo, type NetworkTransaction } from '../network/transactions';
import { postTransferOutcome } from '../lib/transfer-callback';
import { writeTransferViewOrLog } from '../transfer-view/store';
import type { TransferViewUpdate } from '../transfer-view/types';
import { outgoingViewAfterSend } from '../transfer-view/status';
import type { TransferContext } from './context';
import { recordToSend, storePii } from './personal-data';
import { planTransfer, type TransferPlan } from './plan';
import { validateOutgoingBody, type OutgoingRequest } from './request';
import { beneficiaryWallet, networkProofOf, registerProofWaiter, usableProof } from '../wallet-proofs/requirement';
import { removeProofWaiter } from '../wallet-proofs/store';

/** What the workflow learns from the network's answer: no personal data. */
export interface CreatedTransaction {
  id: string;
  status: string;
  transactionType?: string;
  beneficiaryVaspDid?: string;
  /** The network's Transaction as created, personal data removed (the agent answers with it). */
  transaction: NetworkTransaction;
}

/** The final status as posted to TRANSFER_CALLBACK_URL. */
export interface TransferReport {
  id: string;
  workflowId: string;
  status: string;
  transactionId?: string;
  originatorVaspDid: string;
  beneficiaryVaspDid?: string;
  mode?: string;
  error?: { type: string; message: string; field?: string };
  history: { status: string; at: string; source: string }[];
}

/** Where a Transaction carries personal data: plain IVMS101 the network echoes in hosted mode, or what was decrypted here. */
const PERSONAL_DATA_FIELDS = ['ivms101', 'originator', 'beneficiary', 'ivms101Encrypted'] as const;

/** The Transaction without the personal data the network may echo (plain IVMS101 in hosted mode). */
export function withoutPersonalData(tx: NetworkTransaction): NetworkTransaction {
  const rest: NetworkTransaction = { ...tx };
  for (const field of PERSONAL_DATA_FIELDS) delete rest[field];
  return rest;
}

/** Whether an answer with this Transaction hands out personal data (so reading it is audited). */
export function carriesPersonalData(tx: NetworkTransaction): boolean {
  return PERSONAL_DATA_FIELDS.some((field) => tx[field] !== undefined && tx[field] !== null);
}

/**
 * `POST /tx/create` with `transactionRef` = the transfer's id, so the network itself de-duplicates retries: a 409
 * (first request still in flight) is retryable, a 200 for a known ref returns the existing transaction.
 */
export async function createTransaction(
  ctx: TransferContext,
  id: string,
  request: OutgoingRequest,
  plan: TransferPlan,
  pii: StoredPii | undefined,
  classification?: Record<string, unknown>,
  beneficiaryProof?: object,
): Promise<NetworkTransaction> {
  const { originator: _o, beneficiary: _b, transactionRef: _ref, ...rest } = request.body;
  const json: Record<string, unknown> = { ...rest, transactionRef: id };
  if (beneficiaryProof) json.beneficiaryProof = beneficiaryProof;
  if (plan.beneficiaryVaspDid) json.beneficiaryVASPdid = plan.beneficiaryVaspDid;
  // Hosted: the plain data the rules require (recordToSend), which the network encrypts.
  if (plan.mode === 'hosted') Object.assign(json, recordToSend(request, classification));
  else json.pii = pii!.tree;
  const tx = await txCreate(ctx.network, json);
  await ctx.store.setTransactionId(id, tx.id);
  return withoutPersonalData(tx);
}

/** `GET /tx/info?id=` as the network answers it. */
export async function transactionInfo(ctx: TransferContext, transactionId: string): Promise<NetworkTransaction> {
  return txInfo<NetworkTransaction>(ctx.network, transactionId);
}

/**
 * Withdraws a transaction whose counterparty did not answer before the deadline. When the network refuses because the
 * transaction is already final, the counterparty's answer won the race and stands: `cancelled: false`.
 */
export async function cancelTransaction(
  ctx: TransferContext,
  transactionId: string,
  reason: string,
): Promise<{ status: string; cancelled: boolean }> {
  const { tx, acted } = await txCancel(ctx.network, transactionId, reason, FINAL_NETWORK_STATUSES);
  const status = tx.status ?? 'CANCELLED';
  return { status, cancelled: acted || status === 'CANCELLED' };
}

/** POSTs the final status to TRANSFER_CALLBACK_URL, once per status (its Idempotency-Key); false when none is set. */
export async function reportTransferStatus(ctx: TransferContext, report: TransferReport): Promise<boolean> {
  const url = ctx.config.callbackUrl;
  if (!url) return false;
  try {
    await postTransferOutcome(url, { ...report }, { 'Idempotency-Key': `${report.workflowId}:${report.status}` });
  } catch (e) {
    throw await toNetworkError(e, `POST ${url}`);
  }
  return true;
}

/**
 * Encrypts and stores the personal data, then creates the network's transaction: the workflow's one step, with the
 * sealed request read and unsealed once. `given` is the plan the API decided when it checked the request
 * (outgoing/checks.ts), which the worker trusts; without one (a transfer started before plans were passed) the request
 * is validated and planned here. Idempotent: a retry reuses the stored CIDs, and the network finds the transaction by
 * its transactionRef.
 */
export async function sendTransfer(
  ctx: TransferContext,
  id: string,
  given?: TransferPlan,
  loading: ReturnType<TransferContext['store']['load']> = ctx.store.load(id),
): Promise<{ plan: TransferPlan; tx: NetworkTransaction } | AwaitingProof> {
  const { request, transfer } = await loading;
  const proof = await beneficiaryProofToSend(ctx, request, transfer.classification);
  if (proof === 'missing') return { awaitingProof: true };
  let plan = given;
  if (!plan) {
    validateOutgoingBody(request.body);
    plan = await planTransfer(ctx, request);
  }
  const pii = await storePii(ctx, id, request, plan, transfer);
  return { plan, tx: await createTransaction(ctx, id, request, plan, pii, transfer.classification, proof) };
}

/**
 * The `beneficiaryProof` a transfer to a self-hosted wallet goes with: the caller's own (already in the body), else
 * the customer's VERIFIED, unexpired proof of the wallet (`originatorRef`) in the network's shape, else none; or
 * `missing` when the classification says the sending subsidiary's jurisdiction asks for one at the amount.
 */
async function beneficiaryProofToSend(
  ctx: TransferContext,
  request: OutgoingRequest,
  classification: Record<string, unknown> | undefined,
): Promise<object | undefined | 'missing'> {
  const { body } = request;
  if (body.beneficiaryProof !== undefined || classification?.beneficiaryAddressType !== 'UNHOSTED') return undefined;
  const proof = await usableProof(ctx.pool, beneficiaryWallet(body), body.originatorRef, new Date());
  if (proof) return networkProofOf(proof);
  return classification.ownershipProofRequired === true ? 'missing' : undefined;
}

/**
 * The sending subsidiary's jurisdiction asks for the self-hosted wallet's ownership proof and none is given or VERIFIED
 * yet: nothing was sent; the workflow waits (AWAITING_PROOF) for the wallet-proof workflow's signal.
 */
export interface AwaitingProof {
  awaitingProof: true;
  /** The outgoing policy's approval, when it was asked: the transfer is sent without asking again. */
  policy?: TransferDecision;
}

/** What the send step tells the workflow: the plan it followed, the transaction, and the list entry it wrote (if any). */
export interface SentTransfer {
  plan: TransferPlan;
  created: CreatedTransaction;
  view?: TransferViewUpdate;
  /** The outgoing policy's approval, when it was asked (its decision otherwise holds the transfer: `held`). */
  policy?: TransferDecision;
}

/** The policy did not approve: nothing was sent; the workflow refuses the transfer or holds it for a person. */
export interface HeldTransfer {
  held: TransferDecision;
}

/**
 * The workflow's send step: the outgoing policy's decision when `decide` is given (a transfer not approved is not
 * sent), then sendTransfer, then the console's list entry for the created transaction (outgoingViewAfterSend of
 * `view`, the workflow's entry before the step). The entry is answered only when it was written: after a failed
 * write (logged) the workflow writes it by itself.
 */
export async function sendOutgoingTransfer(
  ctx: TransferContext,
  input: { id: string; plan?: TransferPlan; view?: TransferViewUpdate; decide?: TransferFactsInput },
  policy?: DecideDeps,
): Promise<SentTransfer | HeldTransfer | AwaitingProof> {
  // The sealed request is read and unsealed while the policy decides: a transfer not approved only wastes the read.
  const loading = ctx.store.load(input.id);
  loading.catch(() => undefined);
  const verdict = input.decide && policy ? await decideBeforeSending(ctx, policy, input.decide) : undefined;
  if (verdict && verdict.decision.action !== 'APPROVE') return { held: verdict };
  const approved = verdict ? { policy: verdict } : {};
  const sent = await sendTransfer(ctx, input.id, input.plan, loading);
  if ('awaitingProof' in sent) return { ...sent, ...approved };
  const { plan, tx } = sent;
  const created = createdFrom(tx);
  if (!input.view) return { plan, created, ...approved };
  const update = outgoingViewAfterSend(input.view, plan, created, FINAL_NETWORK_STATUSES.has(created.status));
  return {
    plan,
    created,
    view: (await writeTransferViewOrLog(ctx.pool, ctx.logger, update)) ? update : undefined,
    ...approved,
  };
}

/**
 * The workflow's last step: the console's list entry for the final state (a failed write is logged and answered, not
 * thrown: the workflow writes it again), then the report to TRANSFER_CALLBACK_URL (a failure throws, to be retried).
 */
export async function finishOutgoingTransfer(
  ctx: TransferContext,
  input: { view?: TransferViewUpdate; report?: TransferReport },
): Promise<{ viewWritten: boolean; delivered: boolean }> {
  const viewWritten = input.view ? await writeTransferViewOrLog(ctx.pool, ctx.logger, input.view) : false;
  return { viewWritten, delivered: input.report ? await reportTransferStatus(ctx, input.report) : false };
}

/** The transaction's current status, the fallback when webhooks are lost: a poll, so low priority in the budget. */
export async function outgoingStatus(
  ctx: TransferContext,
  transactionId: string,
): Promise<{ status: string; updatedAt?: string }> {
  const tx = await transactionInfo({ ...ctx, network: ctx.network.at('low') }, transactionId);
  return { status: tx.status ?? 'UNKNOWN', updatedAt: networkUpdatedAtOf(tx) };
}

/** What the workflow keeps of the network's answer. */
function createdFrom(tx: NetworkTransaction): CreatedTransaction {
  return {
    id: tx.id,
    status: tx.status ?? 'NEW',
    transactionType: tx.transactionType,
    beneficiaryVaspDid: tx.beneficiaryVASPdid,
    transaction: tx,
  };
}

/** The whole flow without Temporal (the benchmark's baseline): plan, encrypt and store, create. */
export async function runTransferDirect(
  ctx: TransferContext,
  id: string,
  request: OutgoingRequest,
): Promise<NetworkTransaction> {
  await ctx.store.put(id, request);
  const plan = await planTransfer(ctx, request);
  const pii = await storePii(ctx, id, request, plan);
  return createTransaction(ctx, id, request, plan, pii);
}

/**
 * The wait for the beneficiary wallet's proof (AWAITING_PROOF): registers the workflow as a waiter of the wallet and
 * answers whether the customer's VERIFIED proof is there now; with `stop`, only removes the waiter (the wait ended).
 */
export async function awaitBeneficiaryProof(
  ctx: TransferContext,
  input: { id: string; workflowId: string; stop?: boolean },
): Promise<{ verified: boolean }> {
  const { request } = await ctx.store.load(input.id);
  const wallet = beneficiaryWallet(request.body);
  if (input.stop) {
    await removeProofWaiter(ctx.pool, { ...wallet, workflowId: input.workflowId });
    return { verified: false };
  }
  const verified = await registerProofWaiter(
    ctx.pool,
    wallet,
    request.body.originatorRef,
    input.workflowId,
    new Date(),
  );
  return { verified };
}
