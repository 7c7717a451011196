/**
 * The agent's `KEYS` variable: a JSON array of `{vaspDID, privateKeyHex}`.
 * It is imported into the keystore at start (keys/agent-keys-import.ts), so an existing agent configuration keeps working unchanged. A bad entry
 * stops start-up with one ConfigError naming the entry's index and the rule; no message ever quotes a key.
 */
import type { DidKeyRecord } from '../lib/crypto';
import { ConfigError, ValidationError } from '../lib/errors';
import { assertVaspDid, recordFromPrivateKeyHex } from './types';

export interface AgentKey {
  vaspDid: string;
  record: DidKeyRecord;
}

export const KEYS_FIX =
  'KEYS must be a JSON array of {"vaspDID": "did:…", "privateKeyHex": "<128 hex: seed then public key>"}';

export function parseAgentKeys(raw: string): AgentKey[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    // V8's messages quote the input around the error, which could be key material: keep only the position.
    const at = /position (\d+)/.exec((e as Error).message)?.[1];
    throw new ConfigError('KEYS', `is not valid JSON${at ? ` (at character ${at})` : ''}`, KEYS_FIX);
  }
  if (!Array.isArray(parsed)) throw new ConfigError('KEYS', 'is not a JSON array', KEYS_FIX);
  const seen = new Map<string, { vaspDid: string; index: number }>();
  return parsed.map((entry: unknown, i): AgentKey => {
    const at = `KEYS[${i}]`;
    try {
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
        throw new ValidationError(at, 'must be an object');
      const { vaspDID, privateKeyHex } = entry as Record<string, unknown>;
      assertVaspDid(vaspDID, `${at}.vaspDID`);
      const record = recordFromPrivateKeyHex(privateKeyHex, undefined, at);
      const previous = seen.get(record.did);
      if (previous && previous.vaspDid !== vaspDID) {
        throw new ValidationError(
          `${at}.privateKeyHex`,
          `is the same key as KEYS[${previous.index}], which names another VASP`,
        );
      }
      seen.set(record.did, { vaspDid: vaspDID, index: i });
      return { vaspDid: vaspDID, record };
    } catch (e) {
      if (e instanceof ValidationError)
        throw new ConfigError('KEYS', `${e.details.field}: ${e.details.rule}`, KEYS_FIX);
      throw e;
    }
  });
}
