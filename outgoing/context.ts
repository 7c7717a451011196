/**
 * What every step of an outgoing transfer works with: the database, the network, the keystore, the sealed request
 * store, the settings and the group, plus short-lived caches of directory answers and of the VASPs' active keys.
 */
import type { Pool } from 'pg';
import type { GroupConfig } from '../lib/group';
import type { LocalDidKey } from '../lib/crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../lib/logger';
import { keyWrapperFromConfig, type Keystore, type KeyWrapper } from '../keys';
import { TransferStore } from './store';
import type { NetworkClient } from '../network/client';
import type { TransferConfig } from './config';
import type { OutgoingRequest } from './request';

export interface TransferContext {
  pool: Pool;
  network: NetworkClient;
  keystore: Keystore;
  store: TransferStore<OutgoingRequest>;
  config: TransferConfig;
  group: GroupConfig;
  logger: Logger;
  /** Directory answers (none is kept as `value: undefined`) reused for `config.directoryCacheMs`. */
  cache: LRUCache<string, { value: string | undefined }>;
  /** The VASPs' active keys for encrypting, reused for `config.directoryCacheMs` (see activeKey). */
  activeKeys: LRUCache<string, LocalDidKey>;
}

/**
 * The context's caches: bounded (least recently used out first) since the counterparties come and go, and each entry
 * forgotten `directoryCacheMs` after it was stored. With 0, nothing is stored (see cached and activeKey).
 */
export function directoryCaches(directoryCacheMs: number): Pick<TransferContext, 'cache' | 'activeKeys'> {
  const ttl = Math.ceil(directoryCacheMs);
  return { cache: new LRUCache({ max: 4096, ttl }), activeKeys: new LRUCache({ max: 256, ttl }) };
}

export interface TransferContextDeps {
  pool: Pool;
  network: NetworkClient;
  keystore: Keystore;
  /** The keystore's wrapper (same master key), which seals stored requests. */
  keyWrapper: KeyWrapper;
  config: TransferConfig;
  group: GroupConfig;
  logger: Logger;
}

export function createTransferContext(deps: TransferContextDeps): TransferContext {
  return {
    pool: deps.pool,
    network: deps.network,
    keystore: deps.keystore,
    store: new TransferStore<OutgoingRequest>(deps.pool, deps.keyWrapper),
    config: deps.config,
    group: deps.group,
    logger: deps.logger,
    ...directoryCaches(deps.config.directoryCacheMs),
  };
}

/**
 * The context as a process opens it: the same master key as the keystore (KEYSTORE_MASTER_KEY, or the development key
 * file) seals stored requests. Undefined without a network: the transfer routes and activities then refuse to run.
 */
export function openTransferContext(deps: {
  pool: Pool;
  network: NetworkClient | undefined;
  keystore: Keystore;
  masterKey: string | undefined;
  dataDir: string;
  group: GroupConfig;
  logger: Logger;
  config: TransferConfig;
}): TransferContext | undefined {
  if (!deps.network) return undefined;
  return createTransferContext({
    pool: deps.pool,
    network: deps.network,
    keystore: deps.keystore,
    keyWrapper: keyWrapperFromConfig(deps.masterKey, deps.dataDir),
    config: deps.config,
    group: deps.group,
    logger: deps.logger,
  });
}

/** A directory answer from the context's cache, or loaded (and kept for `directoryCacheMs`). */
export async function cached(
  ctx: TransferContext,
  key: string,
  load: () => Promise<string | undefined>,
): Promise<string | undefined> {
  const hit = ctx.cache.get(key);
  if (hit) return hit.value;
  const value = await load();
  if (ctx.config.directoryCacheMs > 0) ctx.cache.set(key, { value });
  return value;
}

/**
 * The VASP's active key for encrypting, reused for `directoryCacheMs` (a rotation is picked up within that time; the
 * previous key still decrypts, so data written meanwhile stays readable). Loading it unseals the key from the keystore.
 */
export async function activeKey(ctx: TransferContext, vaspDid: string): Promise<LocalDidKey | undefined> {
  const hit = ctx.activeKeys.get(vaspDid);
  if (hit) return hit;
  const key = await ctx.keystore.loadActiveKey(vaspDid);
  // A VASP without a key is asked again next time.
  if (key && ctx.config.directoryCacheMs > 0) ctx.activeKeys.set(vaspDid, key);
  return key;
}
