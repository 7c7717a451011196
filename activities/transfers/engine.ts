/**
 * The steps of an outgoing transfer, as plain async functions over a TransferContext: the activities wrap them for
 * the workflow, the agent-compatible routes call the read/update ones directly, and the benchmark runs the whole flow
 * without Temporal to measure what orchestration costs. Private keys are loaded here, by VASP DID, from the keystore:
 * they never travel through workflow history.
 */
import type { Pool } from 'pg';
import { remoteDidKey, piiRecipients, encryptPiiValue, type LocalDidKey } from '../../lib/crypto';
import { ForbiddenError, NotFoundError, ValidationError } from '../../lib/errors';
import { decryptIvms101, flattenIvms101, unflattenIvms101, type FlatEntry } from '../../lib/ivms101';
import type { Logger } from '../../lib/logger';
import { BoundedCache } from '../../lib/crypto/bounded-cache';
import type { GroupConfig } from '../../lib/config';
import type { Keystore } from '../../db/keystore';
import type { NetworkClient } from '../network/network-client';
import { txInfo } from '../network/transactions';
import type { TransferConfig } from './config';
import { assetLabel, type OutgoingRequest, type OutgoingTransferBody } from './request';
import type { StoredPii, TransferStore } from './store';

export interface TransferContext {
  pool: Pool;
  network: NetworkClient;
  keystore: Keystore;
  store: TransferStore;
  config: TransferConfig;
  group: GroupConfig;
  logger: Logger;
  /** Directory answers reused for `config.directoryCacheMs`. */
  cache: BoundedCache<string, { at: number; value: string | undefined }>;
}

/** The network's Transaction object (network-api-facts.md §1); only the fields this system reads are typed. */
export interface NetworkTransaction {
  id: string;
  status?: string;
  transactionRef?: string;
  transactionType?: string;
  originatorVASPdid?: string;
  beneficiaryVASPdid?: string;
  pii?: Record<string, unknown>;
  ivms101?: Record<string, unknown>;
  [field: string]: unknown;
}

/**
 * How the personal data is protected:
 * - `end-to-end`: originator and beneficiary keys;
 * - `hybrid`: end-to-end plus the originator's service-managed (escrow) key, for the network's screening;
 * - `escrow`: the beneficiary has no key; encrypted to its escrow key (pseudo end-to-end);
 * - `originator-only`: the beneficiary has no key; only the originator can read (the agent's rule);
 * - `hosted`: the originator's keys are not held here; the data goes to the network unencrypted, as the agent does.
 */
export type PiiMode = 'end-to-end' | 'hybrid' | 'escrow' | 'originator-only' | 'hosted';

export interface TransferPlan {
  originatorVaspDid: string;
  beneficiaryVaspDid?: string;
  /** How the beneficiary VASP was found: given by the caller, by the destination address's owner, or not at all. */
  beneficiaryResolvedBy: 'request' | 'address' | 'none';
  mode: PiiMode;
  /** did:keys the data is encrypted to besides the originator's own (in order). */
  recipients: string[];
}

/** Final statuses of the network's transaction: nothing moves it after these. */
export const FINAL_NETWORK_STATUSES = new Set(['ACCEPTED', 'DECLINED', 'REJECTED', 'CANCELLED', 'SAVED']);

const encodeDid = (did: string) => encodeURIComponent(did);

/** Refuses what can never become a transfer: the gateway as originator (interface.md, Errors), a VASP outside the group. */
export function assertOriginatorAllowed(group: GroupConfig, originatorVaspDid: string): void {
  if (group.gatewayDid && originatorVaspDid === group.gatewayDid) {
    throw new ValidationError(
      'originatorVASPdid',
      'is the gateway VASP; outgoing transfers from a gateway are not allowed, the originator must be one of its subsidiaries',
    );
  }
  if (group.subsidiaryDids.length > 0 && !group.subsidiaryDids.includes(originatorVaspDid)) {
    throw new ValidationError('originatorVASPdid', 'is not a subsidiary of this group (SUBSIDIARY_VASP_DIDS)');
  }
}

