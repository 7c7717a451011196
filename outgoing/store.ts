/**
 * The orchestrator's table of outgoing transfers (db/migrations/orchestrator/0004_outgoing-transfers.sql). The API
 * writes the caller's request here sealed, and the workflow carries only the row's id: personal data never enters
 * workflow history, and the activities read the request back by id.
 */
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Pool } from 'pg';
import { AuditUnavailableError, ConflictError, GoneError, NotFoundError } from '../lib/errors';
import { aesGcmOpen, aesGcmSeal, type KeyWrapper } from '../lib/crypto/key-wrapper';
import { appendAuditEntry, type AuditEntry } from '../audit/store';
import { withTransaction } from '../db/transaction';

/** What the store needs to know of a request it seals: how it came in and its originator (outgoing/request.ts). */
export interface SealableRequest {
  source: 'api' | 'agent';
  body: { originatorVASPdid: string };
}

const context = (id: string) => `tro-outgoing-transfer:v1|${id}`;

export interface StoredPii {
  /** The IVMS101-shaped tree of CIDs, as the network's `pii` field takes it. */
  tree: Record<string, unknown>;
  mode: string;
  recipients: string[];
}

/** The encrypted values as sent to the personal-data service, and for whom (0013_outgoing-pii-entries.sql). */
export interface PendingPii {
  fromDid: string;
  toDid: string;
  mode: string;
  recipients: string[];
  entries: { key: string; value: string }[];
}

export interface TransferRow {
  id: string;
  source: 'api' | 'agent';
  originatorVaspDid: string;
  pii?: StoredPii;
  transactionId?: string;
  /** How the transfer was classified when requested (outgoing/validate.ts StoredClassification; 0021). */
  classification?: Record<string, unknown>;
}

interface Row {
  id: string;
  source: 'api' | 'agent';
  originator_vasp_did: string;
  wrapping_key_id: string;
  // NULL once the retention sweep erased the request (pii_erased_at set; 0007_retention.sql).
  wrapped_data_key: Buffer | null;
  sealed_request: Buffer | null;
  pii_erased_at: Date | null;
  pii: Record<string, unknown> | null;
  pii_mode: string | null;
  pii_recipients: string[] | null;
  transaction_id: string | null;
  classification: Record<string, unknown> | null;
}

export class TransferStore<R extends SealableRequest = SealableRequest> {
  constructor(
    readonly pool: Pool,
    private readonly wrapper: KeyWrapper,
  ) {}

