/**
 * Signed checkpoints of the audit chains' heads, and the signed trailer of an export.
 *
 * The hash chain shows a row changed or deleted in the middle of a chain, but not a chain cut short at its end (rows
 * and head rolled back together) or deleted whole: the database holds everything a check compares. A checkpoint is
 * every chain's head (seq and hash) at one moment, numbered 1, 2, … and signed with HMAC-SHA256 under a key from the
 * configuration (AUDIT_CHECKPOINT_KEYS), which the database does not hold. Someone who can write the database but
 * lacks the key cannot sign a checkpoint for a rewritten or shortened chain, so `audit verify` finds:
 * a chain shorter than a checkpoint, a chain a checkpoint names missing, a row at a checkpoint's seq that is not the
 * one signed (the chain was rewritten), a checkpoint changed (its signature fails) or one deleted between others (a
 * gap in their numbers). Deleting the newest checkpoints with the rows after them remains possible: the newest
 * checkpoint's age, which verify prints (and with --max-checkpoint-age refuses), shows it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { canonicalJson, type ChainHead } from './chain';
import { parseKeyringSetting } from '../lib/keyring-setting';

/** The keys that sign checkpoints and trailers: the first signs, every one verifies (rotation keeps the old ones). */
export interface CheckpointKeyring {
  currentKeyId: string;
  keys: Map<string, Buffer>;
}

export const CHECKPOINT_KEYS_SETTING = 'AUDIT_CHECKPOINT_KEYS';
const FIX = `Set ${CHECKPOINT_KEYS_SETTING} to "id:base64key[,id:base64key…]" with 32-byte keys (openssl rand -base64 32), the signing key first`;

/** Parses `AUDIT_CHECKPOINT_KEYS`: comma-separated `id:base64` keys of 32 bytes, the signing one first. */
export function parseCheckpointKeys(raw: string, setting = CHECKPOINT_KEYS_SETTING): CheckpointKeyring {
  return parseKeyringSetting(raw, setting, FIX);
}

/**
 * The keyring for this process: from the configuration when set; otherwise a development key kept in
 * `<dataDir>/audit-checkpoint-keys` (created on first use, mode 0600), as the codec's development key is.
 */
export function loadCheckpointKeyring(configured: string | undefined, dataDir: string): CheckpointKeyring {
  if (configured) return parseCheckpointKeys(configured);
  const file = `${dataDir}/audit-checkpoint-keys`;
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `dev-${Date.now()}:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  }
  return parseCheckpointKeys(readFileSync(file, 'utf8').trim(), file);
}

/** What a checkpoint signs: its number, its time (ISO 8601, UTC) and every chain's head, in chain order. */
export interface CheckpointBody {
  seq: number;
  at: string;
  heads: ChainHead[];
}

export interface AuditCheckpoint extends CheckpointBody {
  keyId: string;
  mac: string;
}

const byChain = (heads: ChainHead[]) =>
  [...heads]
    .map((h) => ({ chain: h.chain, seq: h.seq, hash: h.hash }))
    .sort((a, b) => Buffer.compare(Buffer.from(a.chain), Buffer.from(b.chain)));

function mac(key: Buffer, kind: string, body: unknown): string {
  return createHmac('sha256', key)
    .update(canonicalJson({ v: 1, kind, body }))
    .digest('hex');
}

function sign(keyring: CheckpointKeyring, kind: string, body: unknown): { keyId: string; mac: string } {
  return { keyId: keyring.currentKeyId, mac: mac(keyring.keys.get(keyring.currentKeyId)!, kind, body) };
}

export type SignatureCheck = 'valid' | 'unknown-key' | 'invalid';

function check(
  keyring: CheckpointKeyring,
  kind: string,
  body: unknown,
  signed: { keyId: string; mac: string },
): SignatureCheck {
  const key = keyring.keys.get(signed.keyId);
  if (!key) return 'unknown-key';
  const expected = Buffer.from(mac(key, kind, body), 'hex');
  const given = Buffer.from(/^[0-9a-f]{64}$/.test(signed.mac) ? signed.mac : '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) ? 'valid' : 'invalid';
}

const checkpointBody = (c: CheckpointBody) => ({ seq: c.seq, at: c.at, heads: byChain(c.heads) });

export function signCheckpoint(keyring: CheckpointKeyring, body: CheckpointBody): AuditCheckpoint {
  const canonical = checkpointBody(body);
  return { ...canonical, ...sign(keyring, 'checkpoint', canonical) };
}

export function checkCheckpoint(keyring: CheckpointKeyring, c: AuditCheckpoint): SignatureCheck {
  return check(keyring, 'checkpoint', checkpointBody(c), c);
}

/**
 * The last line of an export: how many rows it holds and where each chain in it ends, signed when a key is at hand,
 * so a file cut short (its last rows, or its last chains, gone) or with rows added at its end no longer matches.
 */
export interface ExportTrailer {
  trailer: true;
  rows: number;
  heads: ChainHead[];
  keyId?: string;
  mac?: string;
}

const trailerBody = (t: Pick<ExportTrailer, 'rows' | 'heads'>) => ({ rows: t.rows, heads: byChain(t.heads) });

export function exportTrailer(rows: number, heads: ChainHead[], keyring?: CheckpointKeyring): ExportTrailer {
  const body = trailerBody({ rows, heads });
  return { trailer: true, ...body, ...(keyring ? sign(keyring, 'export-trailer', body) : {}) };
}

export function checkTrailerSignature(keyring: CheckpointKeyring, t: ExportTrailer): SignatureCheck | 'unsigned' {
  if (t.keyId === undefined || t.mac === undefined) return 'unsigned';
  return check(keyring, 'export-trailer', trailerBody(t), { keyId: t.keyId, mac: t.mac });
}

/** Whether two lists of heads name the same chains at the same seq and hash. */
export function sameHeads(a: ChainHead[], b: ChainHead[]): boolean {
  return canonicalJson(byChain(a)) === canonicalJson(byChain(b));
}

/**
 * The keyring for checking, never created: the configured keys, else the development key if one was made in the data
 * directory; undefined when there is neither (checkpoints then cannot be checked).
 */
export function readCheckpointKeyring(configured: string | undefined, dataDir: string): CheckpointKeyring | undefined {
  if (configured) return parseCheckpointKeys(configured);
  const file = `${dataDir}/audit-checkpoint-keys`;
  return existsSync(file) ? parseCheckpointKeys(readFileSync(file, 'utf8').trim(), file) : undefined;
}
