/**
 * The jurisdictions' rules (data/jurisdictions.json, versioned in the repository, each value with its source and
 * confidence) and the lookup of a country's rules: its own entry, the EU's for an EEA member, else none (the caller
 * falls back to FATF, as the network's `fallbackToFATF`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JurisdictionRules } from './types';

export interface JurisdictionTable {
  version: string;
  fatf: JurisdictionRules;
  jurisdictions: JurisdictionRules[];
}

let loaded: JurisdictionTable | undefined;

/** data/jurisdictions.json beside the sources or beside the build; read once per process. */
export function jurisdictionTable(): JurisdictionTable {
  if (loaded) return loaded;
  const file = [
    join(__dirname, '..', 'data', 'jurisdictions.json'),
    join(__dirname, '..', '..', 'data', 'jurisdictions.json'),
  ].find((f) => existsSync(f));
  if (!file) throw new Error('data/jurisdictions.json: not found');
  loaded = JSON.parse(readFileSync(file, 'utf8')) as JurisdictionTable;
  return loaded;
}

/** A country's rules, or undefined when the table has none for it. */
export function rulesOf(countryCode: string | undefined, table = jurisdictionTable()): JurisdictionRules | undefined {
  if (!countryCode) return undefined;
  const code = countryCode.toUpperCase();
  return table.jurisdictions.find((j) => j.countryCode === code || j.countryCodes?.includes(code));
}

/** A country's rules, else FATF's (the network's `fallbackToFATF`). */
export function rulesOrFatf(countryCode: string | undefined, table = jurisdictionTable()): JurisdictionRules {
  return rulesOf(countryCode, table) ?? table.fatf;
}
