import { ConfigError } from './errors';

/** A setting's symmetric keys: the first one signs or encrypts, every one verifies or decrypts (rotation). */
export interface SettingKeyring {
  currentKeyId: string;
  keys: Map<string, Buffer>;
}

/**
 * Parses a keyring setting (TEMPORAL_CODEC_KEYS, AUDIT_CHECKPOINT_KEYS): comma-separated `id:base64` keys of 32
 * bytes, the current one first; throws a ConfigError naming `setting`, with `fix`.
 */
export function parseKeyringSetting(raw: string, setting: string, fix: string): SettingKeyring {
  const keys = new Map<string, Buffer>();
  let currentKeyId: string | undefined;
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const sep = entry.indexOf(':');
    if (sep <= 0) throw new ConfigError(setting, `entry "${entry.slice(0, 12)}…" has no "id:" prefix`, fix);
    const id = entry.slice(0, sep);
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) throw new ConfigError(setting, `key id "${id}" is not [A-Za-z0-9._-]`, fix);
    const key = Buffer.from(entry.slice(sep + 1), 'base64');
    if (key.length !== 32) throw new ConfigError(setting, `key "${id}" is ${key.length} bytes, not 32`, fix);
    if (keys.has(id)) throw new ConfigError(setting, `key id "${id}" appears twice`, fix);
    keys.set(id, key);
    currentKeyId ??= id;
  }
  if (!currentKeyId) throw new ConfigError(setting, 'holds no key', fix);
  return { currentKeyId, keys };
}
