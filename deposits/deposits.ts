/**
 * Deposits the custody system reports: checking a report (400 naming the field), storing it once per on-chain output
 * with its audit entry, starting its workflow (workflows/deposit.ts); the checks that match it to the network's
 * message (tx/notify, tx/info) and the audited status changes the workflow writes.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { findRegistryOwner } from '../address-book/store/registry-owner';
import { appendAuditEntry } from '../audit/store';
import { withTransaction } from '../db/transaction';
import { classifyTransfer, rulesOrFatf } from '../jurisdictions';
import type { JurisdictionConfig } from '../jurisdictions/config';
import { ConflictError, NotFoundError, ValidationError } from '../lib/errors';
import type { GroupConfig } from '../lib/group';
import { auditActor, type Principal } from '../lib/principal';
import { Asset, VaspDid } from '../lib/temporal/search-attributes';
import { workflowIds } from '../lib/temporal/workflow-ids';
import type { NetworkClient } from '../network/client';
import { notifyDeposit, txInfo, txListPages } from '../network/transactions';
import type { Pricing } from '../pricing';
import {
  assertAddressForAsset,
  assertTxHash,
  chainOfAsset,
  toChecksumAddress,
  TX_HASH,
  type Chain,
} from '../wallet-proofs/addresses';
import { storedSpelling } from '../wallet-proofs/proofs';
import { isProvenWallet, ownershipProofRequired, usableProof } from '../wallet-proofs/requirement';
import { addProofWaiter, removeProofWaiter } from '../wallet-proofs/store';
import type { DepositConfig } from './config';
import { changeDeposit, getDeposit, insertDeposit, markEscalated, markReturned } from './store';
import type {
  Deposit,
  DepositClassification,
  DepositInput,
  DepositMatch,
  DepositStatus,
  DepositTransition,
} from './types';

export interface DepositDeps {
  pool: Pool;
  temporal: Client;
  taskQueue: string;
  group: GroupConfig;
  config: DepositConfig;
  pricing: Pricing;
  jurisdictions: JurisdictionConfig;
}

export interface DepositReport {
  vaspDid: string;
  asset: string;
  txHash: string;
  outputIndex?: number;
  to: string;
  from?: string;
  amount: string;
  /** The receiving customer: an opaque reference (the wallet proofs' rule), whose proof of `from` may be needed. */
  customerRef?: string;
  /** The custody system knows `from` to be a self-hosted wallet (no VASP's). */
  fromSelfHosted?: boolean;
}

/** The largest 256-bit integer has 78 digits. */
const AMOUNT = /^[0-9]{1,78}$/;
const MAX_OUTPUT_INDEX = 2 ** 31 - 1;
/** The wallet proofs' customerRef rule (wallet-proofs/proofs.ts): a reference, never a name. */
const REF = /^[A-Za-z0-9._:@/-]{1,128}$/;

/**
 * Checks the report, stores it (HELD) and starts its workflow; the same on-chain output reported again answers the row
 * already stored (`created: false`) and starts nothing new. The same output with other facts is a 409.
 */
export async function reportDeposit(
  deps: DepositDeps,
  report: DepositReport,
  principal: Principal,
): Promise<{ deposit: Deposit; created: boolean }> {
  const checked = await checkReport(deps, report);
  const { classification, value } = await classify(deps, checked);
  const proofRequired = await selfHostedProofRequired(deps, checked, report.fromSelfHosted === true, value);
  const now = Date.now();
  const stored = await withTransaction(deps.pool, async (tx) => {
    const result = await insertDeposit(tx, {
      id: `dep-${randomUUID()}`,
      ...checked,
      classification,
      proofRequired,
      dataDeadlineAt: new Date(now + deadlineOf(deps, checked.vaspDid).dataDeadlineMs).toISOString(),
      createdBy: auditActor(principal),
    });
    if (!result.created) return result;
    await appendAuditEntry(tx, {
      actor: auditActor(principal),
      action: 'deposit.reported',
      subject: result.deposit.id,
      details: {
        principal,
        vaspDid: checked.vaspDid,
        chain: checked.chain,
        asset: checked.asset,
        txHash: checked.txHash,
        outputIndex: checked.outputIndex,
        amount: checked.amount,
        classification,
        proofRequired,
      },
    });
    return result;
  });
  if (!stored.created) {
    const d = stored.deposit;
    const same = d.vaspDid === checked.vaspDid && d.to === checked.to && d.amount === checked.amount;
    if (!same || d.asset !== checked.asset)
      throw new ConflictError(
        `txHash: output ${checked.outputIndex} of ${checked.txHash} was reported before with another subsidiary, address, asset or amount`,
        { field: 'txHash' },
      );
  }
  // A HELD row whose report did not get as far as its workflow (the process died between the two) gets it now; a
  // workflow already started or finished under the id is left alone.
  if (stored.deposit.status === 'HELD') await startWorkflow(deps, stored.deposit);
  return stored;
}

