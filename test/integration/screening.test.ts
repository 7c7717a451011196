import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Pool } from 'pg';
import { createPool } from '../../db/pool';
import { loadedLists, screenAddress, screenName } from '../../screening/store';
import { loadSdnList } from '../../screening/load-sdn';
import { ValidationError } from '../../lib/errors';
import { testEnv } from '../harness/platform';

const sample = resolve(__dirname, '../../data/sanctions');
const LIST = `sample-${Date.now()}`;

describe('sanctions screening on Postgres (pg_trgm)', () => {
  let pool: Pool;
  beforeAll(async () => {
    pool = createPool(testEnv().databaseUrl, 'orchestrator');
    expect(
      await loadSdnList(pool, {
        list: LIST,
        sdnPath: join(sample, 'sdn-sample.csv'),
        altPath: join(sample, 'alt-sample.csv'),
      }),
    ).toEqual({
      list: LIST,
      entries: 5,
      aliases: 3,
      addresses: 4,
    });
  });
  afterAll(async () => pool?.end());

  const hits = async (name: string, threshold = 0.75) =>
    (await screenName(pool, name, threshold)).filter((h) => h.list === LIST);

  it.each([
    ['Ivan Petrov', 900001],
    ['PETROV Ivan Sergeyevich', 900001],
    ['Ivan Petrof', 900001],
    ['Maria Fernanda Silva', 900004],
    ['Kareem Rashidi', 900002],
    ['Northwind Mixing Services Ltd.', 900003],
    ['Dr. Omar Farooq Khan', 900005],
  ])(
    'finds %j on the list (entry %d), whatever the order, case, punctuation or small misspelling',
    async (name, entNum) => {
      const found = await hits(name);
      expect(found.map((h) => h.entNum)).toContain(entNum);
    },
  );

  it.each(['John Smith', 'Ivan', 'Aurora Exchange EU', 'Maria Gonzalez'])('does not flag %j', async (name) => {
    expect(await hits(name)).toEqual([]);
  });

  it('is tunable: a stricter threshold drops the misspelt match but keeps the exact one', async () => {
    expect(await hits('Ivan Petrof', 0.97)).toEqual([]);
    expect((await hits('Petrov, Ivan Sergeyevich', 0.97)).map((h) => h.entNum)).toEqual([900001]);
    expect((await hits('Ivan Petrof', 0.5)).length).toBeGreaterThan(0);
  });

  it('flags the digital-currency addresses named in the list, case-insensitively, with or without a tag', async () => {
    const mine = async (a: string) => (await screenAddress(pool, a)).filter((h) => h.list === LIST);
    expect(await mine('0X1111111111111111111111111111111111111111')).toEqual([
      {
        list: LIST,
        asset: 'ETH',
        address: '0x1111111111111111111111111111111111111111',
        entNum: 900001,
        category: 'sanctioned',
      },
    ]);
    expect((await mine('1FictionalSanctionedAddr111111111'))[0]).toMatchObject({ asset: 'BTC', entNum: 900001 });
    expect((await mine('0x3333333333333333333333333333333333333333:42'))[0]).toMatchObject({
      asset: 'USDT',
      entNum: 900003,
    });
    expect(await mine('0x4444444444444444444444444444444444444444')).toEqual([]);
  });

  it('refuses a malformed file and leaves the loaded list as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdn-'));
    const bad = join(dir, 'sdn.csv');
    writeFileSync(
      bad,
      '900010,"GOOD, Name","individual","[X]","-0- ","-0- ","-0- ","-0- ","-0- ","-0- ","-0- ","-0- "\nnot-a-number,"BAD",x\n',
    );
    const error = await loadSdnList(pool, { list: LIST, sdnPath: bad }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/^sdnFile: line 2: expected 12 columns/);
    expect((await loadedLists(pool)).find((l) => l.name === LIST)?.entries).toBe(5);
    expect((await hits('Ivan Petrov')).length).toBe(1);
  });
});

describe('the screening CLI', () => {
  const root = resolve(__dirname, '../..');
  const cli = (...args: string[]) =>
    spawnSync(
      process.execPath,
      [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'client/cli/main.ts'), 'screening', ...args],
      {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, DATABASE_URL: testEnv().databaseUrl, LOG_LEVEL: 'silent' },
        timeout: 60_000,
      },
    );

  it('loads a list from OFAC-format files and checks a name and an address against it', () => {
    const load = cli(
      'load-sdn',
      join(sample, 'sdn-sample.csv'),
      '--alt',
      join(sample, 'alt-sample.csv'),
      '--list',
      'cli-test',
    );
    expect(load.stdout).toBe('cli-test: 5 entries, 3 aliases, 4 digital-currency addresses\n');
    expect(cli('lists').stdout).toMatch(/^cli-test\t5 entries\tloaded /m);
    expect(cli('check', '--name', 'Kareem Rashidi').stdout).toContain('"entNum": 900002');
    expect(cli('check', '--address', '0x2222222222222222222222222222222222222222').stdout).toContain(
      '"entNum": 900003',
    );
    expect(cli('check', '--name', 'Nobody Inparticular').stdout).toBe('no hit\n');
    const bad = cli('load-sdn', join(sample, 'README.md'), '--list', 'cli-test');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^error: sdnFile: line 1: expected 12 columns/m);
  });
});