async function cached(ctx: TransferContext, key: string, load: () => Promise<string | undefined>): Promise<string | undefined> {
  const now = Date.now();
  const hit = ctx.cache.get(key);
  if (hit && now - hit.at < ctx.config.directoryCacheMs) return hit.value;
  const value = await load();
  if (ctx.config.directoryCacheMs > 0) ctx.cache.set(key, { at: now, value });
  return value;
}

/**
 * The VASP's published `pii_didkey`, or undefined when it has none (or publishes something that is not an Ed25519
 * did:key, which no one could encrypt to). An unknown VASP is a ValidationError naming `field`.
 */
export async function publishedKey(ctx: TransferContext, vaspDid: string, field = 'beneficiaryVASPdid'): Promise<string | undefined> {
  return cached(ctx, `pii_didkey|${vaspDid}`, async () => {
    let profile: Record<string, unknown>;
    try {
      profile = await ctx.network.call(`GET /tf/simple/vasps/${vaspDid}`, () =>
        ctx.network.api.get(`tf/simple/vasps/${encodeDid(vaspDid)}`, { searchParams: { fields: 'pii_didkey' } }).json<Record<string, unknown>>(),
      );
    } catch (e) {
      if (e instanceof NotFoundError) throw new ValidationError(field, 'is not a VASP in the network directory');
      throw e;
    }
    const key = profile.pii_didkey;
    if (typeof key !== 'string' || key === '') return undefined;
    try {
      remoteDidKey(key, field);
      return key;
    } catch {
      ctx.logger.warn({ vaspDid }, 'published pii_didkey is not a usable Ed25519 did:key; treating the VASP as keyless');
      return undefined;
    }
  });
}

/** The VASP's escrow did:key at the personal-data service (`GET {pii}/get-escrow-didkey?vaspDID=`). */
export async function escrowKey(ctx: TransferContext, vaspDid: string): Promise<string> {
  const did = await cached(ctx, `escrow|${vaspDid}`, async () => {
    const body = await ctx.network.call('GET {pii}/get-escrow-didkey', () =>
      ctx.network.pii.get('get-escrow-didkey', { searchParams: { vaspDID: vaspDid } }).json<{ did?: unknown }>(),
    );
    return typeof body.did === 'string' ? body.did : undefined;
  });
  if (!did) throw new NotFoundError(`the personal-data service has no escrow key for ${vaspDid}`);
  remoteDidKey(did, 'escrow did');
  return did;
}

