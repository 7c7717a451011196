/** Settings of reported deposits (environment variables in parentheses); a section of config/index.ts. */
import { durationSetting, type Env } from '../lib/config-values';
import { ConfigError } from '../lib/errors';
import { isCountryCode } from '../lib/countries';
import { DEPOSIT_DEADLINE_ACTIONS, type DepositDeadlineAction } from './types';

export interface DepositConfig {
  /**
   * How long a deposit no message matches (or only an INCOMPLETE one) is reported to the network again, with backoff
   * (DEPOSIT_MATCH_WINDOW, 1h: originators often add the txHash to their transfer late).
   */
  matchWindowMs: number;
  /** How long an INCOMPLETE match waits for the originator's data (DEPOSIT_DATA_DEADLINE, 72h). */
  dataDeadlineMs: number;
  /**
   * What happens to a deposit whose originator's data did not arrive by the deadline (DEPOSIT_DEADLINE_ACTION,
   * `return`): `return` requires its return, `review` holds it for a compliance officer (checks go on), `release`
   * releases it.
   */
  deadlineAction: DepositDeadlineAction;
  /**
   * Per receiving subsidiary's country (SUBSIDIARY_JURISDICTIONS), the deadline and its action where they differ from
   * the above (DEPOSIT_DEADLINES_BY_COUNTRY, JSON `{"CH": {"after": "24h", "action": "review"}}`, either key optional).
   */
  byCountry: Record<string, { dataDeadlineMs?: number; deadlineAction?: DepositDeadlineAction }>;
  /** The first wait between checks (DEPOSIT_RECHECK_INITIAL, 5s); doubled after each. */
  recheckInitialMs: number;
  /** The longest wait between checks (DEPOSIT_RECHECK_MAX, 5m). */
  recheckMaxMs: number;
  /** Whether decisions are called back to the custody system (CUSTODY_CALLBACK_URL is set, custody/config.ts). */
  custodyCallbacks: boolean;
}

export function loadDepositConfig(env: Env, custody: { callbackUrl?: string } = {}): DepositConfig {
  const initial = durationSetting(env, 'DEPOSIT_RECHECK_INITIAL', '5s', 100).ms;
  return {
    matchWindowMs: durationSetting(env, 'DEPOSIT_MATCH_WINDOW', '1h').ms,
    dataDeadlineMs: durationSetting(env, 'DEPOSIT_DATA_DEADLINE', '72h').ms,
    deadlineAction: deadlineActionSetting(env.DEPOSIT_DEADLINE_ACTION, 'DEPOSIT_DEADLINE_ACTION') ?? 'return',
    byCountry: deadlinesByCountry(env),
    recheckInitialMs: initial,
    recheckMaxMs: Math.max(initial, durationSetting(env, 'DEPOSIT_RECHECK_MAX', '5m', 100).ms),
    custodyCallbacks: custody.callbackUrl !== undefined,
  };
}

function deadlineActionSetting(raw: string | undefined, name: string): DepositDeadlineAction | undefined {
  const v = raw?.trim();
  if (!v) return undefined;
  if (!(DEPOSIT_DEADLINE_ACTIONS as readonly string[]).includes(v))
    throw new ConfigError(name, `"${v}" is not a deadline action`, `Use one of ${DEPOSIT_DEADLINE_ACTIONS.join(', ')}`);
  return v as DepositDeadlineAction;
}

function deadlinesByCountry(env: Env): DepositConfig['byCountry'] {
  const name = 'DEPOSIT_DEADLINES_BY_COUNTRY';
  const raw = env[name]?.trim();
  if (!raw) return {};
  const example =
    'Set it to {"CH": {"after": "24h", "action": "review"}} (ISO 3166-1 alpha-2 codes; either key optional)';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(name, 'is not JSON', example);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError(name, 'is not an object of countries', example);
  const out: DepositConfig['byCountry'] = {};
  for (const [country, value] of Object.entries(parsed as Record<string, unknown>)) {
    const code = country.toUpperCase();
    if (!isCountryCode(code)) throw new ConfigError(name, `"${country}" is not an ISO 3166-1 alpha-2 code`, example);
    const v = (value ?? {}) as { after?: unknown; action?: unknown };
    if (typeof v !== 'object' || Array.isArray(v)) throw new ConfigError(name, `${code}: is not an object`, example);
    const entry: DepositConfig['byCountry'][string] = {};
    if (v.after !== undefined)
      entry.dataDeadlineMs = durationSetting(
        { [`${name}.${code}.after`]: String(v.after) },
        `${name}.${code}.after`,
        '72h',
      ).ms;
    if (v.action !== undefined)
      entry.deadlineAction = deadlineActionSetting(String(v.action), `${name}.${code}.action`);
    out[code] = entry;
  }
  return out;
}
