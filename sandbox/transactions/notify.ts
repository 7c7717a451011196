/**
 * `tx/notify`: the beneficiary VASP reports a deposit it saw on chain `{txHash, transactionAmount, transactionAsset,
 * destination, beneficiaryVASPdid, origin?, customerRef?, transactionAssetDecimals?, network?}` and the network answers
 * the message that deposit belongs to, or stores a new one with status INCOMPLETE holding the blockchain data only.
 *
 * Matching, in order (all within the beneficiary VASP the caller acts for):
 * 1. a message with the same txHash and destination, and the same origin when both sides give one (the network's key:
 *    txHash + origin + destination + beneficiary VASP);
 * 2. a message to the same destination, for the same asset and amount, created at most MATCH_WINDOW_HOURS before and
 *    whose txHash is still empty (originators often add it late): it gets the reported txHash (and origin);
 * 3. otherwise a new INCOMPLETE message. Its originator VASP is the one a simulated originator claims the destination
 *    for (onDeposit), else the owner of the origin address in the address book, else unknown (no originatorVASPdid).
 *    The network asks that originator for the data: it is a party of the message and hears of it by webhook.
 * Repeating a report answers the same message (step 1 finds it).
 *
 * One deposit never yields two messages:
 * - The originator's later tx/create that matches an INCOMPLETE message (same beneficiary and destination, and the same
 *   txHash; or, without a txHash, the same asset and amount within the window and no other originator named) completes
 *   that message: it keeps its id and history and takes the originator's data, then moves as a create does (NEW, SENT,
 *   ACK). The originator gets that id back.
 * - The originator's tx/update that adds a txHash to its own message matching an INCOMPLETE one supersedes the INCOMPLETE
 *   one: it becomes CANCELLED by a `supersede` action naming the message that stands; a later report finds that one.
 * Every change is recorded in the history and reported to the listeners (webhooks, simulated counterparties).
 */
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { findOwners, pickOwner } from '../address-book';
import type { Access } from '../auth/access';
import { notAdmin, notFound } from '../errors';
import { OPERATOR_DID } from '../operator';
import { assetDecimals } from './assets';
import type { TransactionCore } from './core';
import { customerDid } from './customers';
import { record } from './history';
import { AMOUNT, asset, did, lookupAsset, text, validationError, type Transaction } from './model';
import { findByAmount, findByHash, lockDestinations, saveCompleted } from './store/notify';
import { insertTransaction, type TransactionRow } from './store';

/** How far back a message without a txHash (or an INCOMPLETE report) still matches by destination, asset and amount. */
export const MATCH_WINDOW_HOURS = 24;

export interface NotifyRequest {
  txHash: string;
  assetText: string;
  transactionAmount: string;
  transactionAssetDecimals?: number;
  beneficiaryVASPdid: string;
  destination: string;
  origin: string;
  customerRef?: string;
  network?: string;
}