async function checkReport(deps: DepositDeps, r: DepositReport) {
  if (!deps.group.subsidiaryDids.includes(r.vaspDid))
    throw new ValidationError('vaspDid', 'must be a subsidiary of the group (the one the deposit reached)');
  const chain = chainOfAsset(r.asset);
  if (!chain)
    throw new ValidationError('asset', 'must be an asset on Ethereum (ETH, a -ERC20 token, eip155:…) or Bitcoin (BTC)');
  assertTxHash('txHash', chain, r.txHash);
  const outputIndex = r.outputIndex ?? 0;
  if (!Number.isInteger(outputIndex) || outputIndex < 0 || outputIndex > MAX_OUTPUT_INDEX)
    throw new ValidationError('outputIndex', `must be a whole number from 0 to ${MAX_OUTPUT_INDEX}`);
  if (!AMOUNT.test(r.amount) || /^0+$/.test(r.amount))
    throw new ValidationError('amount', 'must be a whole number of base units above 0: digits only, no decimals');
  assertAddressForAsset('to', r.asset, r.to);
  if (r.from !== undefined) assertAddressForAsset('from', r.asset, r.from);
  if (r.customerRef !== undefined && !REF.test(r.customerRef))
    throw new ValidationError(
      'customerRef',
      'must be 1 to 128 characters of A-Z a-z 0-9 . _ : @ / - (a reference, not a name)',
    );
  const to = await registeredSpelling(deps, r.vaspDid, r.to);
  if (!to)
    throw new ValidationError(
      'to',
      `is not an address of ${r.vaspDid} in the group's address registry (PUT /v1/addresses registers one)`,
    );
  return {
    vaspDid: r.vaspDid,
    chain,
    asset: r.asset,
    txHash: r.txHash.toLowerCase(),
    outputIndex,
    to,
    from: r.from ?? null,
    customerRef: r.customerRef ?? null,
    amount: r.amount.replace(/^0+(?=\d)/, ''),
  };
}

/**
 * The address as the subsidiary registered it, or undefined when the registry gives it another owner or none. An
 * Ethereum address is looked up as written, in lower case and in its EIP-55 spelling (hex compares without case).
 */
async function registeredSpelling(deps: DepositDeps, vaspDid: string, to: string): Promise<string | undefined> {
  const spellings = /^0x[0-9a-fA-F]{40}$/.test(to) ? [to, to.toLowerCase(), toChecksumAddress(to)] : [to];
  for (const spelling of new Set(spellings)) {
    if ((await findRegistryOwner(deps.pool, spelling, deps.group.subsidiaryDids)) === vaspDid) return spelling;
  }
  return undefined;
}

/**
 * The amount against the receiving subsidiary's jurisdiction's threshold (SUBSIDIARY_JURISDICTIONS, else FATF), as an
 * outgoing transfer is classified (outgoing/validate.ts). An amount that cannot be priced is UNKNOWN: held, never
 * released as below the threshold.
 */
async function classify(
  deps: DepositDeps,
  d: { vaspDid: string; asset: string; amount: string },
): Promise<{ classification: DepositClassification; value?: number }> {
  const c = await classifyTransfer(
    {
      ownCountry: deps.jurisdictions.subsidiaryCountries[d.vaspDid],
      asset: d.asset,
      amount: d.amount,
      beneficiaryAddressType: 'HOSTED',
    },
    deps.pricing,
  );
  return {
    classification: c.type === 'BELOW_THRESHOLD' || c.type === 'TRAVELRULE' ? c.type : 'UNKNOWN',
    ...('value' in c.price ? { value: c.price.value } : {}),
  };
}

/** The wallet a deposit came from, as proofs are stored: the asset and the address's stored spelling. */
const sendingWallet = (d: { asset: string; from: string }) => ({ asset: d.asset, address: storedSpelling(d.from) });

