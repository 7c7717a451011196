/**
 * The counterparty's jurisdiction on its reviews: its incorporation country as the network's directory says, filled in
 * after the review is saved (never in the request: the directory may be slow or down) and by the reconciliation.
 */
import type { Pool } from 'pg';
import { isCountryCode } from '../lib/countries';
import type { NetworkClient } from '../network/client';
import { vaspProfile } from '../network/directory';
import { fillJurisdiction, withoutJurisdiction } from './store';

/** The counterparty's incorporation country at the directory; undefined when it has none or is not known there. */
async function incorporationCountry(network: NetworkClient, vaspDid: string): Promise<string | undefined> {
  try {
    const value = (await vaspProfile(network, vaspDid)).incorporationCountry;
    return typeof value === 'string' && isCountryCode(value) ? value : undefined;
  } catch (e) {
    if ((e as { retryable?: boolean }).retryable) throw e;
    return undefined;
  }
}

/** Fills the jurisdiction of one counterparty's reviews, or of every review without one (up to `limit`). */
export async function fillJurisdictions(
  deps: { pool: Pool; network: NetworkClient },
  opts: { vaspDid?: string; limit?: number } = {},
): Promise<number> {
  const dids = opts.vaspDid ? [opts.vaspDid] : await withoutJurisdiction(deps.pool, opts.limit ?? 500);
  let filled = 0;
  for (const did of dids) {
    const country = await incorporationCountry(deps.network, did);
    if (!country) continue;
    await fillJurisdiction(deps.pool, did, country);
    filled++;
  }
  return filled;
}
