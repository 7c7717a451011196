/**
 * Screening of an incoming transfer: its personal data decrypted with the group's keys, the originator's names and
 * the origin address checked against the loaded sanctions lists. Only the hits leave; the names never do.
 */
import type { Pool } from 'pg';
import { AppError, CryptoError, ValidationError } from '../lib/errors';
import { screenAddress, screenName } from './store';
import type { NetworkClient } from '../network/client';
import type { ScreeningOutcome } from './types';
import { incomingTx, type IncomingNetworkTx } from '../incoming/transaction';

export interface ScreeningDeps {
  pool: Pool;
  network: NetworkClient;
  /** Decrypts a transaction's personal data with the keys (current or retired) of `vaspDid`. */
  decrypt: (tx: IncomingNetworkTx, vaspDid: string) => Promise<IncomingNetworkTx>;
}

/** The originator's names as screening needs them: "secondary primary" for people, the legal name for entities. */
export function originatorNames(tx: IncomingNetworkTx): string[] {
  const names: string[] = [];
  for (const p of tx.ivms101?.originator?.originatorPersons ?? []) {
    for (const n of p.naturalPerson?.name ?? []) {
      for (const id of n.nameIdentifier ?? []) {
        const full = [id.secondaryIdentifier, id.primaryIdentifier].filter(Boolean).join(' ').trim();
        if (full) names.push(full);
      }
    }
    for (const id of p.legalPerson?.name?.nameIdentifier ?? [])
      if (id.legalPersonName?.trim()) names.push(id.legalPersonName.trim());
  }
  return [...new Set(names)];
}

/**
 * Why a counterparty's personal data could not be read, for the reviewer: the error's kind and our rule, never the
 * offending field name or value, which come from the counterparty's data.
 */
export function unreadableReason(e: unknown): string {
  if (e instanceof AppError) return `${e.name}: ${typeof e.details.rule === 'string' ? e.details.rule : e.message}`;
  return `${e instanceof Error ? e.name : 'Error'}: the personal data is malformed`;
}

/**
 * Fetches the transfer, decrypts its personal data with the subsidiary's keys, screens the originator's names and
 * the origin address, and returns only the hits.
 */
export async function screenIncomingTransfer(deps: ScreeningDeps, input: ScreeningInput): Promise<ScreeningOutcome> {
  return (await screenIncoming(deps, input)).outcome;
}

export interface ScreeningInput {
  transactionId: string;
  subsidiaryDid: string;
  gatewayDid: string;
  threshold: number;
}

/**
 * Screening, and the originator's country (its first address's), which a policy may check. The country stays in the
 * process: the caller decides with it and passes on the decision only.
 */
export async function screenIncoming(
  deps: ScreeningDeps,
  input: ScreeningInput,
): Promise<{ outcome: ScreeningOutcome; customerCountry?: string }> {
  if (!(input.threshold > 0 && input.threshold <= 1)) throw new ValidationError('threshold', 'must be in (0, 1]');
  const fetched = await incomingTx(deps.network, input.transactionId);
  // The originator encrypted to the key it could see: the gateway's (it sees only the parent) or, when it sent to
  // the subsidiary directly, the subsidiary's. Either keyring (current or retired keys) may open it.
  // Whatever a counterparty sends may fail to decrypt or parse; that holds the transfer for a person (with the
  // reason) instead of failing it. Only a failure worth retrying (the network unreachable) fails the attempt.
  let unreadable: { kind: 'undecryptable' | 'unreadable'; reason: string } | undefined;
  const read = (tx: IncomingNetworkTx): string[] => {
    try {
      return originatorNames(tx);
    } catch (e) {
      unreadable = { kind: 'unreadable', reason: unreadableReason(e) };
      return [];
    }
  };
  let country: string | undefined;
  let names = read(fetched);
  if (names.length > 0) country = originatorCountry(fetched);
  for (const did of [input.subsidiaryDid, input.gatewayDid]) {
    if (names.length > 0) break;
    try {
      const opened = await deps.decrypt(fetched, did);
      names = read(opened);
      if (names.length > 0) country = originatorCountry(opened);
    } catch (e) {
      if (e instanceof AppError && e.retryable) throw e;
      unreadable = { kind: e instanceof CryptoError ? 'undecryptable' : 'unreadable', reason: unreadableReason(e) };
    }
  }
  const tx = fetched;
  const nameHits = (await Promise.all(names.map((n) => screenName(deps.pool, n, input.threshold)))).flat();
  const origin = tx.transactionBlockchainInfo?.origin;
  const addressHits = origin ? await screenAddress(deps.pool, origin) : [];
  const unique = [...new Map(nameHits.map((h) => [`${h.list}/${h.entNum}`, h])).values()];
  const outcome: ScreeningOutcome = {
    screenedNames: names.length,
    nameHits: unique.map((h) => ({ list: h.list, entNum: h.entNum, matchedName: h.matchedName, score: h.score })),
    addressHits: addressHits.map((h) => ({ list: h.list, asset: h.asset, entNum: h.entNum })),
    // Personal data that none of our keys opens cannot be cleared by screening: a person must look at it.
    ...(names.length === 0
      ? unreadable
        ? { skipped: unreadable.kind, unreadableReason: unreadable.reason }
        : { skipped: fetched.pii ? ('undecryptable' as const) : ('no-personal-data' as const) }
      : {}),
  };
  return { outcome, ...(country ? { customerCountry: country } : {}) };
}

/** The country of the originator's first address that names one (IVMS101 `geographicAddress[].country`). */
export function originatorCountry(tx: IncomingNetworkTx): string | undefined {
  for (const p of tx.ivms101?.originator?.originatorPersons ?? []) {
    const addresses = p.naturalPerson?.geographicAddress ?? p.legalPerson?.geographicAddress ?? [];
    const country = addresses.map((a) => a.country).find((c) => typeof c === 'string' && /^[A-Z]{2}$/.test(c));
    if (country) return country as string;
  }
  return undefined;
}