/**
 * Whether the deposit comes from a self-hosted wallet whose ownership proof the receiving subsidiary's jurisdiction
 * asks for at its value (selfHostedProof: EU above 1,000 EUR, CH at any amount; unpriced asks for it). Self-hosted:
 * `from` given and the custody system says so, or anyone's VERIFIED proof of (asset, from) exists. Such a deposit needs
 * the customer (`customerRef`) whose proof releases it, and `from`, the wallet proved: refused 400 without them.
 */
async function selfHostedProofRequired(
  deps: DepositDeps,
  d: { vaspDid: string; asset: string; from: string | null; customerRef: string | null },
  fromSelfHosted: boolean,
  value: number | undefined,
): Promise<boolean> {
  const rules = rulesOrFatf(deps.jurisdictions.subsidiaryCountries[d.vaspDid]);
  if (!ownershipProofRequired(rules, value)) return false;
  if (d.from === null) {
    if (!fromSelfHosted) return false;
    throw new ValidationError(
      'from',
      `is required for a deposit from a self-hosted wallet above the ${rules.name} ownership-proof threshold: it is the wallet the customer proves`,
    );
  }
  const selfHosted =
    fromSelfHosted || (await isProvenWallet(deps.pool, sendingWallet({ asset: d.asset, from: d.from }), new Date()));
  if (!selfHosted) return false;
  if (d.customerRef === null)
    throw new ValidationError(
      'customerRef',
      `is required for a deposit from a self-hosted wallet above the ${rules.name} ownership-proof threshold: it names the customer whose VERIFIED proof of the wallet releases the deposit`,
    );
  return true;
}

/** The receiving subsidiary's jurisdiction's data deadline and what happens at it (deposits/config.ts). */
function deadlineOf(deps: DepositDeps, vaspDid: string) {
  const country = deps.jurisdictions.subsidiaryCountries[vaspDid];
  const own = country ? deps.config.byCountry[country] : undefined;
  return {
    dataDeadlineMs: own?.dataDeadlineMs ?? deps.config.dataDeadlineMs,
    deadlineAction: own?.deadlineAction ?? deps.config.deadlineAction,
  };
}

async function startWorkflow(deps: DepositDeps, d: Deposit): Promise<void> {
  const deadline = deadlineOf(deps, d.vaspDid);
  const input: DepositInput = {
    id: d.id,
    vaspDid: d.vaspDid,
    classification: d.classification,
    ...(d.proofRequired ? { proofRequired: true } : {}),
    dataDeadlineAt: d.dataDeadlineAt,
    dataDeadlineMs: deadline.dataDeadlineMs,
    matchWindowMs: deps.config.matchWindowMs,
    recheckInitialMs: deps.config.recheckInitialMs,
    recheckMaxMs: deps.config.recheckMaxMs,
    deadlineAction: deadline.deadlineAction,
    ...(deps.config.custodyCallbacks ? {} : { custodyCallbacks: false }),
  };
  try {
    await deps.temporal.workflow.start('deposit', {
      taskQueue: deps.taskQueue,
      workflowId: workflowIds.deposit(d.id),
      args: [input],
      // One workflow per deposit, ever: a report after it finished must not start a second one.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: VaspDid, value: d.vaspDid },
        { key: Asset, value: d.asset },
      ],
    });
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) return;
    throw e;
  }
}

export async function depositOrNotFound(pool: Pool, id: string): Promise<Deposit> {
  const deposit = await getDeposit(pool, id);
  if (!deposit) throw new NotFoundError(`no deposit ${id}`, { field: 'id' });
  return deposit;
}

/**
 * The network's message the deposit belongs to. `notify`: reported with tx/notify (the network answers the message it
 * already has, by txHash or by destination + asset + amount, else a new INCOMPLETE one; the same deposit always
 * answers the same message); otherwise the matched message read with tx/info, at low priority (a recheck).
 */
export async function checkDeposit(
  deps: { pool: Pool; network: NetworkClient; gatewayDid?: string },
  input: { id: string; notify: boolean },
): Promise<DepositMatch> {
  const match = await matchAtNetwork(deps, input);
  return { ...match, checkedAt: Date.now() };
}

