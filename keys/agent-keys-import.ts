/** Imports the agent's `KEYS` (parsed by keys/agent-keys.ts) into the keystore. */
import { ConfigError, ValidationError } from '../lib/errors';
import { KEYS_FIX, type AgentKey } from './agent-keys';
import type { ImportOutcome } from './types';
import type { Keystore } from './store';

export interface AgentKeyImport {
  vaspDid: string;
  keyId: string;
  did: string;
  outcome: ImportOutcome;
}

/**
 * Imports every entry; running it again with the same KEYS changes nothing. Entries are applied in order, so when a
 * VASP has several, the first becomes active (the one the agent would use) and the others are kept for decryption.
 */
export async function importAgentKeys(
  keystore: Keystore,
  keys: readonly AgentKey[],
  actor = 'config:KEYS',
): Promise<AgentKeyImport[]> {
  const results: AgentKeyImport[] = [];
  for (const [i, { vaspDid, record }] of keys.entries()) {
    try {
      const { key, outcome } = await keystore.importKey(vaspDid, record, { actor }, `KEYS[${i}]`);
      results.push({ vaspDid, keyId: key.id, did: key.did, outcome });
    } catch (e) {
      if (e instanceof ValidationError || (e as { httpStatus?: number }).httpStatus === 409) {
        throw new ConfigError('KEYS', (e as Error).message, KEYS_FIX);
      }
      throw e;
    }
  }
  return results;
}