/** The destination address's owner (`GET /v1/addresses/address-ownerships/:address`), if the network knows one. */
async function ownerOfAddress(ctx: TransferContext, body: OutgoingTransferBody): Promise<string | undefined> {
  const address = body.transactionBlockchainInfo.destination;
  try {
    const owner = await ctx.network.call('GET /v1/addresses/address-ownerships', () =>
      ctx.network.api
        .get(`v1/addresses/address-ownerships/${encodeURIComponent(address)}`, {
          searchParams: { vasp_did: body.originatorVASPdid, asset: assetLabel(body.transactionAsset) },
        })
        .json<{ owner_vasp_did?: unknown }>(),
    );
    return typeof owner.owner_vasp_did === 'string' && owner.owner_vasp_did ? owner.owner_vasp_did : undefined;
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

/**
 * The VASP's active key for encrypting, reused for `directoryCacheMs` (a rotation is picked up within that time; the
 * previous key still decrypts, so data written meanwhile stays readable). Loading it unseals the key from the keystore.
 */
const activeKeys = new BoundedCache<string, { at: number; key: LocalDidKey | undefined }>(256);
export async function activeKey(ctx: TransferContext, vaspDid: string): Promise<LocalDidKey | undefined> {
  const now = Date.now();
  const hit = activeKeys.get(`${ctx.store.toJSON().transferStore}|${vaspDid}`);
  if (hit && hit.key && now - hit.at < ctx.config.directoryCacheMs) return hit.key;
  const key = await ctx.keystore.loadActiveKey(vaspDid);
  if (ctx.config.directoryCacheMs > 0) activeKeys.set(`${ctx.store.toJSON().transferStore}|${vaspDid}`, { at: now, key });
  return key;
}

/** Decides who can read the data. Reads only public information and whether the originator's key is held here. */
export async function planTransfer(ctx: TransferContext, request: OutgoingRequest): Promise<TransferPlan> {
  const { body } = request;
  assertOriginatorAllowed(ctx.group, body.originatorVASPdid);
  const originatorKey = await activeKey(ctx, body.originatorVASPdid);
  let beneficiaryVaspDid = body.beneficiaryVASPdid;
  let beneficiaryResolvedBy: TransferPlan['beneficiaryResolvedBy'] = beneficiaryVaspDid ? 'request' : 'none';
  if (!beneficiaryVaspDid) {
    beneficiaryVaspDid = await ownerOfAddress(ctx, body);
    if (beneficiaryVaspDid) beneficiaryResolvedBy = 'address';
  }
  const base = { originatorVaspDid: body.originatorVASPdid, beneficiaryVaspDid, beneficiaryResolvedBy };
  // Check the beneficiary exists even when nothing is encrypted for it: a transfer to an unknown VASP is refused.
  const beneficiaryKey = beneficiaryVaspDid ? await publishedKey(ctx, beneficiaryVaspDid) : undefined;
  if (!originatorKey) {
    if (request.source === 'api') {
      throw new ValidationError('originatorVASPdid', 'has no active key in the keystore, so its data cannot be encrypted end to end');
    }
    return { ...base, mode: 'hosted', recipients: [] };
  }
  if (request.hybrid) {
    const escrow = await escrowKey(ctx, body.originatorVASPdid);
    return { ...base, mode: 'hybrid', recipients: beneficiaryKey ? [escrow, beneficiaryKey] : [escrow] };
  }
  if (beneficiaryKey) return { ...base, mode: 'end-to-end', recipients: [beneficiaryKey] };
  if (ctx.config.noKeyMode === 'escrow' && beneficiaryVaspDid) {
    // The beneficiary's escrow key when the service shows it to us; it may show a VASP's escrow key only to that
    // VASP's users, and then the originator's escrow key serves the same purpose: the service can decrypt for both
    // parties' web UI (interface.md, "What the service does" 5).
    let escrow: string;
    try {
      escrow = await escrowKey(ctx, beneficiaryVaspDid);
    } catch (e) {
      if (!(e instanceof ForbiddenError) && !(e instanceof NotFoundError)) throw e;
      escrow = await escrowKey(ctx, body.originatorVASPdid);
    }
    return { ...base, mode: 'escrow', recipients: [escrow] };
  }
  return { ...base, mode: 'originator-only', recipients: [] };
}

/** Encrypts every value of `record` ({originator, beneficiary}) from `sender` to the recipients, flattened. */
export function encryptRecord(record: Record<string, unknown>, sender: LocalDidKey, recipients: readonly string[]): FlatEntry[] {
  const keys = piiRecipients(sender, recipients);
  const now = Date.now();
  return flattenIvms101(record).map(({ key, value }) => ({ key, value: encryptPiiValue(value, sender, keys, now) }));
}

/** `POST {pii}/put`: stores the encrypted values, answers their CIDs, rebuilt into the IVMS101-shaped `pii` tree. */
export async function putPii(ctx: TransferContext, fromDid: string, toDid: string, entries: FlatEntry[]): Promise<Record<string, unknown>> {
  const stored = await ctx.network.call('POST {pii}/put', () =>
    ctx.network.pii.post('put', { json: { fromDID: fromDid, toDID: toDid, data: entries } }).json<unknown>(),
  );
  const list = Array.isArray(stored) ? stored : (stored as { data?: unknown })?.data;
  if (!Array.isArray(list) || list.length !== entries.length) {
    throw new ValidationError('pii', `the personal-data service answered ${Array.isArray(list) ? list.length : 'no'} CIDs for ${entries.length} values`);
  }
  return unflattenIvms101(list.map((e: { key: string; value: string }) => ({ key: e.key, value: e.value })));
}

/**
 * Encrypts the request's personal data for the plan and stores it at the personal-data service, once: a retry finds
 * the CIDs stored by the first attempt and reuses them.
 */
export async function storePii(ctx: TransferContext, id: string, request: OutgoingRequest, plan: TransferPlan): Promise<StoredPii | undefined> {
  if (plan.mode === 'hosted') return undefined;
  const row = await ctx.store.get(id);
  if (row.pii) return row.pii;
  const sender = await activeKey(ctx, plan.originatorVaspDid);
  if (!sender) throw new ValidationError('originatorVASPdid', 'has no active key in the keystore');
  const entries = encryptRecord({ originator: request.body.originator, beneficiary: request.body.beneficiary }, sender, plan.recipients);
  const tree = await putPii(ctx, plan.originatorVaspDid, plan.beneficiaryVaspDid ?? plan.originatorVaspDid, entries);
  return ctx.store.setPii(id, { tree, mode: plan.mode, recipients: [sender.did, ...plan.recipients] });
}

/** The Transaction without the personal data the network may echo (plain IVMS101 in hosted mode). */
export function withoutPersonalData(tx: NetworkTransaction): NetworkTransaction {
  const { ivms101: _i, originator: _o, beneficiary: _b, ivms101Encrypted: _e, ...rest } = tx;
  return rest as NetworkTransaction;
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
): Promise<NetworkTransaction> {
  const { originator, beneficiary, transactionRef: _ref, ...rest } = request.body;
  const json: Record<string, unknown> = { ...rest, transactionRef: id };
  if (plan.beneficiaryVaspDid) json.beneficiaryVASPdid = plan.beneficiaryVaspDid;
  if (plan.mode === 'hosted') Object.assign(json, { originator, beneficiary });
  else json.pii = pii!.tree;
  const tx = await ctx.network.call('POST /tx/create', () => ctx.network.api.post('tx/create', { json }).json<NetworkTransaction>());
  await ctx.store.setTransactionId(id, tx.id);
  return withoutPersonalData(tx);
}

/** `GET /tx/info?id=` as the network answers it. */
export async function transactionInfo(ctx: TransferContext, transactionId: string): Promise<NetworkTransaction> {
  return txInfo<NetworkTransaction>(ctx.network, transactionId);
}

/**
 * Decrypts the transaction's `pii` with the keys of `vaspDid` (or, without it, of whichever party's keys are held
 * here) and puts the record into `ivms101`. Without usable keys the transaction is returned as it is, as the agent does
 * for a VASP not in KEYS.
 */
export async function decryptTransaction(ctx: TransferContext, tx: NetworkTransaction, vaspDid?: string): Promise<NetworkTransaction> {
  if (!tx.pii || typeof tx.pii !== 'object') return tx;
  const candidates = vaspDid ? [vaspDid] : [tx.originatorVASPdid, tx.beneficiaryVASPdid].filter((d): d is string => typeof d === 'string');
  for (const did of candidates) {
    const keyring = await ctx.keystore.loadKeyring(did);
    if (!keyring) continue;
    const refs = flattenIvms101(tx.pii);
    if (refs.length === 0) return tx;
    const got = await ctx.network.call('POST {pii}/get', () =>
      ctx.network.pii.post('get', { json: refs.map((r) => r.value) }).json<{ cid: string; data: string | { key: string; value: string } }[]>(),
    );
    const entries: FlatEntry[] = (Array.isArray(got) ? got : []).map((item) => {
      const data = typeof item.data === 'string' ? (JSON.parse(item.data) as { key: string; value: string }) : item.data;
      return { key: data.key, value: data.value };
    });
    const { record } = decryptIvms101(entries, keyring);
    return { ...tx, ivms101: { ...(tx.ivms101 ?? {}), ...record } };
  }
  return tx;
}

/** The whole flow without Temporal (the benchmark's baseline): plan, encrypt and store, create. */
export async function runTransferDirect(ctx: TransferContext, id: string, request: OutgoingRequest): Promise<NetworkTransaction> {
  await ctx.store.put(id, request);
  const plan = await planTransfer(ctx, request);
  const pii = await storePii(ctx, id, request, plan);
  return createTransaction(ctx, id, request, plan, pii);
}