async function matchAtNetwork(
  deps: { pool: Pool; network: NetworkClient; gatewayDid?: string },
  input: { id: string; notify: boolean },
): Promise<DepositMatch> {
  const d = await depositOrNotFound(deps.pool, input.id);
  if (!input.notify && d.transactionId) {
    const tx = await txInfo(deps.network.at('low'), d.transactionId);
    return { transactionId: tx.id ?? d.transactionId, networkStatus: String(tx.status ?? '') };
  }
  if (!d.transactionId) {
    const waiting = await atGateway(deps, d);
    if (waiting) return waiting;
  }
  const tx = await notifyDeposit(deps.network, {
    txHash: d.txHash,
    transactionAmount: d.amount,
    transactionAsset: d.asset,
    destination: d.to,
    beneficiaryVASPdid: d.vaspDid,
    ...(d.from ? { origin: d.from } : {}),
    customerRef: d.id,
  });
  return { transactionId: tx.id, networkStatus: String(tx.status ?? '') };
}

interface GatewayMessage {
  id: string;
  status?: string;
  beneficiaryVASPdid?: string;
  transactionAsset?: unknown;
  transactionAmount?: string;
  transactionBlockchainInfo?: { destination?: string; txHash?: string };
}

/** Statuses of a message the gateway has received and not answered (nor redirected) yet. */
const AT_GATEWAY = ['SENT', 'ACK', 'NOT_READY'];

/**
 * How many pages (of 100, newest first) of the gateway's unanswered messages to the deposit's address a first check
 * reads at most. The network filters by the address (`wallet`), so one page is the rule: a backlog read whole spans
 * pages, and transfers routed away between two page reads move the rest up, past the page already read.
 */
const GATEWAY_PAGES = 5;

/**
 * A transfer for the deposit that reached the gateway and waits there to be routed to the subsidiary: the network
 * matches a report only among the messages of the VASP it names, so reporting now would make a second message (an
 * INCOMPLETE one at the subsidiary). Same destination, asset and amount, and no other txHash. The routing keeps the
 * message's id, so the deposit follows it with tx/info from here.
 */
async function atGateway(
  deps: { network: NetworkClient; gatewayDid?: string },
  d: Deposit,
): Promise<DepositMatch | undefined> {
  const gatewayDid = deps.gatewayDid;
  if (!gatewayDid || gatewayDid === d.vaspDid) return undefined;
  const hex = (s: string | undefined) => (s && /^(0x)?[0-9a-fA-F]+$/.test(s) ? s.toLowerCase() : s);
  const isTheDeposits = (t: GatewayMessage) =>
    t.beneficiaryVASPdid === gatewayDid &&
    AT_GATEWAY.includes(String(t.status)) &&
    hex(t.transactionBlockchainInfo?.destination) === hex(d.to) &&
    typeof t.transactionAsset === 'string' &&
    t.transactionAsset.toUpperCase() === d.asset.toUpperCase() &&
    t.transactionAmount?.replace(/^0+(?=\d)/, '') === d.amount &&
    (!t.transactionBlockchainInfo?.txHash || hex(t.transactionBlockchainInfo.txHash) === d.txHash);
  const pages = txListPages<GatewayMessage>(
    deps.network,
    { vaspDID: gatewayDid, txDirection: 'incoming', status: AT_GATEWAY, wallet: d.to },
    { maxPages: GATEWAY_PAGES, untilShortPage: true },
  );
  for await (const transactions of pages) {
    const found = transactions.find(isTheDeposits);
    if (found) return { transactionId: found.id, networkStatus: String(found.status) };
  }
  return undefined;
}

const ACTION: Record<DepositStatus, string> = {
  HELD: 'deposit.held',
  AWAITING_DATA: 'deposit.awaiting-data',
  AWAITING_PROOF: 'deposit.awaiting-proof',
  RELEASED: 'deposit.released',
  RETURN_REQUIRED: 'deposit.return-required',
  RETURNED: 'deposit.returned',
};

/**
 * A status change or a new match, with its audit entry, in one transaction. Idempotent: a final deposit, or one
 * already as asked, is left as it is, and the audit entry is keyed by `idempotencyKey`.
 */
