import { pageOf } from '../../../db/listing';

describe('pageOf: a page from limit + 1 rows', () => {
  const rows = [1, 2, 3].map((n) => ({ n, at: `2025-01-0${n}T00:00:00.000000Z`, id: `id-${n}` }));
  const keyOf = (r: (typeof rows)[number]) => ({ at: r.at, id: r.id });

  it('shows `limit` rows and, when one more was read, the next cursor is the last shown row', () => {
    expect(pageOf(rows, 2, keyOf, (r) => r.n)).toEqual({ rows: [1, 2], next: { at: rows[1]!.at, id: 'id-2' } });
  });

  it('has no next cursor on the last page, full or not', () => {
    expect(pageOf(rows, 3, keyOf, (r) => r.n)).toEqual({ rows: [1, 2, 3] });
    expect(pageOf(rows.slice(0, 1), 3, keyOf, (r) => r.n)).toEqual({ rows: [1] });
    expect(pageOf([], 3, keyOf, (r) => r.n)).toEqual({ rows: [] });
  });
});