const EVM_HASH = { pattern: /^0x[0-9a-fA-F]{64}$/, rule: '0x and 64 hex digits (an EVM transaction hash)' };
const HEX_HASH = { pattern: /^[0-9a-fA-F]{64}$/, rule: '64 hex digits without 0x (a transaction id of its chain)' };
const SOLANA_HASH = { pattern: /^[1-9A-HJ-NP-Za-km-z]{86,88}$/, rule: 'a base58 signature of 86 to 88 characters' };
/** Assets whose chain has no single form (USDC, USDT, unknown ones): any of the forms chains use. */
const ANY_HASH = {
  pattern: /^(?:(?:0x)?[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{43,88}|[A-Z2-7]{52})$/,
  rule: '64 hex digits (with or without 0x), a base58 signature or a base32 id',
};
const HASH_BY_SYMBOL: Readonly<Record<string, typeof EVM_HASH>> = {
  ...Object.fromEntries(
    ['ETH', 'ETC', 'MATIC', 'POL', 'BNB', 'AVAX', 'DAI', 'LINK', 'UNI', 'ARB', 'OP', 'DOT'].map((s) => [s, EVM_HASH]),
  ),
  ...Object.fromEntries(
    ['BTC', 'XBT', 'BCH', 'LTC', 'DOGE', 'DASH', 'ZEC', 'XRP', 'ADA', 'TRX', 'ATOM', 'XLM', 'EOS'].map((s) => [
      s,
      HEX_HASH,
    ]),
  ),
  SOL: SOLANA_HASH,
};

/**
 * The shape a txHash must have for the asset's chain. The network's spec types it as a string only; the sandbox holds
 * reports to the form their chain gives hashes, so a caller's mix-up (an address, a truncated hash) fails here.
 */
export function txHashRule(assetText: string): { pattern: RegExp; rule: string } {
  const symbol = assetText.trim().toUpperCase();
  if (Object.hasOwn(HASH_BY_SYMBOL, symbol)) return HASH_BY_SYMBOL[symbol]!;
  const id = assetText.trim().toLowerCase();
  if (id.startsWith('eip155:')) return EVM_HASH;
  if (id.startsWith('bip122:')) return HEX_HASH;
  if (id.startsWith('solana:')) return SOLANA_HASH;
  return ANY_HASH;
}

const REQUIRED = ['txHash', 'transactionAmount', 'transactionAsset', 'destination', 'beneficiaryVASPdid'] as const;

export function parseNotifyRequest(body: unknown): NotifyRequest {
  const b = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const missing = REQUIRED.filter((f) => b[f] === undefined || b[f] === null || b[f] === '');
  if (missing.length) throw validationError(`List of missing fields: ${missing.join(', ')}`);
  const a = asset(b.transactionAsset);
  const amount = text(b, 'transactionAmount', {
    pattern: AMOUNT,
    rule: 'must be a whole number of base units greater than 0, as a string (^0*[1-9][0-9]*$)',
    max: 80,
  })!;
  const hashRule = txHashRule(a.text);
  const txHash = text(b, 'txHash', { pattern: hashRule.pattern, rule: `must be ${hashRule.rule} for ${a.text}` })!;
  const decimals = b.transactionAssetDecimals;
  if (
    decimals !== undefined &&
    (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 255)
  ) {
    throw validationError('transactionAssetDecimals: must be a whole number from 0 to 255');
  }
  return {
    txHash,
    assetText: a.text,
    transactionAmount: amount,
    transactionAssetDecimals: decimals as number | undefined,
    beneficiaryVASPdid: did(b, 'beneficiaryVASPdid')!,
    destination: text(b, 'destination')!,
    origin: text(b, 'origin') ?? '',
    customerRef: text(b, 'customerRef'),
    network: text(b, 'network'),
  };
}

/** Who a deposit to `destination` comes from, when some part of the network knows (a simulated originator). */
export type DepositOriginatorResolver = (
  client: PoolClient,
  deposit: { destination: string; beneficiary: string },
) => Promise<string | undefined>;

/** Reports a deposit; answers the id of the message it belongs to (matched, or a new INCOMPLETE one). */
export async function notifyDeposit(core: TransactionCore, access: Access, body: unknown): Promise<string> {
  const req = parseNotifyRequest(body);
  const beneficiary = req.beneficiaryVASPdid;
  if (!access.exists(beneficiary)) throw notFound(`beneficiaryVASPdid: VASP ${beneficiary} not found`);
  if (!access.vasps().includes(beneficiary)) {
    throw notAdmin(
      `beneficiaryVASPdid: user ${access.userDid} may not report deposits for VASP ${beneficiary}; only the beneficiary VASP notifies`,
    );
  }
  const originOwner = req.origin
    ? pickOwner(await findOwners(core.pool, lookupAsset(req.assetText), req.origin))?.vaspDid
    : undefined;
  const beneficiaryName = await core.vaspName(beneficiary);

  return core.inTransaction(async (client) => {
    await lockDestinations(client, [req.destination]);
    const byHash = await findByHash(client, {
      beneficiary,
      txHash: req.txHash,
      destination: req.destination,
      origin: req.origin,
    });
    if (byHash) return byHash.body.id;

    const late = await findByAmount(client, {
      kind: 'without-hash',
      beneficiary,
      destination: req.destination,
      asset: req.assetText,
      amount: req.transactionAmount,
      origin: req.origin,
      windowHours: MATCH_WINDOW_HOURS,
    });
    if (late) {
      const tx = late.body;
      const previousStatus = tx.status;
      tx.transactionBlockchainInfo.txHash = req.txHash;
      if (!tx.transactionBlockchainInfo.origin && req.origin) tx.transactionBlockchainInfo.origin = req.origin;
      record(tx, access.userDid, 'notify', 'txHash reported by the beneficiary VASP', tx.status);
      await core.save(client, tx, late.pii_mode);
      await core.emit(client, { tx, previousStatus, change: 'notify' });
      return tx.id;
    }

    let originator: string | undefined;
    for (const resolve of core.depositOriginators) {
      originator = await resolve(client, { destination: req.destination, beneficiary });
      if (originator) break;
    }
    originator ??= originOwner;
    const now = new Date().toISOString();
    const tx: Transaction = {
      id: randomUUID(),
      status: 'INCOMPLETE',
      // What kind of transfer it is depends on the originator's side, unknown until it completes the message.
      transactionType: 'UNKNOWN',
      transactionAsset: req.assetText,
      transactionAmount: req.transactionAmount,
      transactionAssetDecimals: req.transactionAssetDecimals ?? assetDecimals(req.assetText),
      chargedQuantity: 1,
      amountInLocalCurrency: null,
      beneficiaryDid: customerDid(undefined, beneficiary, req.customerRef),
      ...(req.customerRef !== undefined && { beneficiaryRef: req.customerRef }),
      ...(originator && { originatorVASPdid: originator }),
      beneficiaryVASPdid: beneficiary,
      ...(beneficiaryName !== undefined && { beneficiaryVASPname: beneficiaryName }),
      isTest: true,
      transactionBlockchainInfo: { txHash: req.txHash, origin: req.origin, destination: req.destination },
      actions: [],
      createdAt: now,
      updatedAt: now,
    };
    record(tx, access.userDid, 'notify', 'deposit reported by the beneficiary VASP; no message matched', 'INCOMPLETE');
    await insertTransaction(client, tx, {
      transactionRef: undefined,
      originator,
      beneficiary,
      asset: req.assetText,
      amount: req.transactionAmount,
      piiMode: 'none',
      createdAt: now,
    });
    await core.emit(client, { tx, previousStatus: null, change: 'notify' });
    return tx.id;
  });
}

/**
 * For tx/create, inside its database transaction: the INCOMPLETE message the new one completes, locked, or undefined.
 * Takes the destination lock first (see lockDestinations).
 */
export async function incompleteFor(client: PoolClient, tx: Transaction): Promise<TransactionRow | undefined> {
  const beneficiary = tx.beneficiaryVASPdid;
  if (!beneficiary) return undefined;
  const info = tx.transactionBlockchainInfo;
  await lockDestinations(client, [info.destination]);
  if (info.txHash) {
    return findByHash(client, {
      beneficiary,
      txHash: info.txHash,
      destination: info.destination,
      origin: info.origin,
      status: 'INCOMPLETE',
    });
  }
  return findByAmount(client, {
    kind: 'incomplete',
    beneficiary,
    destination: info.destination,
    asset: tx.transactionAsset,
    amount: tx.transactionAmount,
    origin: info.origin,
    windowHours: MATCH_WINDOW_HOURS,
    originator: tx.originatorVASPdid,
  });
}

/**
 * The INCOMPLETE message completed by the originator's create `created` (built and classified as a new message would
 * be): the report's id, creation time, history and blockchain data stay, everything else is the originator's, and the
 * create's steps (create, the status jump) are appended to the history. Stored in place of a new row.
 */
export async function completeIncomplete(
  client: PoolClient,
  incomplete: Transaction,
  created: Transaction,
  row: { transactionRef: string | undefined; piiMode: TransactionRow['pii_mode'] },
): Promise<Transaction> {
  const reported = incomplete.transactionBlockchainInfo;
  const given = created.transactionBlockchainInfo;
  const tx: Transaction = {
    ...created,
    id: incomplete.id,
    createdAt: incomplete.createdAt,
    actions: incomplete.actions,
    beneficiaryDid: created.beneficiaryDid,
    transactionBlockchainInfo: {
      txHash: given.txHash || reported.txHash,
      origin: given.origin || reported.origin,
      destination: reported.destination,
    },
  };
  // The beneficiary's own customer reference from its report, unless the originator names one.
  if (tx.beneficiaryRef === undefined && incomplete.beneficiaryRef !== undefined) {
    tx.beneficiaryRef = incomplete.beneficiaryRef;
    tx.beneficiaryDid = incomplete.beneficiaryDid;
  }
  for (const step of created.actions) record(tx, step.issuerDID, step.action, step.actionData, step.status);
  await saveCompleted(client, tx, row);
  return tx;
}

/**
 * For tx/update, inside its database transaction, after the originator gave `tx` a txHash: an INCOMPLETE report of the
 * same deposit is superseded (CANCELLED, naming `tx`), so the deposit has one message. The caller took the destination
 * lock before locking `tx`.
 */
export async function supersedeIncomplete(core: TransactionCore, client: PoolClient, tx: Transaction): Promise<void> {
  const info = tx.transactionBlockchainInfo;
  if (!tx.beneficiaryVASPdid || !info.txHash || tx.status === 'INCOMPLETE') return;
  const row = await findByHash(client, {
    beneficiary: tx.beneficiaryVASPdid,
    txHash: info.txHash,
    destination: info.destination,
    origin: info.origin,
    status: 'INCOMPLETE',
    excludeId: tx.id,
  });
  if (!row) return;
  const incomplete = row.body;
  record(
    incomplete,
    OPERATOR_DID,
    'supersede',
    `superseded by transaction ${tx.id}, the originator's message for this txHash`,
    'CANCELLED',
  );
  await core.save(client, incomplete, row.pii_mode);
  await core.emit(client, { tx: incomplete, previousStatus: 'INCOMPLETE', change: 'supersede' });
}