  /**
   * Stores the request under `id` unless a row exists. A repeat with the same request is fine (`created: false`); a
   * repeat with a different one is a ConflictError: an idempotency key names one transfer.
   *
   * With `audit`, the row and its audit entry commit in one transaction, so there is never a stored request without the
   * record of who made it, nor a record of a request that was not stored. The entry is appended only with the row: a
   * repeat appends nothing (the row it finds was committed with its entry). When the entry cannot be written nothing is
   * stored, and the AuditUnavailableError (503, worth retrying) says so.
   *
   * `classification` (no personal data) is stored with a new row; a repeat keeps the first one.
   */
  async put(
    id: string,
    request: R,
    audit?: { entry: AuditEntry; idempotencyKey?: string },
    classification?: object,
  ): Promise<{ created: boolean }> {
    const dataKey = randomBytes(32);
    let sealed: Buffer;
    let wrapped: Uint8Array;
    try {
      sealed = aesGcmSeal(dataKey, Buffer.from(JSON.stringify(request), 'utf8'), `request|${context(id)}`);
      wrapped = await this.wrapper.wrap(dataKey, context(id));
    } finally {
      dataKey.fill(0);
    }
    const insert = async (db: Pick<Pool, 'query'>) =>
      Boolean(
        (
          await db.query(
            `insert into outgoing_transfers (id, source, originator_vasp_did, wrapping_key_id, wrapped_data_key, sealed_request,
         classification)
       values ($1, $2, $3, $4, $5, $6, $7) on conflict (id) do nothing`,
            [
              id,
              request.source,
              request.body.originatorVASPdid,
              this.wrapper.keyId,
              Buffer.from(wrapped),
              sealed,
              classification ? JSON.stringify(classification) : null,
            ],
          )
        ).rowCount,
      );
    const created = !audit
      ? await insert(this.pool)
      : await withTransaction(this.pool, async (tx) => {
          if (!(await insert(tx))) return false;
          // Last in the transaction: the chain's head stays locked only until the commit right after.
          try {
            await appendAuditEntry(
              tx,
              audit.entry,
              audit.idempotencyKey ? { idempotencyKey: audit.idempotencyKey } : {},
            );
          } catch (e) {
            // The database's own error stays in `cause` for the log: its text is no part of the answer.
            throw Object.assign(
              new AuditUnavailableError(
                'the audit log could not record this transfer request, so it was neither stored nor started; try again shortly',
                { action: audit.entry.action },
              ),
              { cause: e },
            );
          }
          return true;
        });
    if (created) return { created: true };
    const existing = await this.request(id);
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(existing)), JSON.parse(JSON.stringify(request)))) {
      throw new ConflictError(`transfer ${id} exists with a different request`, {
        field: request.source === 'api' ? 'Idempotency-Key' : 'transactionRef',
        rule: 'an idempotency key names one transfer: repeat the same request, or use a new key',
      });
    }
    return { created: false };
  }

  private async row(id: string): Promise<Row> {
    const { rows } = await this.pool.query<Row>('select * from outgoing_transfers where id = $1', [id]);
    if (!rows[0]) throw new NotFoundError(`no outgoing transfer ${id}`, { field: 'id' });
    return rows[0];
  }

  /**
   * The caller's request, unsealed (personal data: keep it in memory only). A GoneError once the retention period
   * erased it: only a running transfer reads it, and those end long before.
   */
  async request(id: string): Promise<R> {
    return this.unseal(await this.row(id));
  }

  /** The request unsealed and the row's state, from one read (the send step needs both). */
  async load(id: string): Promise<{ request: R; transfer: TransferRow }> {
    const row = await this.row(id);
    return { request: await this.unseal(row), transfer: toTransfer(row) };
  }

  private async unseal(row: Row): Promise<R> {
    const { id } = row;
    if (row.pii_erased_at || !row.wrapped_data_key || !row.sealed_request) {
      throw new GoneError(`the request of outgoing transfer ${id} was erased at the end of its retention period`, {
        field: 'id',
        rule: 'personal data of a transfer is kept for RETENTION_TRANSFER_PII_DAYS only',
        erasedAt: row.pii_erased_at?.toISOString(),
      });
    }
    const dataKey = Buffer.from(await this.wrapper.unwrap(row.wrapped_data_key, row.wrapping_key_id, context(id)));
    try {
      return JSON.parse(
        aesGcmOpen(dataKey, row.sealed_request, `request|${context(id)}`, `outgoing transfer ${id}`).toString('utf8'),
      );
    } finally {
      dataKey.fill(0);
    }
  }

  async get(id: string): Promise<TransferRow> {
    return toTransfer(await this.row(id));
  }

  /** Whether a transfer is stored under `id`. */
  async exists(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('select 1 from outgoing_transfers where id = $1', [id]);
    return (rowCount ?? 0) > 0;
  }

  /** The classification stored with the transfer (null: none, or no such transfer); one column, nothing unsealed. */
  async classification(id: string): Promise<Record<string, unknown> | null> {
    const { rows } = await this.pool.query<{ classification: Record<string, unknown> | null }>(
      'select classification from outgoing_transfers where id = $1',
      [id],
    );
    return rows[0]?.classification ?? null;
  }

  /** The blockchain transaction hash the custody system gave the transfer (null: none yet, or no such transfer). */
  async txHash(id: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ tx_hash: string | null }>(
      'select tx_hash from outgoing_transfers where id = $1',
      [id],
    );
    return rows[0]?.tx_hash ?? null;
  }

  /** Forgets a hash the network refused, unless another one replaced it. */
  async clearTxHash(id: string, txHash: string): Promise<void> {
    await this.pool.query('update outgoing_transfers set tx_hash = null where id = $1 and tx_hash = $2', [id, txHash]);
  }

  /** Sets the transfer's hash once; answers the hash it holds afterwards (another one when it had one already). */
  async setTxHash(id: string, txHash: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ tx_hash: string | null }>(
      `update outgoing_transfers set tx_hash = coalesce(tx_hash, $2), updated_at = now() where id = $1
       returning tx_hash`,
      [id, txHash],
    );
    return rows[0]?.tx_hash ?? null;
  }

  /**
   * Keeps the encrypted values before they are sent, once: a second call answers the first call's values, so every
   * attempt sends the same bytes.
   */
  async setPendingPii(id: string, pending: PendingPii): Promise<PendingPii> {
    const { rows } = await this.pool.query<{ pii_entries: PendingPii }>(
      'update outgoing_transfers set pii_entries = coalesce(pii_entries, $2), updated_at = now() where id = $1 returning pii_entries',
      [id, JSON.stringify(pending)],
    );
    if (!rows[0]) throw new NotFoundError(`no outgoing transfer ${id}`, { field: 'id' });
    return rows[0].pii_entries;
  }

  /** Records the stored encrypted form once; a second call keeps the first (a retried activity changes nothing). */
  async setPii(id: string, pii: StoredPii): Promise<StoredPii> {
    const { rows } = await this.pool.query<Row>(
      `update outgoing_transfers set pii = coalesce(pii, $2), pii_mode = coalesce(pii_mode, $3),
         pii_recipients = coalesce(pii_recipients, $4), updated_at = now()
       where id = $1 returning *`,
      [id, JSON.stringify(pii.tree), pii.mode, pii.recipients],
    );
    if (!rows[0]) throw new NotFoundError(`no outgoing transfer ${id}`, { field: 'id' });
    return toTransfer(rows[0]).pii!;
  }

  async setTransactionId(id: string, transactionId: string): Promise<void> {
    // The transaction refers to the stored values now: the copy kept for retries of the put is no longer needed.
    await this.pool.query(
      'update outgoing_transfers set transaction_id = $2, pii_entries = null, updated_at = now() where id = $1',
      [id, transactionId],
    );
  }

  /** The transfer a network transaction belongs to, if this system created it. */
  async byTransactionId(transactionId: string): Promise<TransferRow | undefined> {
    const { rows } = await this.pool.query<Row>('select * from outgoing_transfers where transaction_id = $1', [
      transactionId,
    ]);
    return rows[0] ? toTransfer(rows[0]) : undefined;
  }
}

function toTransfer(row: Row): TransferRow {
  return {
    id: row.id,
    source: row.source,
    originatorVaspDid: row.originator_vasp_did,
    pii: row.pii ? { tree: row.pii, mode: row.pii_mode ?? '', recipients: row.pii_recipients ?? [] } : undefined,
    transactionId: row.transaction_id ?? undefined,
    ...(row.classification ? { classification: row.classification } : {}),
  };
}
