/**
 * Versions compiled once: a version's rules are parsed the first time a transfer needs them, then reused by every
 * transfer (and every subsidiary sharing the group's version). Keyed by content, so equal documents compile once.
 */
import { LRUCache } from 'lru-cache';
import { defaultPolicy } from './defaults';
import type { CompiledPolicy } from './evaluate';
import { compileRules, type CompiledRule } from './rules';
import type { Pool } from 'pg';
import { policyVersionById, type PolicyVersionRef } from './store';
import type { Direction, PolicyVersion } from './types';

const cache = new LRUCache<string, CompiledRule[]>({ max: 500 });

/** The version's rules for a direction, ready to evaluate; no version → the built-in default. */
export function compiledPolicy(version: PolicyVersion | undefined, direction: Direction): CompiledPolicy {
  if (!version) return defaultPolicy(direction);
  const key = `${version.contentHash}:${direction}`;
  let rules = cache.get(key);
  if (!rules) {
    rules = compileRules(version[direction]);
    cache.set(key, rules);
  }
  return {
    ref: {
      vaspDid: version.vaspDid,
      versionId: version.id,
      version: version.version,
      contentHash: version.contentHash,
    },
    currency: version.currency,
    rules,
  };
}

const byId = new LRUCache<string, PolicyVersion>({ max: 200 });

/**
 * The compiled rules of an assigned version, read from the database only the first time: versions are immutable, so a
 * version's id names its rules for good.
 */
export async function compiledVersion(
  db: Pick<Pool, 'query'>,
  ref: PolicyVersionRef | undefined,
  direction: Direction,
): Promise<CompiledPolicy> {
  if (!ref) return defaultPolicy(direction);
  let version = byId.get(ref.id);
  if (!version) {
    version = await policyVersionById(db as Pool, ref.id);
    if (!version) throw new Error(`policy version ${ref.id} disappeared`);
    byId.set(ref.id, version);
  }
  return compiledPolicy(version, direction);
}
