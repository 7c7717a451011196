import { getRun } from './store/runs';
import { listingCounts, recordListingPage, type ListingKind } from './store/staging';
import { withTransaction } from '../db/transaction';
import { LISTING_PAGE_SIZE, listPage, type ListingPage } from '../network/address-book';
import type { AddressBookDeps } from './deps';

/**
 * Pages through the network's listing of the VASP's addresses into the run's staging (`before` the changes, or `after`
 * them to verify), resuming at the first page not stored. Returns the network's total and what was staged.
 */
export async function listInto(
  deps: Pick<AddressBookDeps, 'pool' | 'network' | 'heartbeat'>,
  runId: string,
  vaspDid: string,
  kind: ListingKind,
): Promise<{ total: number; rows: number; distinct: number }> {
  const { pool, network } = deps;
  const r = await getRun(pool, runId);
  let page = kind === 'before' ? r.listed_pages : r.verify_pages;
  let done = kind === 'before' ? r.listing_done : r.verify_done;
  let next: Promise<ListingPage> | undefined;
  while (!done) {
    const current = await (next ?? listPage(network, vaspDid, page));
    // Fetch the following page while this one is written.
    next = current.data.length >= LISTING_PAGE_SIZE ? listPage(network, vaspDid, page + 1) : undefined;
    next?.catch(() => undefined);
    const counts = new Map<string, { ref: string; n: number }>();
    for (const row of current.data) {
      const c = counts.get(row.address);
      if (c) c.n += 1;
      else counts.set(row.address, { ref: row.customer_ref ?? '', n: 1 });
    }
    done = current.data.length < LISTING_PAGE_SIZE;
    const total = Number(current.pagination?.total ?? 0);
    await withTransaction(pool, (c) => recordListingPage(c, runId, kind, { next: page + 1, done, total, counts }));
    page += 1;
    deps.heartbeat?.({ kind, page });
  }
  const staged = await listingCounts(pool, runId, kind);
  const after = await getRun(pool, runId);
  return {
    total: Number((kind === 'before' ? after.network_before : after.network_after) ?? 0),
    rows: staged.rows,
    distinct: staged.distinct,
  };
}
