/**
 * The network's side of transactions: create (with idempotency on transactionRef, beneficiary resolution by address
 * and the status jump), info, update, list, and the actions of the state machine (states.ts). Every change is saved
 * in one database transaction together with whatever the registered listeners add (the webhook outbox, the simulated
 * counterparties' tasks), so a change is never reported without being stored, nor stored without being reported.
 */
import { withTransaction } from '../../db/transaction';
import { createHash, randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { unflattenIvms101 } from '../../lib/ivms101';
import type { Logger } from '../../lib/logger';
import { OPERATOR_DID } from '../operator';
import { NOT_YET_SENT_NETWORK_STATUSES } from '../../lib/network-status';
import type { Access } from '../auth/access';
import { badRequest, forbidden, NetworkError, notFound } from '../errors';
import { findOwners, pickOwner } from '../address-book';
import { getVaspSettings } from '../directory/profiles';
import { addOwners, getItems, looksLikeCid, piiLeaves, putEntries, type PiiEntry } from '../pii-store/store';
import {
  BENEFICIARY_UPDATABLE,
  isUuid,
  parseCreateRequest,
  parseUpdateRequest,
  requestHash,
  validationError,
  type Transaction,
  type TransactionAction,
} from './model';
import { isStatus, nextStatus, TRANSITIONS, type TransactionActionName, type TransactionStatus } from './states';


/** Who takes an action: the credential's user DID and the VASPs it may act for. */
export interface Actor {
  issuerDid: string;
  vasps: readonly string[];
}

export const actorOf = (access: Access): Actor => ({ issuerDid: access.userDid, vasps: access.vasps() });

export interface TransactionEvent {
  tx: Transaction;
  previousStatus: TransactionStatus | null;
  /** `create`, `update`, or the action's name. */
  change: string;
}

/** Runs inside the database transaction that stores the change. */
export type TransactionListener = (client: PoolClient, event: TransactionEvent) => Promise<void>;

/** The service-managed encryption of hosted mode (implemented in sandbox/pii-store/hosted.ts). */
export interface HostedCrypto {
  /** Encrypts every flattened value of `record` for the originator's and beneficiary's service-managed keys. */
  encrypt(originatorVasp: string, beneficiaryVasp: string | undefined, record: Record<string, unknown>): Promise<PiiEntry[]>;
  /** Decrypts entries with the service-managed keys (current and rotated) of the first of `vaspDids` that can. */
  decrypt(vaspDids: readonly string[], entries: readonly PiiEntry[]): Promise<Record<string, unknown>>;
}

export const invalidStatus = (status: string, action: string) =>
  badRequest('NotabeneTransactionInvalidStatusError', `${status} is not a valid status for action ${action}`);

const STALE_CLAIM_SECONDS = 60;

interface Row {
  body: Transaction;
  pii_mode: 'none' | 'client' | 'hosted';
}

export class TransactionService {
  private readonly listeners: TransactionListener[] = [];
  hosted?: HostedCrypto;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
  ) {}

  onChange(listener: TransactionListener): void {
    this.listeners.push(listener);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // create

  async create(access: Access, body: unknown): Promise<Transaction> {
    const req = parseCreateRequest(body);
    const originator = req.originatorVASPdid;
    if (!access.exists(originator)) throw notFound(`VASP ${originator} not found`);
    if (!access.vasps().includes(originator)) {
      throw forbidden(`User ${access.userDid} is not allowed to create transactions for VASP ${originator}`);
    }
    if (access.isGateway(originator)) {
      throw badRequest(
        'NotabeneTransactionError',
        `Outgoing transfers from a parent (gateway) VASP are not allowed: originatorVASPdid ${originator} has subsidiaries; ` +
          'send from one of its nested VASPs',
      );
    }

    if (req.transactionRef !== undefined) {
      const existing = await this.claimRef(originator, req.transactionRef, requestHash(req));
      if (existing) return existing;
    }
    try {
      return await this.doCreate(access, req);
    } catch (e) {
      if (req.transactionRef !== undefined) {
        await this.pool
          .query('delete from transaction_ref_claims where originator_vasp_did = $1 and transaction_ref = $2 and transaction_id is null', [
            originator, req.transactionRef,
          ])
          .catch((err: unknown) => this.logger.warn({ err }, 'could not release a transactionRef claim'));
      }
      throw e;
    }
  }

  /**
   * Claims `ref` for this request. Returns the finished transaction when an earlier request with the same body completed
   * it; throws 422 when the earlier request had another body (a reused reference, never a retry); throws 409 while
   * another request holds the claim; returns undefined when this request now owns it.
   */
  private async claimRef(originator: string, ref: string, hash: string): Promise<Transaction | undefined> {
    const claimed = await this.pool.query(
      `insert into transaction_ref_claims (originator_vasp_did, transaction_ref, request_hash) values ($1, $2, $4)
       on conflict (originator_vasp_did, transaction_ref) do update set claimed_at = now(), request_hash = excluded.request_hash
         where transaction_ref_claims.transaction_id is null
           and transaction_ref_claims.claimed_at < now() - make_interval(secs => $3)
       returning 1`,
      [originator, ref, STALE_CLAIM_SECONDS, hash],
    );
    if (claimed.rowCount) return undefined;
    const { rows } = await this.pool.query<{ transaction_id: string | null; request_hash: string | null }>(
      'select transaction_id, request_hash from transaction_ref_claims where originator_vasp_did = $1 and transaction_ref = $2',
      [originator, ref],
    );
    if (rows[0]?.request_hash && rows[0].request_hash !== hash) {
      throw new NetworkError(
        422,
        'NotabeneTransactionValidationError',
        `transactionRef: ${ref} was already used for a transaction with different fields; a retry must repeat the same request, a new transaction needs a new transactionRef`,
      );
    }
    const id = rows[0]?.transaction_id;
    if (id) {
      const row = await this.load(this.pool, id);
      if (row) return row.body;
    }
    throw new NetworkError(409, 'ConflictError', `transactionRef ${ref} is still being processed; retry shortly to get the transaction`);
  }

  private async doCreate(access: Access, req: ReturnType<typeof parseCreateRequest>): Promise<Transaction> {
    const originator = req.originatorVASPdid;
    const destination = req.blockchain.destination;
    const owners = await findOwners(this.pool, req.assetSymbol, destination);
    let beneficiary = req.beneficiaryVASPdid;
    let beneficiaryName = req.beneficiaryVASPname;
    if (!beneficiary) {
      const owner = pickOwner(owners);
      if (owner) {
        beneficiary = owner.vaspDid;
        beneficiaryName ??= owner.vaspName;
      }
    }
    const known = beneficiary ? await this.vaspName(beneficiary) : undefined;
    if (known !== undefined) beneficiaryName ??= known;

    // Personal data: CIDs (or inline encrypted strings) from the caller, or plain IVMS101 the service encrypts (hosted).
    let pii: Record<string, unknown> | undefined;
    let piiMode: Row['pii_mode'] = 'none';
    if (req.pii) {
      await this.checkCids(access.vasps(), req.pii);
      pii = req.pii;
      piiMode = 'client';
    } else if (req.originator || req.beneficiary) {
      pii = await this.hostedTree(this.pool, originator, beneficiary, { originator: req.originator, beneficiary: req.beneficiary });
      piiMode = 'hosted';
    }

    const now = new Date().toISOString();
    const tx: Transaction = {
      id: randomUUID(),
      status: 'NEW',
      transactionType: 'TRAVELRULE',
      ...(req.transactionRef !== undefined && { transactionRef: req.transactionRef }),
      transactionAsset: req.transactionAsset,
      transactionAmount: req.transactionAmount,
      ...(req.transactionAssetDecimals !== undefined && { transactionAssetDecimals: req.transactionAssetDecimals }),
      chargedQuantity: 1,
      amountInLocalCurrency: null,
      originatorDid: req.originatorDid ?? '',
      beneficiaryDid: req.beneficiaryDid ?? '',
      ...(req.originatorRef !== undefined && { originatorRef: req.originatorRef }),
      ...(req.beneficiaryRef !== undefined && { beneficiaryRef: req.beneficiaryRef }),
      originatorVASPdid: originator,
      ...(beneficiary && { beneficiaryVASPdid: beneficiary }),
      ...(beneficiaryName !== undefined && { beneficiaryVASPname: beneficiaryName }),
      isTest: true,
      transactionBlockchainInfo: req.blockchain,
      ...(req.protocol !== undefined && { protocol: req.protocol }),
      ...(req.notificationEmail !== undefined && { notificationEmail: req.notificationEmail }),
      ...(req.originatorProof !== undefined && { originatorProof: req.originatorProof }),
      ...(req.beneficiaryProof !== undefined && { beneficiaryProof: req.beneficiaryProof }),
      ...(req.blockchainTransactionTimestamp !== undefined && { blockchainTransactionTimestamp: req.blockchainTransactionTimestamp }),
      ...(pii && { pii }),
      ...(req.encrypted !== undefined && { ivms101Encrypted: req.encrypted }),
      actions: [],
      createdAt: now,
      updatedAt: now,
    };
    record(tx, access.userDid, 'create', '', 'NEW');
    // The status jump: the call returns the furthest status it could reach (network-api-facts.md §1).
    if (known !== undefined) {
      record(tx, access.userDid, 'approve', 'automatic: the beneficiary VASP is in the directory', 'SENT');
      // Automatic confirmation follows the `autoconfirm` setting, which a gateway holds for its subsidiaries.
      if (owners.some((o) => o.vaspDid === beneficiary) && (await this.autoconfirm(beneficiary!))) {
        record(tx, OPERATOR_DID, 'confirm', 'automatic: the destination address is in the beneficiary VASP address book', 'ACK');
      }
    }

    return this.inTransaction(async (client) => {
      await client.query(
        `insert into transactions (id, transaction_ref, originator_vasp_did, beneficiary_vasp_did, status, transaction_asset,
           transaction_amount, pii_mode, body, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
        [tx.id, req.transactionRef ?? null, originator, beneficiary ?? null, tx.status, req.assetText, req.transactionAmount, piiMode, tx, now],
      );
      if (req.transactionRef !== undefined) {
        await client.query(
          'update transaction_ref_claims set transaction_id = $3 where originator_vasp_did = $1 and transaction_ref = $2',
          [originator, req.transactionRef, tx.id],
        );
      }
      if (pii && beneficiary) await addOwners(client, cidLeaves(pii), originator, beneficiary);
      await this.emit(client, { tx, previousStatus: null, change: 'create' });
      return tx;
    });
  }

  /** Every CID leaf of a caller's `pii` must be an item the caller may read (put first through /pii/put). */
  private async checkCids(readerVasps: readonly string[], pii: Record<string, unknown>): Promise<void> {
    const leaves = piiLeaves(pii, 'pii').filter((l) => looksLikeCid(l.value));
    if (leaves.length === 0) return;
    const found = new Set((await getItems(this.pool, leaves.map((l) => l.value), readerVasps)).map((i) => i.cid));
    const missing = leaves.find((l) => !found.has(l.value));
    if (missing) throw validationError(`${missing.key}: unknown content identifier (store it first with POST /pii/put)`);
  }

  /** Hosted mode: encrypt the plain record with the service-managed keys, store it, answer the CID tree. */
  private async hostedTree(
    db: Pool | PoolClient,
    originator: string,
    beneficiary: string | undefined,
    record: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    if (!this.hosted) throw badRequest('NotabeneTransactionError', 'Hosted encryption is not available in this sandbox');
    const plain = Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
    const entries = await this.hosted.encrypt(originator, beneficiary, plain);
    const stored = await putEntries(db, originator, beneficiary ?? originator, entries);
    return unflattenIvms101(stored);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // info, update, list

  async info(access: Access, id: unknown): Promise<Transaction> {
    if (id === undefined || id === '') throw validationError('List of missing fields: id');
    if (!isUuid(id)) throw validationError('id: must be a transaction id (UUID)');
    const row = await this.load(this.pool, id);
    if (!row) throw notFound(`Transaction ${id} not found`);
    const actor = actorOf(access);
    requireParty(actor, row.body);
    const tx = row.body;
    if (row.pii_mode === 'hosted' && tx.pii && this.hosted) {
      const parties = [tx.originatorVASPdid, tx.beneficiaryVASPdid].filter((d): d is string => !!d);
      // The reader's own key first; the service holds both owners' keys and may use the other one.
      try {
        tx.ivms101 = await this.decryptHosted([...parties.filter((d) => actor.vasps.includes(d)), ...parties], tx.pii);
      } catch (err) {
        // The transaction is still answered; its personal data is left out rather than failing the read.
        this.logger.warn({ err, transactionId: tx.id }, 'hosted personal data could not be decrypted');
      }
    }
    return tx;
  }

  /** The plain record of a hosted-mode transaction, decrypted with the service-managed keys of `vaspDids`. */
  async decryptHosted(vaspDids: readonly string[], pii: Record<string, unknown>): Promise<Record<string, unknown>> {
    const leaves = piiLeaves(pii).filter((l) => looksLikeCid(l.value));
    const items = await getItems(this.pool, leaves.map((l) => l.value), undefined);
    const byCid = new Map(items.map((i) => [i.cid, i.data]));
    const entries = leaves.flatMap((l) => {
      const data = byCid.get(l.value);
      if (!data) return [];
      const parsed = JSON.parse(data) as PiiEntry;
      return [{ key: l.key, value: parsed.value }];
    });
    return this.hosted!.decrypt(vaspDids, entries);
  }

  async update(access: Access, body: unknown): Promise<Transaction> {
    const req = parseUpdateRequest(body);
    const actor = actorOf(access);
    const vaspExists = async (did: string) => (await this.vaspName(did)) !== undefined;
    return this.inTransaction(async (client) => {
      const row = await this.load(client, req.id, true);
      if (!row) throw notFound(`Transaction ${req.id} not found`);
      const tx = row.body;
      requireParty(actor, tx);
      const isOriginator = actor.vasps.includes(tx.originatorVASPdid);
      if (!isOriginator) {
        const refused = Object.keys(req.fields).find((f) => !(BENEFICIARY_UPDATABLE as readonly string[]).includes(f));
        if (refused) throw forbidden(`Only the originator VASP may update ${refused}`);
      }
      const f = req.fields;
      const previousStatus = tx.status;
      if (f.originatorVASPdid !== undefined && f.originatorVASPdid !== tx.originatorVASPdid) {
        throw validationError('originatorVASPdid: cannot be changed; create a new transaction instead');
      }
      let piiMode = row.pii_mode;
      const changed = Object.keys(f).filter((k) => k !== 'originatorVASPdid');
      if (f.beneficiaryVASPdid !== undefined && f.beneficiaryVASPdid !== tx.beneficiaryVASPdid) {
        if (!NOT_YET_SENT_NETWORK_STATUSES.has(tx.status)) {
          throw invalidStatus(tx.status, 'update of beneficiaryVASPdid');
        }
        tx.beneficiaryVASPdid = f.beneficiaryVASPdid as string;
        const name = await this.vaspName(tx.beneficiaryVASPdid);
        if (name !== undefined && f.beneficiaryVASPname === undefined) tx.beneficiaryVASPname = name;
      }
      const info = tx.transactionBlockchainInfo;
      if (f.txHash !== undefined) info.txHash = f.txHash as string;
      if (f.origin !== undefined) info.origin = f.origin as string;
      if (f.destination !== undefined) {
        if (!NOT_YET_SENT_NETWORK_STATUSES.has(tx.status)) {
          if (f.destination !== info.destination) throw invalidStatus(tx.status, 'update of destination');
        }
        info.destination = f.destination as string;
      }
      const copy = ['beneficiaryVASPname', 'originatorDid', 'beneficiaryDid', 'originatorRef', 'beneficiaryRef', 'notificationEmail', 'protocol',
        'originatorProof', 'beneficiaryProof', 'blockchainTransactionTimestamp'] as const;
      for (const name of copy) if (f[name] !== undefined) (tx as unknown as Record<string, unknown>)[name] = f[name];
      if (f.encrypted !== undefined) tx.ivms101Encrypted = f.encrypted as string;
      if (f.pii !== undefined) {
        await this.checkCids(actor.vasps, f.pii as Record<string, unknown>);
        tx.pii = f.pii as Record<string, unknown>;
        piiMode = 'client';
      } else if (f.originator !== undefined || f.beneficiary !== undefined) {
        if (piiMode === 'client') {
          throw validationError('originator: this transaction carries end-to-end encrypted pii; update pii instead of plain IVMS101');
        }
        const tree = await this.hostedTree(client, tx.originatorVASPdid, tx.beneficiaryVASPdid, {
          originator: f.originator, beneficiary: f.beneficiary,
        });
        tx.pii = { ...(tx.pii ?? {}), ...tree };
        piiMode = 'hosted';
      }
      record(tx, actor.issuerDid, 'update', changed.join(','), tx.status);
      if (tx.status === 'WAITING_FOR_INFORMATION' && tx.beneficiaryVASPdid && (await vaspExists(tx.beneficiaryVASPdid))) {
        record(tx, OPERATOR_DID, 'approve', 'automatic: the beneficiary VASP is now known', 'SENT');
      }
      if (tx.pii && tx.beneficiaryVASPdid) await addOwners(client, cidLeaves(tx.pii), tx.originatorVASPdid, tx.beneficiaryVASPdid);
      await this.save(client, tx, piiMode);
      await this.emit(client, { tx, previousStatus, change: 'update' });
      return tx;
    });
  }

  async list(access: Access, query: Record<string, unknown>) {
    const one = (name: string): string | undefined => {
      const v = query[name];
      if (v === undefined || v === '') return undefined;
      if (typeof v !== 'string') throw validationError(`${name}: must be given once`);
      return v;
    };
    const int = (name: string, fallback: number, min: number, max: number) => {
      const raw = one(name);
      if (raw === undefined) return fallback;
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n < min || n > max) throw validationError(`${name}: must be a whole number from ${min} to ${max}`);
      return n;
    };
    const vaspDid = one('vaspDID');
    if (!vaspDid) throw validationError('List of missing fields: vaspDID');
    if (!access.exists(vaspDid)) throw notFound(`VASP ${vaspDid} not found`);
    if (!access.vasps().includes(vaspDid)) throw forbidden(`User ${access.userDid} cannot act for VASP ${vaspDid}`);
    const page = int('page', 0, 0, 1_000_000);
    const perPage = int('resultsPerPage', 100, 1, 100);
    const rawStatus = query.status;
    const statuses = (Array.isArray(rawStatus) ? rawStatus : rawStatus === undefined || rawStatus === '' ? [] : [rawStatus])
      .flatMap((s) => String(s).split(','))
      .map((s) => s.trim())
      .filter(Boolean);
    const bad = statuses.find((s) => !isStatus(s));
    if (bad) throw validationError(`status: ${bad} is not a transaction status`);
    const direction = one('txDirection');
    if (direction !== undefined && !['incoming', 'outgoing', 'internal'].includes(direction)) {
      throw validationError('txDirection: must be incoming, outgoing or internal');
    }
    const sort = one('sort') ?? 'createdAt:DESC';
    const SORTS: Record<string, string> = {
      'createdAt:ASC': 'created_at asc', 'createdAt:DESC': 'created_at desc', 'updatedAt:ASC': 'updated_at asc',
      'updatedAt:DESC': 'updated_at desc', 'transactionAmount:ASC': 'transaction_amount asc', 'transactionAmount:DESC': 'transaction_amount desc',
    };
    if (!SORTS[sort]) throw validationError(`sort: must be one of ${Object.keys(SORTS).join(', ')}`);

    const params: unknown[] = [vaspDid];
    const where = [
      direction === 'incoming' ? 'beneficiary_vasp_did = $1'
        : direction === 'outgoing' ? 'originator_vasp_did = $1'
          : direction === 'internal' ? '(originator_vasp_did = $1 and beneficiary_vasp_did = $1)'
            : '(originator_vasp_did = $1 or beneficiary_vasp_did = $1)',
    ];
    if (statuses.length) {
      params.push(statuses);
      where.push(`status = any($${params.length})`);
    }
    for (const [name, column] of [['transactionRef', 'transaction_ref'], ['transactionAsset', 'transaction_asset']] as const) {
      const v = one(name);
      if (v !== undefined) {
        params.push(v);
        where.push(`${column} = $${params.length}`);
      }
    }
    const filter = where.join(' and ');
    const total = (await this.pool.query<{ n: number }>(`select count(*)::int as n from transactions where ${filter}`, params)).rows[0]!.n;
    params.push(perPage, page * perPage);
    const { rows } = await this.pool.query<{ body: Transaction }>(
      `select body from transactions where ${filter} order by ${SORTS[sort]}, id limit $${params.length - 1} offset $${params.length}`,
      params,
    );
    // TransactionResolved: the Transaction without pii (network-api-facts.md §2).
    const transactions = rows.map(({ body }) => {
      const { pii: _pii, ...rest } = body;
      return rest;
    });
    return {
      transactions,
      paginateInfo: {
        totalItems: total,
        itemCount: transactions.length,
        itemsPerPage: perPage,
        totalPages: Math.ceil(total / perPage),
        currentPage: page,
      },
    };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // actions

  /** Takes `action` on transaction `id` as `actor`; the transition table decides (states.ts). */
  async act(actor: Actor, id: unknown, action: TransactionActionName, reason?: string): Promise<Transaction> {
    if (id === undefined || id === '') throw validationError('List of missing fields: id');
    if (!isUuid(id)) throw validationError('id: must be a transaction id (UUID)');
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > 1024)) {
      throw validationError('reason: must be a string of at most 1024 characters');
    }
    return this.inTransaction(async (client) => {
      const row = await this.load(client, id, true);
      if (!row) throw notFound(`Transaction ${id} not found`);
      const tx = row.body;
      requireParty(actor, tx);
      const rule = TRANSITIONS[action];
      const sideVasp = rule.by === 'originator' ? tx.originatorVASPdid : tx.beneficiaryVASPdid;
      if (!sideVasp || !actor.vasps.includes(sideVasp)) {
        throw forbidden(`Only the ${rule.by} VASP of transaction ${tx.id} may ${action} it`);
      }
      const beneficiaryKnown = !!tx.beneficiaryVASPdid && (await this.vaspName(tx.beneficiaryVASPdid, client)) !== undefined;
      const next = nextStatus(action, tx.status, beneficiaryKnown);
      if (!next) throw invalidStatus(tx.status, action);
      const previousStatus = tx.status;
      record(tx, actor.issuerDid, action, reason ?? '', next);
      await this.save(client, tx, row.pii_mode);
      await this.emit(client, { tx, previousStatus, change: action });
      return tx;
    });
  }

  /**
   * For other parts of the network that move a transaction outside the action table (e.g. a gateway redirecting to a
   * subsidiary): `mutate` changes `tx` under the row lock and names the step; the step is recorded in the history,
   * stored, and reported to the listeners (webhooks, simulated counterparties) in the same database transaction.
   * Returning undefined leaves the transaction unchanged.
   */
  async applyChange(
    id: string,
    change: string,
    mutate: (tx: Transaction, client: PoolClient) => Promise<{ issuerDid: string; actionData?: string; status?: TransactionStatus } | undefined>,
  ): Promise<Transaction> {
    return this.inTransaction(async (client) => {
      const row = await this.load(client, id, true);
      if (!row) throw notFound(`Transaction ${id} not found`);
      const tx = row.body;
      const previousStatus = tx.status;
      const step = await mutate(tx, client);
      if (!step) return tx;
      record(tx, step.issuerDid, change, step.actionData ?? '', step.status ?? tx.status);
      await this.save(client, tx, row.pii_mode);
      await this.emit(client, { tx, previousStatus, change });
      return tx;
    });
  }

  // ---------------------------------------------------------------------------------------------------------------
  // storage

  async load(db: Pool | PoolClient, id: string, forUpdate = false): Promise<Row | undefined> {
    const { rows } = await db.query<Row>(`select body, pii_mode from transactions where id = $1${forUpdate ? ' for update' : ''}`, [id]);
    return rows[0];
  }

  private async save(client: PoolClient, tx: Transaction, piiMode: Row['pii_mode']): Promise<void> {
    await client.query(
      `update transactions set status = $2, beneficiary_vasp_did = $3, body = $4, pii_mode = $5, updated_at = $6 where id = $1`,
      [tx.id, tx.status, tx.beneficiaryVASPdid ?? null, tx, piiMode, tx.updatedAt],
    );
  }

  private async autoconfirm(beneficiary: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ parent_did: string | null }>('select parent_did from vasps where did = $1', [beneficiary]);
    return (await getVaspSettings(this.pool, rows[0]?.parent_did ?? beneficiary)).autoconfirm;
  }

  private async vaspName(did: string, db: Pool | PoolClient = this.pool): Promise<string | undefined> {
    const { rows } = await db.query<{ name: string }>('select name from vasps where did = $1', [did]);
    return rows[0]?.name;
  }

  private async emit(client: PoolClient, event: TransactionEvent): Promise<void> {
    for (const listener of this.listeners) await listener(client, event);
  }

  inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, work);
  }
}

/** Only the two VASPs of a transaction (and users of their gateways) may read it or act on it. */
export function requireParty(actor: Actor, tx: Transaction): void {
  const parties = [tx.originatorVASPdid, tx.beneficiaryVASPdid].filter((d): d is string => !!d);
  if (!parties.some((d) => actor.vasps.includes(d))) {
    throw forbidden(`Transaction ${tx.id} belongs to other VASPs`);
  }
}

/** Appends to the action history (a hash chain) and moves the status. */
function record(tx: Transaction, issuerDID: string, action: string, actionData: string, status: TransactionStatus): void {
  const createdAt = new Date().toISOString();
  const previous = tx.actions[tx.actions.length - 1]?.hash ?? '';
  const hash = '0x' + createHash('sha256').update(JSON.stringify([previous, tx.id, issuerDID, action, actionData, createdAt, status])).digest('hex');
  const entry: TransactionAction = { hash, issuerDID, action, actionData, createdAt, status };
  tx.actions.push(entry);
  tx.status = status;
  tx.updatedAt = createdAt;
}

const cidLeaves = (pii: Record<string, unknown>) => piiLeaves(pii).map((l) => l.value).filter(looksLikeCid);