export async function transitionDeposit(pool: Pool, t: DepositTransition, idempotencyKey?: string): Promise<Deposit> {
  return withTransaction(pool, async (tx) => {
    const changed = await changeDeposit(tx, {
      id: t.id,
      status: t.status,
      reason: t.reason ?? null,
      ...(t.match ? { match: t.match } : {}),
      ...(t.dataDeadlineAt ? { dataDeadlineAt: t.dataDeadlineAt } : {}),
      actor: t.actor,
    });
    if (!changed) return depositOrNotFound(pool, t.id);
    const { before, after } = changed;
    await appendAuditEntry(
      tx,
      {
        actor: t.actor,
        action:
          before.status !== after.status
            ? ACTION[after.status]
            : before.transactionId !== after.transactionId || before.networkStatus !== after.networkStatus
              ? 'deposit.matched'
              : 'deposit.noted',
        subject: t.id,
        details: {
          from: before.status,
          to: after.status,
          ...(after.transactionId ? { transactionId: after.transactionId } : {}),
          ...(after.networkStatus ? { networkStatus: after.networkStatus } : {}),
          ...(t.reason ? { reason: t.reason } : {}),
          ...(t.proofId ? { proofId: t.proofId } : {}),
          ...(t.dataDeadlineAt && before.dataDeadlineAt !== after.dataDeadlineAt
            ? { dataDeadlineAt: after.dataDeadlineAt }
            : {}),
          ...(t.decision
            ? { decision: t.decision.decision, ...(t.decision.principal ? { principal: t.decision.principal } : {}) }
            : {}),
        },
      },
      { idempotencyKey },
    );
    return after;
  });
}

/**
 * A deposit in AWAITING_PROOF (workflows/deposit.ts): registers the workflow as a waiter of the sending wallet's proof
 * first, then asks the store for the customer's usable proof (VERIFIED, unexpired), so a proof verified in between is
 * either seen here or signalled. Found: the waiter is removed and the proof's id answered. With `stop`, only removes
 * the waiter (the deadline passed).
 */
export async function awaitDepositProof(
  pool: Pool,
  input: { id: string; workflowId: string; stop?: boolean },
): Promise<{ proofId?: string }> {
  const d = await depositOrNotFound(pool, input.id);
  if (d.from === null) return {};
  const waiter = { ...sendingWallet({ asset: d.asset, from: d.from }), workflowId: input.workflowId };
  if (input.stop) {
    await removeProofWaiter(pool, waiter);
    return {};
  }
  await addProofWaiter(pool, waiter);
  const proof = await usableProof(pool, waiter, d.customerRef ?? undefined, new Date());
  if (!proof) return {};
  await removeProofWaiter(pool, waiter);
  return { proofId: proof.id };
}

/**
 * The custody system confirms a required return with its transaction: RETURN_REQUIRED becomes RETURNED, audited
 * (`deposit.returned`) in the same transaction. The hash is checked for the deposit's chain (400 naming `txHash`); any
 * other status is a 409 naming it.
 */
export async function confirmReturn(
  pool: Pool,
  input: { id: string; txHash: string },
  principal: Principal,
): Promise<Deposit> {
  const d = await depositOrNotFound(pool, input.id);
  const chain = d.chain in TX_HASH ? (d.chain as Chain) : undefined;
  if (chain) assertTxHash('txHash', chain, input.txHash);
  const txHash = input.txHash.toLowerCase();
  return withTransaction(pool, async (tx) => {
    const { before, after } = await markReturned(tx, input.id, txHash);
    if (!after)
      throw new ConflictError(
        `the deposit is ${before?.status ?? d.status}: only a deposit in RETURN_REQUIRED can be confirmed returned`,
        { field: 'id', status: before?.status ?? d.status },
      );
    await appendAuditEntry(tx, {
      actor: auditActor(principal),
      action: 'deposit.returned',
      subject: input.id,
      details: { from: 'RETURN_REQUIRED', to: 'RETURNED', txHash, principal },
    });
    return after;
  });
}

/**
 * A return not confirmed by its deadline (10 business days): the deposit gets `escalatedAt` and a
 * `deposit.return-escalated` entry. Nothing when it was confirmed meanwhile or escalated already.
 */
export async function escalateReturn(
  pool: Pool,
  input: { id: string; deadline: string },
  idempotencyKey?: string,
): Promise<{ escalated: boolean }> {
  return withTransaction(pool, async (tx) => {
    const after = await markEscalated(tx, input.id);
    if (!after) return { escalated: false };
    await appendAuditEntry(
      tx,
      {
        actor: 'system:deposit',
        action: 'deposit.return-escalated',
        subject: input.id,
        details: { status: after.status, deadline: input.deadline, escalatedAt: after.escalatedAt },
      },
      { idempotencyKey },
    );
    return { escalated: true };
  });
}
