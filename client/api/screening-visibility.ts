import type { Principal } from '../../lib/principal';
import type { IncomingHistoryEntry, IncomingStatus } from '../../workflows/incoming-transfer.messages';
import { access } from './auth/roles';

/**
 * Screening hits (which sanctions-list entries matched, with scores) and the reasons people gave for their decisions
 * and routings are compliance matters: they can name a customer's suspected match and why a transfer was stopped. Only
 * the roles that may decide (compliance, admin) read them; everyone else who may read a transfer gets the same record
 * without those fields, so a viewer still sees that a transfer waits for review, was declined and by whom.
 */
export function seesScreening(principal: Principal): boolean {
  return principal.roles.some((r) => (access.compliance as readonly string[]).includes(r));
}

function withoutReason(decision: unknown): unknown {
  if (!decision || typeof decision !== 'object') return decision;
  const { reason: _reason, ...rest } = decision as Record<string, unknown>;
  return rest;
}

/** A transfer-list row as `principal` may read it: without `hits`, and its decision without the reason. */
export function transferRowFor<T extends { hits?: unknown; decision?: unknown }>(
  principal: Principal,
  row: T,
): Omit<T, 'hits'> & { hits?: unknown } {
  if (seesScreening(principal)) return row;
  const { hits: _hits, ...rest } = row;
  return { ...rest, decision: withoutReason(row.decision) } as Omit<T, 'hits'>;
}

/** History entries that carry a person's reason, or what screening found. */
const REASONED = new Set(['decision', 'route-requested']);
const SCREENING = new Set(['screened']);

function entryFor(entry: IncomingHistoryEntry): IncomingHistoryEntry {
  if (SCREENING.has(entry.event)) {
    const { detail: _detail, ...rest } = entry;
    return rest;
  }
  if (REASONED.has(entry.event) && entry.detail)
    return { ...entry, detail: withoutReason(entry.detail) as Record<string, unknown> };
  return entry;
}

/** An incoming transfer's status as `principal` may read it: without the screening outcome and the reasons. */
export function incomingStatusFor(principal: Principal, status: IncomingStatus): IncomingStatus {
  if (seesScreening(principal)) return status;
  const { screening: _screening, ...rest } = status;
  return {
    ...rest,
    ...(status.decision ? { decision: withoutReason(status.decision) as IncomingStatus['decision'] } : {}),
    history: status.history.map(entryFor),
  };
}
