/**
 * The value parsers of every configuration section (config/index.ts and the sections it reads): one duration syntax,
 * one cron check, one time-zone check, one JSON-secrets parser. Each throws a ConfigError naming the variable and the fix.
 */
import { ConfigError } from './errors';

export type Env = Record<string, string | undefined>;

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;

/** `<n>ms|s|m|h|d` in milliseconds, or undefined when `raw` is not a duration. */
export function parseDuration(raw: string): number | undefined {
  const m = DURATION.exec(raw.trim());
  return m ? Number(m[1]) * DURATION_UNITS[m[2]!]! : undefined;
}

export interface DurationSetting {
  /** As written (trimmed), e.g. `5m`: what Temporal's timers take and what history shows. */
  text: string;
  ms: number;
}

/** A duration variable of at least `minMs` (default 1 ms; 0 allows `0s`). Unset or empty: `fallback`. */
export function durationSetting(env: Env, name: string, fallback: string, minMs = 1): DurationSetting {
  const text = (env[name] || fallback).trim();
  const ms = parseDuration(text);
  if (ms === undefined || ms < minMs) {
    const least = minMs <= 0 ? '' : minMs === 1 ? ' above zero' : ` of at least ${minMs} ms`;
    throw new ConfigError(
      name,
      `"${text}" is not a duration${least}`,
      `Set ${name} to a number with a unit ms, s, m, h or d (default ${fallback})`,
    );
  }
  return { text, ms };
}

/** Whether the variable says `off` (a schedule or feature switched off). */
export const isOff = (env: Env, name: string): boolean => (env[name] ?? '').trim().toLowerCase() === 'off';

const CRON_FIELD = /^[\d*/,\-A-Za-z?LW#]+$/;

/** A five-field cron expression (or `@daily`-style), `fallback` when unset or empty, undefined when `off`. */
export function cronSetting(env: Env, name: string, fallback: string, meaning: string): string | undefined {
  const raw = (env[name] ?? '').trim() || fallback;
  if (raw.toLowerCase() === 'off') return undefined;
  const fields = raw.split(/\s+/);
  if ((fields.length !== 5 && !raw.startsWith('@')) || !fields.every((f) => CRON_FIELD.test(f))) {
    throw new ConfigError(
      name,
      `"${raw}" is not a five-field cron expression`,
      `Use e.g. "${fallback}" (${meaning}), or off`,
    );
  }
  return raw;
}

/** An IANA time zone, UTC when unset. */
export function timezoneSetting(env: Env, name: string): string {
  const timezone = (env[name] || 'UTC').trim();
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new ConfigError(name, `"${timezone}" is not an IANA time zone`, 'Use e.g. UTC or Europe/Zurich');
  }
  return timezone;
}

/** A whole number (of `unit`, if given) from `min` to `max`, `fallback` when unset or empty. */
export function intSetting(env: Env, name: string, fallback: number, min: number, max: number, unit?: string): number {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return fallback;
  const n = /^-?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    const what = unit ? `a whole number of ${unit}` : 'a whole number';
    throw new ConfigError(
      name,
      `"${raw}" is not ${what} from ${min} to ${max}`,
      `Set ${name} within that range or unset it (default ${fallback})`,
    );
  }
  return n;
}

/** An http(s) URL without trailing slashes, undefined when unset or empty. */
export function httpUrlSetting(env: Env, name: string, example = 'https://api.example.com'): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new ConfigError(name, `"${raw}" is not an http(s) URL`, `Set ${name} to a URL such as ${example}`);
  }
  return raw.replace(/\/+$/, '');
}

export interface SecretRule {
  /** Whether one secret can be used; `describe` says what a usable one is. */
  usable: (secret: string) => boolean;
  describe: string;
  example: string;
}

/** A JSON object from a name (usually a VASP DID) to a secret, each checked by `rule`; `{}` when unset. */
export function secretsSetting(env: Env, name: string, rule: SecretRule): Record<string, string> {
  const raw = env[name];
  if (!raw) return {};
  const fix = `Set it to a JSON object such as {"did:ethr:0x…": "${rule.example}"}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(name, 'is not valid JSON', fix);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ConfigError(name, 'is not a JSON object', fix);
  for (const [key, secret] of Object.entries(parsed)) {
    if (typeof secret !== 'string' || !rule.usable(secret))
      throw new ConfigError(name, `the secret of "${key}" is not ${rule.describe}`, fix);
  }
  return { ...(parsed as Record<string, string>) };
}
