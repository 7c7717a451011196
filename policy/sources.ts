/**
 * Where a decision's facts come from in a running system: the counterparty's jurisdiction from the network's
 * directory (cached, since every transfer with the same counterparty asks again), the fiat amount from pricing.
 */
import type { Pool } from 'pg';
import { LRUCache } from 'lru-cache';
import type { NetworkClient } from '../network/client';
import { vaspProfile } from '../network/directory';
import type { DecideDeps } from './decide';
import type { ReviewLookup } from '../counterparties/review-cache';
import { isPriced, type Pricing } from '../pricing';

export interface DecideSources {
  pool: Pool;
  network: NetworkClient;
  gatewayDid: string;
  /** Fiat for amount rules; without it, an amount rule sends the transfer to a person (the price is unknown). */
  toFiat?: DecideDeps['toFiat'];
  /** The reviews in memory; without them every decision reads its counterparty's review from the database. */
  reviews?: ReviewLookup;
  /** How long a directory answer is reused. */
  directoryCacheMs?: number;
}

export function createDecideDeps(sources: DecideSources): DecideDeps {
  const jurisdictions = new LRUCache<string, { country?: string }>({
    max: 10_000,
    ttl: Math.max(1, sources.directoryCacheMs ?? 10 * 60_000),
  });
  return {
    pool: sources.pool,
    gatewayDid: sources.gatewayDid,
    ...(sources.reviews ? { reviews: sources.reviews } : {}),
    async jurisdictionOf(vaspDid) {
      const cached = jurisdictions.get(vaspDid);
      if (cached) return cached.country;
      let country: string | undefined;
      try {
        const profile = await vaspProfile(sources.network.at('low'), vaspDid);
        const value = profile.incorporationCountry;
        country = typeof value === 'string' && /^[A-Z]{2}$/.test(value) ? value : undefined;
      } catch (e) {
        // Unknown to the directory: the jurisdiction is unknown, and a rule that needs it sends to a person. A
        // failure worth retrying (unreachable, rate-limited) fails the step instead of deciding without it.
        if ((e as { retryable?: boolean }).retryable) throw e;
      }
      jurisdictions.set(vaspDid, { country });
      return country;
    },
    toFiat: sources.toFiat ?? (async () => undefined),
  };
}

/** Pricing's answer as a decision's fact: the value and where its price came from, or unknown (with no guess). */
export function fiatOf(pricing: Pricing): DecideDeps['toFiat'] {
  return async (query) => {
    const priced = await pricing.toFiat(query);
    return isPriced(priced) ? { value: priced.value, source: `${priced.source}, price at ${priced.at}` } : undefined;
  };
}
