/**
 * The repository's layout rules that lint cannot express: SQL lives in db/ and in the capabilities' stores (a
 * `store.ts`, a `<name>-store.ts` or a file under a `store/` folder), nowhere else. The sandbox (the network's side,
 * with its own schema, migrated by db/'s runner) follows the stricter form of the rule: each feature's SQL in its
 * `store.ts` or `store/` folder. Benchmarks, scripts and tests are outside the rule.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const OUTSIDE_THE_RULE = new Set([
  'node_modules',
  'dist',
  'coverage',
  '.data',
  '.git',
  'bench',
  'scripts',
  'test',
  'db',
]);

/**
 * A string literal that opens with an SQL statement (lower case, as this repository writes it, or upper case; prose
 * starts with a capital), and `.query(` given a literal: what a file that runs SQL holds.
 */
const SQL_PATTERNS: RegExp[] = [
  new RegExp(
    '([\'"`])\\s*(' +
      [
        'select\\s',
        'insert\\s+into\\s',
        'update\\s+[a-z_][\\w.]*\\s+(as\\s+\\w+\\s+)?set\\s',
        'delete\\s+from\\s',
        'with\\s+(recursive\\s+)?[a-z_]\\w*\\s+as\\s*\\(',
        'create\\s+(temp(orary)?\\s+|unlogged\\s+|unique\\s+)?(table|index|view|sequence)\\s',
        'alter\\s+table\\s',
        'drop\\s+(table|index|view)\\s',
        'truncate\\s',
        'lock\\s+table\\s',
        'begin(\\s|[\'"`])',
        'commit[\'"`]',
        'rollback[\'"`]',
        'analyze\\s',
        'vacuum\\s',
      ].join('|') +
      ')',
  ),
  /(['"`])\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH|CREATE|ALTER TABLE|DROP|TRUNCATE|LOCK TABLE|BEGIN|COMMIT|ROLLBACK)\b/,
  /\.query\s*(<[^>]*>)?\s*\(\s*['"`]/,
];

export function holdsSql(text: string): boolean {
  return SQL_PATTERNS.some((p) => p.test(text));
}

/** Whether `file` (relative to the repository, with the platform's separator) may hold SQL. */
export function isStore(file: string): boolean {
  const parts = file.split(sep);
  const name = parts[parts.length - 1]!;
  const inStoreFolder = parts.slice(0, -1).includes('store');
  if (parts[0] === 'sandbox') return name === 'store.ts' || inStoreFolder;
  return name === 'store.ts' || name.endsWith('-store.ts') || inStoreFolder;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory())
      return dir === ROOT && OUTSIDE_THE_RULE.has(e.name) ? [] : e.name === 'node_modules' ? [] : sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('layout', () => {
  it('recognises SQL, and not a workflow query', () => {
    expect(holdsSql("await pool.query('update api_keys set revoked_at = now() where id = $1', [id]);")).toBe(true);
    expect(
      holdsSql('const { rows } = await client.query<Row>(`\n  select id from vasp_keys where vasp_did = $1`, [did]);'),
    ).toBe(true);
    expect(holdsSql("await client.query('begin isolation level repeatable read read only');")).toBe(true);
    expect(holdsSql('const sql = `insert into audit_log (actor) values ($1)`;')).toBe(true);
    expect(holdsSql('await tx.query(LOCK);')).toBe(false);
    expect(holdsSql('return handle.query(keyRotationStatusQuery);')).toBe(false);
    expect(holdsSql("throw new ConfigError(name, 'Set it to a URL', `Select one of ${names}`);")).toBe(false);
  });

  it("allows SQL in stores only, in the sandbox only in a feature's store.ts or store/", () => {
    expect(isStore(join('keys', 'store.ts'))).toBe(true);
    expect(isStore(join('keys', 'rotation-store.ts'))).toBe(true);
    expect(isStore(join('address-book', 'store', 'addresses.ts'))).toBe(true);
    expect(isStore(join('client', 'api', 'routes', 'keys.ts'))).toBe(false);
    expect(isStore(join('sandbox', 'transactions', 'store.ts'))).toBe(true);
    expect(isStore(join('sandbox', 'address-book', 'store', 'uploads.ts'))).toBe(true);
    expect(isStore(join('sandbox', 'nested-routing', 'router.ts'))).toBe(false);
    expect(isStore(join('sandbox', 'seed.ts'))).toBe(false);
    expect(isStore(join('sandbox', 'escrow', 'escrow-store.ts'))).toBe(false);
  });

  it("keeps SQL in db/ and the capabilities' stores", () => {
    const offending = sourceFiles(ROOT)
      .map((path) => relative(ROOT, path))
      .filter((file) => !isStore(file) && holdsSql(readFileSync(join(ROOT, file), 'utf8')));
    expect(offending).toEqual([]);
  });

  it('scans the source folders', () => {
    const files = sourceFiles(ROOT).map((path) => relative(ROOT, path));
    expect(files).toEqual(
      expect.arrayContaining([
        join('client', 'api', 'routes', 'keys.ts'),
        join('address-book', 'run.ts'),
        join('sandbox', 'seed.ts'),
        join('sandbox', 'nested-routing', 'router.ts'),
      ]),
    );
    expect(files.some((f) => f.startsWith(`test${sep}`) || f.startsWith(`db${sep}`))).toBe(false);
  });
});
