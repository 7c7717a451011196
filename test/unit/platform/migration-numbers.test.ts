import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { RENAMED_MIGRATIONS } from '../../../db/migrate';
import type { SchemaOwner } from '../../../db/pool';

const OWNERS: SchemaOwner[] = ['orchestrator', 'sandbox'];
const names = (owner: SchemaOwner) =>
  readdirSync(resolve(__dirname, '../../../db/migrations', owner))
    .filter((f) => !f.startsWith('.'))
    .sort();

describe('migration files', () => {
  it.each(OWNERS)('%s: every file is NNNN_name.sql and no two share a number', (owner) => {
    const files = names(owner);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(f).toMatch(/^\d{4}_[a-z0-9-]+\.sql$/);
    const byNumber = new Map<string, string[]>();
    for (const f of files) byNumber.set(f.slice(0, 4), [...(byNumber.get(f.slice(0, 4)) ?? []), f]);
    expect([...byNumber.values()].filter((same) => same.length > 1)).toEqual([]);
  });

  it.each(OWNERS)('%s: numbered 0001 upwards without gaps', (owner) => {
    const numbers = names(owner).map((f) => Number(f.slice(0, 4)));
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
  });

  it.each(OWNERS)('%s: each renamed migration exists under its new name and no longer under its old one', (owner) => {
    const present = new Set(names(owner).map((f) => f.replace(/\.sql$/, '')));
    for (const [oldName, newName] of Object.entries(RENAMED_MIGRATIONS[owner])) {
      expect({ oldName, present: present.has(oldName) }).toEqual({ oldName, present: false });
      expect({ newName, present: present.has(newName) }).toEqual({ newName, present: true });
    }
  });
});
