/** The keystore, as processes open it: everything a caller needs, from here. */
import type { Pool } from 'pg';
import type { Logger } from '../lib/logger';
import { keyWrapperFromConfig } from '../lib/crypto/key-wrapper';
import { parseAgentKeys } from './agent-keys';
import { importAgentKeys } from './agent-keys-import';
import { Keystore } from './store';

export * from './types';
export { parseAgentKeys, type AgentKey } from './agent-keys';
export {
  keyWrapperFromConfig,
  LocalKeyWrapper,
  loadMasterKey,
  parseMasterKey,
  type KeyWrapper,
} from '../lib/crypto/key-wrapper';
export * from './store';
export { importAgentKeys, type AgentKeyImport } from './agent-keys-import';

/**
 * The keystore of a process, ready to use: the master key from `KEYSTORE_MASTER_KEY` (or the development key file),
 * and the agent's `KEYS` imported. Both are checked before anything is written, so a bad setting stops start-up with
 * one line and changes nothing.
 */
export async function openKeystore(
  pool: Pool,
  opts: { masterKey?: string; dataDir: string; agentKeys?: string; log?: Logger },
): Promise<Keystore> {
  const keys = opts.agentKeys ? parseAgentKeys(opts.agentKeys) : [];
  const keystore = new Keystore(pool, keyWrapperFromConfig(opts.masterKey, opts.dataDir));
  if (keys.length > 0) {
    const imported = await importAgentKeys(keystore, keys);
    const changed = imported.filter((k) => k.outcome !== 'already-present');
    opts.log?.info(
      {
        imported: changed.map(({ vaspDid, did, outcome }) => ({ vaspDid, did, outcome })),
        unchanged: imported.length - changed.length,
      },
      'KEYS imported into the keystore',
    );
  }
  return keystore;
}
