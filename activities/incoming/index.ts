import ky from 'ky';
import type { Pool } from 'pg';
import { AppError, ConflictError, CryptoError, ValidationError } from '../../lib/errors';
import { checkEntry } from '../../lib/address-book/entry';
import { upsertEntries } from '../../db/address-registry';
import type { Logger } from '../../lib/logger';
import { screenAddress, screenName } from '../screening/sanctions-store';
import type { NetworkClient } from '../network/network-client';
import { txAction, txInfo } from '../network/transactions';
import type { ScreeningOutcome } from '../../workflows/incoming-transfer.messages';
import { findRegistryOwner } from './owner';

/** The network's Transaction, as far as incoming routing reads it (personal data is never passed on). */
interface NetworkTx {
  id: string;
  status: string;
  transactionAsset?: unknown;
  transactionAmount?: string;
  transactionRef?: string;
  createdAt?: string;
  originatorVASPdid?: string;
  beneficiaryVASPdid?: string;
  transactionBlockchainInfo?: { destination?: string; origin?: string };
  ivms101?: { originator?: { originatorPersons?: Person[] } };
  pii?: unknown;
}
interface Person {
  naturalPerson?: { name?: { nameIdentifier?: { primaryIdentifier?: string; secondaryIdentifier?: string }[] }[] };
  legalPerson?: { name?: { nameIdentifier?: { legalPersonName?: string }[] } };
}

export interface IncomingTxSummary {
  id: string;
  status: string;
  asset: string;
  destination: string;
  originatorVaspDid?: string;
  beneficiaryVaspDid?: string;
  amount?: string;
  /** The originator's transactionRef, when it gave one. */
  reference?: string;
  createdAt?: string;
}

export interface IncomingDeps {
  pool: Pool;
  network: NetworkClient;
  logger: Logger;
  /** Decrypts a transaction's personal data with the keys (current or retired) of `vaspDid`. */
  decrypt: (tx: NetworkTx, vaspDid: string) => Promise<NetworkTx>;
  callbackUrl?: string;
}

const assetOf = (a: unknown): string =>
  typeof a === 'string' ? a : a && typeof a === 'object' ? String((a as Record<string, unknown>).caip19 ?? (a as Record<string, unknown>).coingeckoId ?? 'UNKNOWN') : 'UNKNOWN';

const summary = (tx: NetworkTx): IncomingTxSummary => ({
  id: tx.id,
  status: tx.status,
  asset: assetOf(tx.transactionAsset),
  destination: tx.transactionBlockchainInfo?.destination ?? '',
  originatorVaspDid: tx.originatorVASPdid,
  beneficiaryVaspDid: tx.beneficiaryVASPdid,
  amount: tx.transactionAmount,
  reference: tx.transactionRef,
  createdAt: tx.createdAt,
});

