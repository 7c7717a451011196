/**
 * The audit log's hash chain: how a row's hash is computed and how a sequence of rows is checked. The same code checks
 * the database (audit/verify.ts) and an export file offline, so both agree on what "intact" means.
 *
 * A row's hash is SHA-256 (hex) over the canonical JSON of {v, chain, seq, at, actor, action, subject, details,
 * prevHash}: object keys sorted by their UTF-8 bytes, no white space, strings and numbers as JSON.stringify writes
 * them. Sorting by UTF-8 bytes (not UTF-16 as RFC 8785 does) lets PostgreSQL produce the same text with
 * `order by key collate "C"`, which the migration that chained the existing rows relies on.
 */
import { createHash } from 'node:crypto';
import { CryptoError } from '../lib/errors';

/** The previous hash of a chain's first row. */
export const GENESIS_HASH = '0'.repeat(64);
/** The version of the hashed record's layout; a new layout gets a new number and both stay verifiable. */
export const AUDIT_HASH_VERSION = 1;

/** One row as hashed and exported: `at` is the exact timestamp text (microseconds, UTC), `details` plain JSON. */
export interface AuditChainRow {
  /** The database's row id: names a row in reports; not hashed (the chain's identity of a row is chain + seq). */
  id: string;
  chain: string;
  seq: number;
  at: string;
  actor: string;
  action: string;
  subject: string;
  details: unknown;
  prevHash: string;
  hash: string;
}

/** The chain an action's row joins: its first dotted segment (`incoming.decline` → `incoming`). */
export function chainOf(action: string): string {
  return action.split('.', 1)[0]!;
}

const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Canonical JSON of a JSON value (see the file's comment). Throws on what JSON cannot hold. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('audit details: numbers must be finite');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => utf8Order(a, b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new TypeError(`audit details: a ${typeof value} is not JSON`);
}

/** The hash of a row from its fields and the previous row's hash. */
export function auditRowHash(row: Omit<AuditChainRow, 'id' | 'hash'>): string {
  const record = {
    v: AUDIT_HASH_VERSION,
    chain: row.chain,
    seq: row.seq,
    at: row.at,
    actor: row.actor,
    action: row.action,
    subject: row.subject,
    details: row.details,
    prevHash: row.prevHash,
  };
  return createHash('sha256').update(canonicalJson(record), 'utf8').digest('hex');
}

/** Where a chain ends: its last row's seq and hash (seq 0 and the genesis hash for an empty chain). */
export interface ChainHead {
  chain: string;
  seq: number;
  hash: string;
}

/** What a check found: every chain's head as the rows end it, and the first broken row if any. */
export interface ChainReport {
  rows: number;
  heads: ChainHead[];
  broken?: { id: string | null; chain: string; seq: number; problem: string };
}

/**
 * Checks rows given chain by chain in seq order. From the database (`complete`), each chain must start at seq 1 after
 * the genesis hash; an export covers a time range, so its first row per chain is taken as given (its own hash is still
 * checked) and the rows after it must link to it. Stops at the first broken row.
 */
export class ChainChecker {
  private readonly last = new Map<string, ChainHead>();
  private count = 0;
  private broken?: ChainReport['broken'];

  constructor(private readonly complete: boolean) {}

  /** Checks the next row; false once a row was broken (later rows are not looked at). */
  add(row: AuditChainRow): boolean {
    if (this.broken) return false;
    const fail = (problem: string) => {
      this.broken = { id: row.id, chain: row.chain, seq: row.seq, problem };
      return false;
    };
    this.count++;
    const before =
      this.last.get(row.chain) ?? (this.complete ? { chain: row.chain, seq: 0, hash: GENESIS_HASH } : undefined);
    if (before) {
      if (row.seq <= before.seq)
        return fail(`seq ${row.seq} comes after seq ${before.seq}: rows out of order or repeated`);
      if (row.seq !== before.seq + 1) {
        const missing = row.seq - before.seq - 1;
        return fail(
          `${missing === 1 ? `row seq ${before.seq + 1} is` : `rows seq ${before.seq + 1} to ${row.seq - 1} are`} missing before it (deleted)`,
        );
      }
      if (row.prevHash !== before.hash)
        return fail(`its previous hash is not the hash of seq ${before.seq} (a row before it was changed or replaced)`);
    }
    if (auditRowHash(row) !== row.hash) return fail('its hash does not match its contents (the row was changed)');
    this.last.set(row.chain, { chain: row.chain, seq: row.seq, hash: row.hash });
    return true;
  }

  /**
   * Compares each chain's end with the recorded heads (the database's audit_chain_heads): a head beyond the last row
   * means rows were deleted from the end.
   */
  checkHeads(heads: ChainHead[]): void {
    for (const head of heads) {
      if (this.broken) return;
      const end = this.last.get(head.chain) ?? { chain: head.chain, seq: 0, hash: GENESIS_HASH };
      if (end.seq !== head.seq || end.hash !== head.hash) {
        this.broken = {
          id: null,
          chain: head.chain,
          seq: end.seq + 1,
          problem: `the chain's recorded head is seq ${head.seq} ${head.hash}, but its rows end at seq ${end.seq} ${end.hash} (rows at the end deleted, or the head changed)`,
        };
      }
    }
    for (const chain of this.last.keys()) {
      if (!this.broken && !heads.some((h) => h.chain === chain)) {
        this.broken = { id: null, chain, seq: 1, problem: 'the chain has rows but no recorded head' };
      }
    }
  }

  report(): ChainReport {
    return {
      rows: this.count,
      heads: [...this.last.values()].sort((a, b) => utf8Order(a.chain, b.chain)),
      ...(this.broken ? { broken: this.broken } : {}),
    };
  }
}

/** The error `audit verify` ends with when a chain is broken: names the row. */
export function brokenChainError(broken: NonNullable<ChainReport['broken']>, where: string): CryptoError {
  const row =
    broken.id === null
      ? `chain ${broken.chain} at seq ${broken.seq}`
      : `row id ${broken.id} (chain ${broken.chain}, seq ${broken.seq})`;
  return new CryptoError(`audit chain broken in ${where} at ${row}: ${broken.problem}`, {
    chain: broken.chain,
    seq: broken.seq,
    rowId: broken.id,
  });
}
