/**
 * What the keystore's callers exchange, and the checks on it that need no storage: key states and public views,
 * the VASP DID rule, and the agent's `privateKeyHex` turned into a did:key record. The keystore itself (Postgres) is
 * keys.
 */
import { createDidKeyRecord, parseDidKey, type DidKeyRecord } from '../lib/crypto';
import { ValidationError } from '../lib/errors';
import type { Principal } from '../lib/principal';

export type KeyState = 'pending' | 'active' | 'retired' | 'destroyed';
export type KeySource = 'generated' | 'imported';

/** What anyone may see of a stored key: never the private part. */
export interface KeyInfo {
  id: string;
  vaspDid: string;
  /** The did:key, i.e. the value published as `pii_didkey`. */
  did: string;
  publicKeyHex: string;
  state: KeyState;
  source: KeySource;
  createdAt: string;
  activatedAt: string | null;
  retiredAt: string | null;
  destroyedAt: string | null;
}

export interface AuditContext {
  /** Who asked: `schedule`, `config:KEYS`, a workflow id, a principal's stable id (lib/principal.ts auditActor). */
  actor: string;
  /** The authenticated caller, when a person or a service asked through the API (recorded whole in the audit row). */
  principal?: Principal;
  reason?: string;
  workflowId?: string;
}

const VASP_DID = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/;

export function assertVaspDid(vaspDid: unknown, field = 'vaspDID'): asserts vaspDid is string {
  if (typeof vaspDid !== 'string' || !VASP_DID.test(vaspDid)) {
    throw new ValidationError(field, 'must be a VASP DID such as did:ethr:0x…');
  }
}

const HEX_128 = /^[0-9a-fA-F]{128}$/;

/**
 * Builds a key record from the agent's `privateKeyHex` (the 32-byte seed followed by the 32-byte public key), checking
 * the public half against the seed and, when given, `did` against both. Errors name the field, never the value.
 */
export function recordFromPrivateKeyHex(privateKeyHex: unknown, did: unknown, field: string): DidKeyRecord {
  const at = (name: string) => (field ? `${field}.${name}` : name);
  if (typeof privateKeyHex !== 'string' || !HEX_128.test(privateKeyHex)) {
    throw new ValidationError(
      at('privateKeyHex'),
      'must be 128 hex characters: the 32-byte Ed25519 seed followed by the 32-byte public key',
    );
  }
  const seed = Buffer.from(privateKeyHex.slice(0, 64), 'hex');
  const record = createDidKeyRecord(seed);
  seed.fill(0);
  if (privateKeyHex.slice(64).toLowerCase() !== record.keys[0].publicKeyHex) {
    throw new ValidationError(at('privateKeyHex'), 'its public half does not match the public key its seed produces');
  }
  if (did !== undefined) {
    parseDidKey(did, at('did'));
    if (did !== record.did) throw new ValidationError(at('did'), 'does not match the key in privateKeyHex');
  }
  return record;
}

export type ImportOutcome = 'imported-active' | 'imported-retired' | 'already-present';