/** The originator's names as screening needs them: "secondary primary" for people, the legal name for entities. */
export function originatorNames(tx: NetworkTx): string[] {
  const names: string[] = [];
  for (const p of tx.ivms101?.originator?.originatorPersons ?? []) {
    for (const n of p.naturalPerson?.name ?? []) {
      for (const id of n.nameIdentifier ?? []) {
        const full = [id.secondaryIdentifier, id.primaryIdentifier].filter(Boolean).join(' ').trim();
        if (full) names.push(full);
      }
    }
    for (const id of p.legalPerson?.name?.nameIdentifier ?? []) if (id.legalPersonName?.trim()) names.push(id.legalPersonName.trim());
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

export function incomingActivities(deps: IncomingDeps) {
  const info = (id: string) => txInfo<NetworkTx>(deps.network, id);

  /** See txAction: an action already taken (or overtaken) counts as done. */
  const act = async (what: string, id: string, alreadyDone: string[], send: () => Promise<NetworkTx>): Promise<IncomingTxSummary> =>
    summary((await txAction(deps.network, what, id, new Set(alreadyDone), send)).tx);

  return {
    async getIncomingTransaction(transactionId: string): Promise<IncomingTxSummary> {
      return summary(await info(transactionId));
    },

    async findAddressOwner(input: { asset: string; address: string; subsidiaryDids: string[] }): Promise<string | null> {
      if (!input.address) return null;
      return (await findRegistryOwner(deps.pool, input.address, input.subsidiaryDids)) ?? null;
    },

    async redirectIncomingTransaction(input: { transactionId: string; to: string }): Promise<IncomingTxSummary> {
      const current = await info(input.transactionId);
      if (current.beneficiaryVASPdid === input.to) return summary(current);
      return summary(
        await deps.network.call('POST /tx/redirect', () =>
          deps.network.api.post('tx/redirect', { searchParams: { id: input.transactionId, to: input.to } }).json<NetworkTx>(),
        ),
      );
    },

    async confirmIncomingTransaction(transactionId: string): Promise<IncomingTxSummary> {
      return act('POST /tx/confirm', transactionId, ['ACK', 'ACCEPTED', 'DECLINED', 'REJECTED', 'CANCELLED'], () =>
        deps.network.api.post('tx/confirm', { searchParams: { id: transactionId } }).json<NetworkTx>(),
      );
    },

    async acceptIncomingTransaction(transactionId: string): Promise<IncomingTxSummary> {
      return act('POST /tx/accept', transactionId, ['ACCEPTED'], () =>
        deps.network.api.post('tx/accept', { searchParams: { id: transactionId } }).json<NetworkTx>(),
      );
    },

    async declineIncomingTransaction(input: { transactionId: string; reason: string }): Promise<IncomingTxSummary> {
      return act('POST /tx/decline', input.transactionId, ['DECLINED'], () =>
        deps.network.api.post('tx/decline', { json: { id: input.transactionId, reason: input.reason } }).json<NetworkTx>(),
      );
    },

    async rejectIncomingTransaction(input: { transactionId: string; reason: string }): Promise<IncomingTxSummary> {
      return act('POST /tx/reject', input.transactionId, ['REJECTED'], () =>
        deps.network.api.post('tx/reject', { json: { id: input.transactionId, reason: input.reason } }).json<NetworkTx>(),
      );
    },

    /**
     * Fetches the transfer, decrypts its personal data with the subsidiary's keys, screens the originator's names and
     * the origin address, and returns only the hits: the names never leave this activity.
     */
    async screenIncomingTransfer(input: { transactionId: string; subsidiaryDid: string; gatewayDid: string; threshold: number }): Promise<ScreeningOutcome> {
      if (!(input.threshold > 0 && input.threshold <= 1)) throw new ValidationError('threshold', 'must be in (0, 1]');
      const fetched = await info(input.transactionId);
      // The originator encrypted to the key it could see: the gateway's (it sees only the parent) or, when it sent to
      // the subsidiary directly, the subsidiary's. Either keyring (current or retired keys) may open it.
      // Whatever a counterparty sends may fail to decrypt or parse; that holds the transfer for a person (with the
      // reason) instead of failing it. Only a failure worth retrying (the network unreachable) fails the attempt.
      let unreadable: { kind: 'undecryptable' | 'unreadable'; reason: string } | undefined;
      const read = (tx: NetworkTx): string[] => {
        try {
          return originatorNames(tx);
        } catch (e) {
          unreadable = { kind: 'unreadable', reason: unreadableReason(e) };
          return [];
        }
      };
      let names = read(fetched);
      for (const did of [input.subsidiaryDid, input.gatewayDid]) {
        if (names.length > 0) break;
        try {
          names = read(await deps.decrypt(fetched, did));
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
      return {
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
    },

    /**
     * A person routed a transfer nobody owned, and the network registers the address to that subsidiary when it is
     * confirmed. The group's registry is the address book's source of truth, so the address joins it too; otherwise
     * the next reconciliation would delete it from the network again.
     */
    async recordRoutedAddress(input: { asset: string; destination: string; subsidiaryDid: string; transactionId: string }): Promise<'recorded' | 'skipped'> {
      const checked = checkEntry(
        { asset: input.asset, address: input.destination, customerRef: `routed:${input.transactionId}`, vaspDID: input.subsidiaryDid },
        new Set([input.subsidiaryDid]),
      );
      if (!checked.ok) return 'skipped';
      try {
        await upsertEntries(deps.pool, [checked.value]);
        return 'recorded';
      } catch (e) {
        if (e instanceof ConflictError) return 'skipped';
        throw e;
      }
    },

    async recordAudit(input: { actor: string; action: string; subject: string; details: Record<string, unknown> }): Promise<void> {
      await deps.pool.query('insert into audit_log (actor, action, subject, details) values ($1, $2, $3, $4)', [
        input.actor, input.action, input.subject, JSON.stringify(input.details),
      ]);
    },

    /** Tells the internal systems (TRANSFER_CALLBACK_URL) how an incoming transfer ended or that it needs a person. */
    async reportIncomingOutcome(input: { transactionId: string; outcome: string; networkStatus: string; subsidiaryDid: string | null }): Promise<void> {
      if (!deps.callbackUrl) return;
      await ky.post(deps.callbackUrl, { json: { direction: 'incoming', ...input }, retry: 0, timeout: 10_000 });
    },
  };
}
