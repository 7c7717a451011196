import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CodecKeyring } from './codec';
import { parseKeyringSetting } from '../keyring-setting';

const FIX = 'Set TEMPORAL_CODEC_KEYS to "id:base64key[,id:base64key…]" with 32-byte keys, the encrypting key first';

/**
 * Parses `TEMPORAL_CODEC_KEYS`: a comma-separated list of `id:base64` AES-256 keys. The first one encrypts; all of
 * them decrypt, so a key can be rotated by putting the new one first and keeping the old one while history needs it.
 */
export function parseCodecKeys(raw: string, setting = 'TEMPORAL_CODEC_KEYS'): CodecKeyring {
  return parseKeyringSetting(raw, setting, FIX);
}

export const formatCodecKey = (id: string, key: Buffer) => `${id}:${key.toString('base64')}`;

/**
 * The keyring for this process: from the environment when set; otherwise a development key kept in
 * `<dataDir>/codec-keys` (created on first start, git-ignored), so `npm start` works with nothing configured and a
 * second start can still read the history of the first.
 */
export function loadCodecKeyring(configured: string | undefined, dataDir: string): CodecKeyring {
  if (configured) return parseCodecKeys(configured);
  const file = `${dataDir}/codec-keys`;
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${formatCodecKey(`dev-${Date.now()}`, randomBytes(32))}\n`, { mode: 0o600 });
  }
  return parseCodecKeys(readFileSync(file, 'utf8').trim(), file);
}
