import type { PlatformConfig } from './';
import { ConfigError } from '../lib/errors';
import { isLoopbackHost } from '../lib/loopback';

/**
 * The keys that, unset, are created as development keys in the data directory (lib/temporal/codec-keys.ts,
 * keys, audit/checkpoint-signature.ts): convenient on a laptop, but off loopback they would protect production data
 * with keys nobody chose, kept next to the data, and different on every host.
 */
const KEYS: [setting: string, configured: (c: PlatformConfig) => string | undefined, example: string][] = [
  ['TEMPORAL_CODEC_KEYS', (c) => c.codecKeys, 'id:base64key'],
  ['KEYSTORE_MASTER_KEY', (c) => c.keystoreMasterKey, 'base64 of 32 random bytes'],
  ['AUDIT_CHECKPOINT_KEYS', (c) => c.audit.checkpointKeys, 'id:base64key'],
];

/** Refuses an API that listens off loopback without every one of its keys configured, naming the first missing. */
export function assertKeysConfigured(config: PlatformConfig): void {
  if (isLoopbackHost(config.host)) return;
  const missing = KEYS.filter(([, configured]) => !configured(config));
  if (!missing.length) return;
  const [setting] = missing[0]!;
  const others = missing.slice(1).map(([s]) => s);
  throw new ConfigError(
    setting,
    `is unset while the API listens on ${config.host}, which is not a loopback address${others.length ? ` (so ${others.length > 1 ? 'are' : 'is'} ${others.join(' and ')})` : ''}: a development key would be created in the data directory`,
    `Set ${missing.map(([s, , example]) => `${s} (${example}; openssl rand -base64 32)`).join(', ')}, the same for every API and worker process, or set HOST=127.0.0.1`,
  );
}
