import type { CursorKey } from '../lib/listing/cursor';
import type { Queryable } from './pool';

/** Oldest first or newest first; every list endpoint sorts by a timestamp, then a unique id. */
export type ListOrder = 'asc' | 'desc';

/** A timestamptz as text with every microsecond, so the cursor built from it finds the row exactly. */
export const exactTimestamp = (column: string) =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * Keyset pagination over (timeColumn, idColumn): the condition for the rows after `cursor` and the ORDER BY, with the
 * cursor's values appended to `params`. A row comparison walks the (…, time, id) index without an offset.
 */
export function keyset(
  params: unknown[],
  timeColumn: string,
  idColumn: string,
  order: ListOrder,
  cursor?: CursorKey,
): { where?: string; orderBy: string } {
  const dir = order === 'asc' ? 'asc' : 'desc';
  const orderBy = `order by ${timeColumn} ${dir}, ${idColumn} ${dir}`;
  if (!cursor) return { orderBy };
  params.push(cursor.at, cursor.id);
  const op = order === 'asc' ? '>' : '<';
  return {
    where: `(${timeColumn}, ${idColumn}) ${op} ($${params.length - 1}::timestamptz, $${params.length})`,
    orderBy,
  };
}

/** One page of a list: its rows, and the sort key of the last row when more may follow. */
export interface Page<T> {
  rows: T[];
  next?: CursorKey;
}

/**
 * The page from `limit + 1` rows read in the keyset's order: the extra row is never shown, it only says that a next
 * page exists, which starts after the sort key of the last row shown.
 */
export function pageOf<R, T>(rows: R[], limit: number, keyOf: (row: R) => CursorKey, toRow: (row: R) => T): Page<T> {
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  return { rows: shown.map(toRow), ...(rows.length > limit && last ? { next: keyOf(last) } : {}) };
}

/**
 * One page of `from`'s rows whose columns equal every filter value given (undefined: not filtered), by `created_at`
 * then `id`: the list of a capability's table whose filters are plain equalities. `from` and the column names are the
 * store's own constants, never input.
 */
export async function pageByCreation<R extends { created_at: string; id: string }, T>(
  db: Queryable,
  from: { table: string; columns: string },
  filters: ReadonlyArray<readonly [column: string, value: unknown]>,
  page: { limit: number; order: ListOrder; cursor?: CursorKey },
  toItem: (row: R) => T,
): Promise<Page<T>> {
  const where: string[] = [];
  const args: unknown[] = [];
  for (const [column, value] of filters) {
    if (value === undefined) continue;
    args.push(value);
    where.push(`${column} = $${args.length}`);
  }
  const ks = keyset(args, 'created_at', 'id', page.order, page.cursor);
  if (ks.where) where.push(ks.where);
  args.push(page.limit + 1);
  const { rows } = await db.query<R>(
    `select ${from.columns} from ${from.table} ${where.length ? `where ${where.join(' and ')}` : ''}
      ${ks.orderBy} limit $${args.length}`,
    args,
  );
  return pageOf(rows, page.limit, (r) => ({ at: r.created_at, id: r.id }), toItem);
}
