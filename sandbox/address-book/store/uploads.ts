import type { Pool, PoolClient } from 'pg';

type Db = Pick<Pool | PoolClient, 'query'>;

export type UploadStatus = 'queued' | 'processing' | 'completed' | 'failed';

export interface RejectedRow {
  /** Line of the file (the header is line 1). */
  line: number;
  asset: string;
  address: string;
  customerRef: string;
  reason: string;
}

export interface UploadView {
  id: string;
  vaspDID: string;
  userDID: string;
  fileName: string;
  sizeBytes: number;
  counter: number;
  status: UploadStatus;
  counts: { rowsRead: number; registered: number; updated: number; rejected: number };
  rejectedRows: RejectedRow[];
  /** More rows were rejected than are listed here. */
  rejectedRowsTruncated: boolean;
  error: string | null;
  receivedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export async function uploadExists(db: Db, id: string): Promise<boolean> {
  const { rowCount } = await db.query('select 1 from address_uploads where id = $1', [id]);
  return (rowCount ?? 0) > 0;
}

/**
 * Records an accepted file and takes the VASP's next upload counter, in one transaction. Returns undefined when the
 * upload id is already taken (the same upload URL used twice at once).
 */
export async function createUpload(
  pool: Pool,
  u: {
    id: string;
    vaspDid: string;
    userDid: string;
    fileName: string;
    sizeBytes: number;
    spoolPath: string;
    claimedBy: string;
  },
): Promise<{ counter: number } | undefined> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{ counter: number }>(
      `insert into address_upload_counters (vasp_did, counter) values ($1, 1)
       on conflict (vasp_did) do update set counter = address_upload_counters.counter + 1 returning counter`,
      [u.vaspDid],
    );
    const counter = rows[0]!.counter;
    const inserted = await client.query(
      `insert into address_uploads (id, vasp_did, user_did, counter, file_name, size_bytes, spool_path, claimed_by)
       values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict (id) do nothing`,
      [u.id, u.vaspDid, u.userDid, counter, u.fileName, u.sizeBytes, u.spoolPath, u.claimedBy],
    );
    if (!inserted.rowCount) {
      await client.query('rollback');
      return undefined;
    }
    await client.query('commit');
    return { counter };
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

export async function readUpload(db: Db, id: string, rejectedLimit: number): Promise<UploadView | undefined> {
  const { rows } = await db.query<{
    id: string;
    vasp_did: string;
    user_did: string;
    file_name: string;
    size_bytes: string;
    counter: number;
    status: UploadStatus;
    rows_read: number;
    registered: number;
    updated: number;
    rejected: number;
    error: string | null;
    received_at: Date;
    started_at: Date | null;
    finished_at: Date | null;
  }>('select * from address_uploads where id = $1', [id]);
  const u = rows[0];
  if (!u) return undefined;
  const rejectedRows = await readRejections(db, id, rejectedLimit);
  return {
    id: u.id,
    vaspDID: u.vasp_did,
    userDID: u.user_did,
    fileName: u.file_name,
    sizeBytes: Number(u.size_bytes),
    counter: u.counter,
    status: u.status,
    counts: { rowsRead: u.rows_read, registered: u.registered, updated: u.updated, rejected: u.rejected },
    rejectedRows,
    rejectedRowsTruncated: u.rejected > rejectedRows.length,
    error: u.error,
    receivedAt: u.received_at.toISOString(),
    startedAt: u.started_at?.toISOString() ?? null,
    finishedAt: u.finished_at?.toISOString() ?? null,
  };
}

export async function readRejections(db: Db, id: string, limit: number): Promise<RejectedRow[]> {
  const { rows } = await db.query<{
    line: number;
    asset: string;
    address: string;
    customer_ref: string;
    reason: string;
  }>(
    'select line, asset, address, customer_ref, reason from address_upload_rejections where upload_id = $1 order by line limit $2',
    [id, limit],
  );
  return rows.map((r) => ({
    line: r.line,
    asset: r.asset,
    address: r.address,
    customerRef: r.customer_ref,
    reason: r.reason,
  }));
}

const clip = (s: string) => (s.length > 256 ? `${s.slice(0, 253)}...` : s);

export async function insertRejections(db: Db, id: string, rejected: readonly RejectedRow[]): Promise<void> {
  if (!rejected.length) return;
  await db.query(
    `insert into address_upload_rejections (upload_id, line, asset, address, customer_ref, reason)
     select $1, * from unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[])
     on conflict (upload_id, line) do nothing`,
    [
      id,
      rejected.map((r) => r.line),
      rejected.map((r) => clip(r.asset)),
      rejected.map((r) => clip(r.address)),
      rejected.map((r) => clip(r.customerRef)),
      rejected.map((r) => r.reason),
    ],
  );
}

/** An accepted upload as its processing run reads it. */
export interface UploadRow {
  id: string;
  vasp_did: string;
  user_did: string;
  counter: number;
  file_name: string;
  spool_path: string;
}

export interface UploadCounts {
  rowsRead: number;
  registered: number;
  updated: number;
  rejected: number;
}

/** Renews the claim on every unfinished upload this instance holds. */
export async function renewClaims(db: Db, instanceId: string): Promise<void> {
  await db.query(
    `update address_uploads set heartbeat_at = now() where claimed_by = $1 and status in ('queued', 'processing')`,
    [instanceId],
  );
}

/** Claims unfinished uploads whose owner has not renewed its claim for `abandonAfterSeconds`; returns their ids. */
export async function claimAbandoned(db: Db, instanceId: string, abandonAfterSeconds: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `update address_uploads set claimed_by = $1, heartbeat_at = now()
      where status in ('queued', 'processing') and heartbeat_at < now() - make_interval(secs => $2)
      returning id`,
    [instanceId, abandonAfterSeconds],
  );
  return rows.map((r) => r.id);
}

/** Marks the upload finished with its counts (and error, when it failed). */
export async function finishUpload(
  db: Db,
  id: string,
  status: 'completed' | 'failed',
  error: string | null,
  counts: UploadCounts,
): Promise<void> {
  await db.query(
    `update address_uploads set status = $2, error = $3, finished_at = now(), rows_read = $4, registered = $5, updated = $6, rejected = $7
      where id = $1`,
    [id, status, error, counts.rowsRead, counts.registered, counts.updated, counts.rejected],
  );
}

/** Records progress, which also renews the claim. */
export async function recordProgress(db: Db, id: string, counts: UploadCounts): Promise<void> {
  await db.query(
    `update address_uploads set rows_read = $2, registered = $3, updated = $4, rejected = $5, heartbeat_at = now() where id = $1`,
    [id, counts.rowsRead, counts.registered, counts.updated, counts.rejected],
  );
}

/** Refreshes the planner's statistics of the address table. */
export async function analyzeAddresses(db: Db): Promise<void> {
  await db.query('analyze addresses');
}

/** Starts (or restarts from the top) the processing of an unfinished upload: its counts and rejected rows start over. */
export async function startProcessing(db: Db, id: string, instanceId: string): Promise<UploadRow | undefined> {
  const { rows } = await db.query<UploadRow>(
    `update address_uploads
        set status = 'processing', started_at = now(), heartbeat_at = now(), claimed_by = $2,
            rows_read = 0, registered = 0, updated = 0, rejected = 0, error = null
      where id = $1 and status in ('queued', 'processing')
      returning id, vasp_did, user_did, counter, file_name, spool_path`,
    [id, instanceId],
  );
  if (!rows[0]) return undefined;
  await db.query('delete from address_upload_rejections where upload_id = $1', [id]);
  return rows[0];
}
