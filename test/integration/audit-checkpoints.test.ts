import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { registerAuditCommands } from '../../client/cli/audit';
import { writeAuditCheckpoint } from '../../audit/checkpoint-store';
import { recordAuditEntry } from '../../audit/store';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { auditRowHash } from '../../audit/chain';
import { parseCheckpointKeys, type CheckpointKeyring } from '../../audit/checkpoint-signature';
import { runCli } from '../harness/cli';
import { ownDatabase } from '../harness/platform';

// JSON objects of the export, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const keyring = (id: string): CheckpointKeyring => parseCheckpointKeys(`${id}:${randomBytes(32).toString('base64')}`);

describe("signed checkpoints of the audit chains, and the export's trailer (issue 25, item 7c)", () => {
  const db = ownDatabase('checkpoints');
  const keys = keyring('k1');
  const dir = mkdtempSync(join(tmpdir(), 'tro-checkpoints-'));
  let pool: Pool;

  const audit = (checkpointKeys: CheckpointKeyring | undefined, ...args: string[]) =>
    runCli((p) => registerAuditCommands(p, { pool, checkpointKeys }), ['audit', ...args]);
  const fails = async (checkpointKeys: CheckpointKeyring | undefined, ...args: string[]) => {
    const e = await audit(checkpointKeys, ...args).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(e).toBeDefined();
    return e!.message;
  };
  /**
   * What someone with the database's superuser rights can do: switch the log's triggers off for the session and
   * change anything. Each change is undone by the test that made it.
   */
  const asDatabaseOwner = async (work: (q: (sql: string, params?: unknown[]) => Promise<Json[]>) => Promise<void>) => {
    const client = await pool.connect();
    try {
      await client.query('set session_replication_role = replica');
      await work(async (sql, params) => (await client.query(sql, params)).rows);
    } finally {
      await client.query('reset session_replication_role');
      client.release();
    }
  };
  const append = (action: string, n: number) =>
    recordAuditEntry(pool, { actor: 'system:test', action, subject: `s-${n}`, details: { n } });
  /** A chain's rows, every column, the time as exact text (a Date would drop the microseconds the hash covers). */
  const rowsOf = async (chain: string) =>
    (
      await pool.query(
        `select id::text as id, chain, seq::int as seq, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, actor, action, subject, details, prev_hash, hash
       from audit_log where chain = $1 order by seq`,
        [chain],
      )
    ).rows;

  beforeAll(async () => {
    await db.create();
    await migrate(db.url, 'orchestrator');
    pool = createPool(db.url, 'orchestrator');
  });
  afterAll(async () => {
    await pool?.end();
    await db.drop();
  });

  it('a log with rows and no checkpoint fails; once signed, verify reports each chain reaching the newest checkpoint', async () => {
    for (let i = 1; i <= 4; i++) await append('alpha.step', i);
    for (let i = 1; i <= 3; i++) await append('beta.step', i);
    expect(await fails(keys, 'verify')).toMatch(
      /^audit checkpoints missing in the database: the log has rows but no signed checkpoint/,
    );
    expect((await writeAuditCheckpoint(pool, keys))?.seq).toBe(1);
    // Unchanged heads and a young checkpoint: nothing new is written.
    expect(await writeAuditCheckpoint(pool, keys, { unlessUnchangedFor: 60_000 })).toBeUndefined();
    await append('alpha.step', 5);
    const second = await writeAuditCheckpoint(pool, keys, { unlessUnchangedFor: 60_000 });
    expect(second).toMatchObject({
      seq: 2,
      keyId: 'k1',
      heads: [
        { chain: 'alpha', seq: 5 },
        { chain: 'beta', seq: 3 },
      ],
    });
    // Rows appended after the newest checkpoint are fine.
    await append('beta.step', 4);
    const out = await audit(keys, 'verify');
    expect(out).toMatch(/^audit chain intact in the database: 9 rows, 2 chains$/m);
    expect(out).toMatch(
      /^checkpoints: 2 signed, each chain reaches the newest \(2 at \d{4}-\d{2}-\d{2}T[\d:.]+Z, 0 min old\)$/m,
    );
    // Without the keys the checkpoints cannot be checked, and verify says so.
    expect(await audit(undefined, 'verify')).toMatch(/^checkpoints not checked: no AUDIT_CHECKPOINT_KEYS/m);
  });

  it('finds a chain cut short at its end, rows and head rolled back together, which the chain alone cannot show', async () => {
    const beta = await rowsOf('beta');
    const [keep, ...cut] = [beta[1]!, beta[2]!, beta[3]!];
    await asDatabaseOwner(async (q) => {
      await q('delete from audit_log where id = any($1)', [cut.map((r) => r.id)]);
      await q(`update audit_chain_heads set seq = $1, hash = $2 where chain = 'beta'`, [keep.seq, keep.hash]);
    });
    // The chain and its head agree: without the checkpoints this passes.
    expect(await audit(undefined, 'verify')).toMatch(/^audit chain intact/m);
    expect(await fails(keys, 'verify')).toMatch(
      /^audit chain broken in the database at chain beta at seq 3: the chain ends at seq 2, shorter than checkpoint 2 \(.+\) signed seq 3 [0-9a-f]{64} \(rows deleted from its end\)$/,
    );
    await asDatabaseOwner(async (q) => {
      for (const r of cut) {
        await q(
          'insert into audit_log (id, chain, seq, at, actor, action, subject, details, prev_hash, hash) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
          [r.id, r.chain, r.seq, r.at, r.actor, r.action, r.subject, JSON.stringify(r.details), r.prev_hash, r.hash],
        );
      }
      await q(`update audit_chain_heads set seq = $1, hash = $2 where chain = 'beta'`, [beta[3]!.seq, beta[3]!.hash]);
    });
    expect(await audit(keys, 'verify')).toMatch(/^audit chain intact/m);
  });

  it('finds a chain deleted whole, and one rewritten from a row on with every later hash and the head recomputed', async () => {
    const beta = await rowsOf('beta');
    const head = (await pool.query(`select * from audit_chain_heads where chain = 'beta'`)).rows[0];
    await asDatabaseOwner(async (q) => {
      await q(`delete from audit_log where chain = 'beta'`);
      await q(`delete from audit_chain_heads where chain = 'beta'`);
    });
    expect(await audit(undefined, 'verify')).toMatch(/^audit chain intact in the database: 5 rows, 1 chains$/m);
    expect(await fails(keys, 'verify')).toMatch(
      /^audit chain broken in the database at chain beta at seq 1: the chain is missing: checkpoint 2 .* \(the whole chain was deleted\)$/,
    );
    await asDatabaseOwner(async (q) => {
      for (const r of beta) {
        await q(
          'insert into audit_log (id, chain, seq, at, actor, action, subject, details, prev_hash, hash) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
          [r.id, r.chain, r.seq, r.at, r.actor, r.action, r.subject, JSON.stringify(r.details), r.prev_hash, r.hash],
        );
      }
      await q('insert into audit_chain_heads (chain, seq, hash, updated_at) values ($1, $2, $3, $4)', [
        head.chain,
        head.seq,
        head.hash,
        head.updated_at,
      ]);
    });

    // Rewrite alpha from seq 2: a changed detail, every later row rehashed, the head moved to the new end.
    const alpha = await rowsOf('alpha');
    await asDatabaseOwner(async (q) => {
      let prev = alpha[0]!.hash as string;
      for (const r of alpha.slice(1)) {
        const details = r.seq === 2 ? { ...r.details, n: 'rewritten' } : r.details;
        const hash = auditRowHash({
          chain: r.chain,
          seq: r.seq,
          at: r.at,
          actor: r.actor,
          action: r.action,
          subject: r.subject,
          details,
          prevHash: prev,
        });
        await q('update audit_log set details = $2, prev_hash = $3, hash = $4 where id = $1', [
          r.id,
          JSON.stringify(details),
          prev,
          hash,
        ]);
        prev = hash;
      }
      await q(`update audit_chain_heads set hash = $1 where chain = 'alpha'`, [prev]);
    });
    expect(await audit(undefined, 'verify')).toMatch(/^audit chain intact/m);
    expect(await fails(keys, 'verify')).toMatch(
      /^audit chain broken in the database at chain alpha at seq 5: its row seq 5 is not the one checkpoint 2 .* signed seq 5 [0-9a-f]{64} \(the chain was rewritten\)$/,
    );
    await asDatabaseOwner(async (q) => {
      for (const r of alpha.slice(1))
        await q('update audit_log set details = $2, prev_hash = $3, hash = $4 where id = $1', [
          r.id,
          JSON.stringify(r.details),
          r.prev_hash,
          r.hash,
        ]);
      await q(`update audit_chain_heads set hash = $1 where chain = 'alpha'`, [alpha[alpha.length - 1]!.hash]);
    });
    expect(await audit(keys, 'verify')).toMatch(/^audit chain intact/m);
  });

  it('finds a checkpoint changed, one deleted between others, one signed with a key not configured; a stale newest one on request', async () => {
    await append('alpha.step', 6);
    await writeAuditCheckpoint(pool, keys);
    const second = (await pool.query('select * from audit_checkpoints where seq = 2')).rows[0];
    // A forged checkpoint for a shortened chain: without the key its signature cannot be right.
    await asDatabaseOwner((q) =>
      q(`update audit_checkpoints set heads = jsonb_set(heads, '{1,seq}', '2') where seq = 2`).then(() => undefined),
    );
    expect(await fails(keys, 'verify')).toBe(
      "audit checkpoints broken in the database: checkpoint 2's signature does not verify (it was changed, or written without the key)",
    );
    await asDatabaseOwner((q) => q('delete from audit_checkpoints where seq = 2').then(() => undefined));
    expect(await fails(keys, 'verify')).toBe(
      'audit checkpoints broken in the database: checkpoint 2 is missing before checkpoint 3 (deleted)',
    );
    await asDatabaseOwner((q) =>
      q('insert into audit_checkpoints (seq, at, heads, key_id, mac) values ($1, $2, $3, $4, $5)', [
        second.seq,
        second.at,
        JSON.stringify(second.heads),
        second.key_id,
        second.mac,
      ]).then(() => undefined),
    );
    expect(await audit(keys, 'verify')).toMatch(/^checkpoints: 3 signed/m);

    expect(await fails(keyring('other'), 'verify')).toBe(
      'audit checkpoints broken in the database: checkpoint 1 is signed with key "k1", which is not in AUDIT_CHECKPOINT_KEYS',
    );
    // A rotation keeps the old key for checking: a new signing key first, the old one after it.
    const rotated: CheckpointKeyring = {
      currentKeyId: 'k2',
      keys: new Map([
        ['k2', randomBytes(32)],
        ['k1', keys.keys.get('k1')!],
      ]),
    };
    await writeAuditCheckpoint(pool, rotated);
    expect(await audit(rotated, 'verify')).toMatch(/^checkpoints: 4 signed/m);

    await new Promise((r) => setTimeout(r, 20));
    expect(await fails(rotated, 'verify', '--max-checkpoint-age', '10ms')).toMatch(
      /^audit checkpoints stale in the database: the newest, 4 at .*, is \d+ min old/,
    );
    expect(await audit(rotated, 'verify', '--max-checkpoint-age', '1h')).toMatch(/^checkpoints: 4 signed/m);
  });

  it('refuses to change or delete a checkpoint while the triggers are on', async () => {
    for (const sql of [
      'update audit_checkpoints set mac = mac',
      'delete from audit_checkpoints',
      'truncate audit_checkpoints',
    ]) {
      await expect(pool.query(sql)).rejects.toThrow(/audit_checkpoints is append-only/);
    }
  });

  it('an export ends with a signed trailer: a file cut short, added to, or with its trailer rewritten fails offline', async () => {
    const file = join(dir, 'all.jsonl');
    const printed = await audit(keys, 'export', '--out', file);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    const trailer = JSON.parse(lines[lines.length - 1]!) as Json;
    const rows = lines.slice(0, -1).map((l) => JSON.parse(l) as Json);
    expect(printed).toBe(`exported ${rows.length} rows to ${file}\n`);
    const alphaEnd = rows.filter((r) => r.chain === 'alpha').pop()!;
    expect(trailer).toMatchObject({
      trailer: true,
      rows: rows.length,
      keyId: 'k1',
      mac: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(trailer.heads).toContainEqual({ chain: 'alpha', seq: alphaEnd.seq, hash: alphaEnd.hash });
    expect(await audit(keys, 'verify', '--file', file)).toMatch(
      /^trailer: row count and chain ends match, signature verified$/m,
    );
    expect(await audit(undefined, 'verify', '--file', file)).toMatch(/signature not checked/);

    const write = (name: string, content: string[]) => {
      const path = join(dir, name);
      writeFileSync(path, `${content.join('\n')}\n`);
      return path;
    };
    // The last row of a chain gone, the trailer kept: the chain alone still links, the trailer does not match.
    const lastAlpha = lines.findIndex((l) => JSON.parse(l).hash === alphaEnd.hash);
    const cut = write('cut.jsonl', [...lines.slice(0, lastAlpha), ...lines.slice(lastAlpha + 1)]);
    expect(await fails(keys, 'verify', '--file', cut)).toBe(
      `audit export ${cut} is not whole: the trailer counts ${rows.length} rows, the file holds ${rows.length - 1}`,
    );
    // No trailer at all: the end of the file was cut off.
    const noTrailer = write('no-trailer.jsonl', lines.slice(0, -2));
    expect(await fails(keys, 'verify', '--file', noTrailer)).toBe(
      `audit export ${noTrailer} is not whole: the file has no trailer line: it was cut short (or written before exports had one)`,
    );
    // A trailer rewritten to match the cut file: its signature no longer verifies.
    const forgedHeads = trailer.heads.map((h: Json) =>
      h.chain === 'alpha' ? { chain: 'alpha', seq: rows[lastAlpha - 1]!.seq, hash: rows[lastAlpha - 1]!.hash } : h,
    );
    const forged = write('forged.jsonl', [
      ...lines.slice(0, lastAlpha),
      ...lines.slice(lastAlpha + 1, -1),
      JSON.stringify({ ...trailer, rows: rows.length - 1, heads: forgedHeads }),
    ]);
    expect(await fails(keys, 'verify', '--file', forged)).toBe(
      `audit export ${forged} is not whole: the trailer's signature does not verify (the trailer was rewritten)`,
    );
    // A line after the trailer.
    const added = write('added.jsonl', [...lines, lines[0]!]);
    expect(await fails(keys, 'verify', '--file', added)).toMatch(/follows the trailer line/);
  });
});
