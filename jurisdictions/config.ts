/** Settings of jurisdictions (environment variables in parentheses); a section of config/index.ts. */
import { ConfigError } from '../lib/errors';
import { isCountryCode } from '../lib/countries';
import type { Env } from '../lib/config-values';

export interface JurisdictionConfig {
  /**
   * Each subsidiary's country, ISO 3166-1 alpha-2 (SUBSIDIARY_JURISDICTIONS, JSON `{"did:ethr:0x…": "DE"}`); a
   * subsidiary not named follows FATF's rules.
   */
  subsidiaryCountries: Record<string, string>;
}

export function loadJurisdictionConfig(env: Env): JurisdictionConfig {
  const raw = env.SUBSIDIARY_JURISDICTIONS?.trim();
  if (!raw) return { subsidiaryCountries: {} };
  const example = 'Set it to {"did:ethr:0x…": "DE"}';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('SUBSIDIARY_JURISDICTIONS', 'is not JSON', example);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError('SUBSIDIARY_JURISDICTIONS', 'is not an object of DIDs to countries', example);
  const subsidiaryCountries: Record<string, string> = {};
  for (const [did, country] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof country !== 'string' || !isCountryCode(country.toUpperCase()))
      throw new ConfigError(
        'SUBSIDIARY_JURISDICTIONS',
        `${did}: "${String(country)}" is not an ISO 3166-1 alpha-2 code`,
        example,
      );
    subsidiaryCountries[did] = country.toUpperCase();
  }
  return { subsidiaryCountries };
}
