import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client, type Pool } from 'pg';
import { registerAuditCommands } from '../../client/cli/audit';
import { recordAuditEntry } from '../../audit/store';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { runCli } from '../harness/cli';
import { ownDatabase } from '../harness/platform';

const MIGRATIONS = resolve(__dirname, '../../db/migrations/orchestrator');

describe('the audit log is append-only in the database: triggers and privileges (issue 25, item 7b)', () => {
  // A database of its own: a role is granted on it before the migration, and the tests try to change the log.
  const db = ownDatabase('appendonly');
  const appRole = `tro_app_${randomBytes(4).toString('hex')}`;
  let pool: Pool;

  const refused = async (sql: string, params: unknown[] = []) => {
    const e = await pool.query(sql, params).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(e).toBeDefined();
    return e!.message;
  };

  beforeAll(async () => {
    await db.create();
    // The schema as it was before the log became append-only, with an application role that holds every privilege.
    const before = readdirSync(MIGRATIONS).filter((f) => /^\d{4}_.*\.sql$/.test(f) && f < '0015').length;
    const { runner } = await import('node-pg-migrate');
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await runner({
        dbClient: client,
        dir: MIGRATIONS,
        migrationsTable: 'pgmigrations',
        schema: 'orchestrator',
        createSchema: true,
        direction: 'up',
        count: before,
        singleTransaction: true,
        checkOrder: true,
        log: () => undefined,
      });
      await client.query(`create role ${appRole} nologin`);
      await client.query(`grant usage on schema orchestrator to ${appRole}`);
      await client.query(`grant all on orchestrator.audit_log, orchestrator.audit_chain_heads to ${appRole}`);
      await client.query(`grant usage on all sequences in schema orchestrator to ${appRole}`);
    } finally {
      await client.end();
    }
    await migrate(db.url, 'orchestrator');
    pool = createPool(db.url, 'orchestrator');
    for (const [action, subject] of [
      ['key.created', 'did:ethr:0x1'],
      ['key.activated', 'did:ethr:0x1'],
      ['incoming.decline', 'tx-1'],
    ]) {
      await recordAuditEntry(pool, { actor: 'system:test', action: action!, subject: subject!, details: { n: 1 } });
    }
  });
  afterAll(async () => {
    await pool?.end();
    await db.drop();
    const server = new URL(db.url);
    server.pathname = '/postgres';
    const client = new Client({ connectionString: server.toString() });
    await client.connect();
    await client.query(`drop role if exists ${appRole}`).finally(() => client.end());
  });

  it('refuses UPDATE, DELETE and TRUNCATE of audit rows, to the owner and a superuser too', async () => {
    const { rows } = await pool.query(`select id::text as id from audit_log where chain = 'key' order by seq`);
    expect(await refused(`update audit_log set actor = 'someone else' where id = $1`, [rows[0].id])).toMatch(
      /audit_log is append-only: UPDATE refused/,
    );
    expect(await refused('delete from audit_log where id = $1', [rows[1].id])).toMatch(
      /audit_log is append-only: DELETE refused/,
    );
    expect(await refused('truncate audit_log')).toMatch(/audit_log is append-only: TRUNCATE refused/);
    // Nothing changed.
    expect((await pool.query(`select count(*)::int as n from audit_log where actor = 'system:test'`)).rows[0].n).toBe(
      3,
    );
  });

  it("lets a chain's head only move forward: not back, not to another hash at the same seq, never removed", async () => {
    const head = (await pool.query(`select seq, hash from audit_chain_heads where chain = 'key'`)).rows[0];
    expect(Number(head.seq)).toBe(2);
    const before = (await pool.query(`select hash from audit_log where chain = 'key' and seq = 1`)).rows[0].hash;
    expect(await refused(`update audit_chain_heads set seq = 1, hash = $1 where chain = 'key'`, [before])).toMatch(
      /may only move forward/,
    );
    expect(await refused(`update audit_chain_heads set hash = $1 where chain = 'key'`, ['f'.repeat(64)])).toMatch(
      /may only move forward/,
    );
    expect(await refused(`delete from audit_chain_heads where chain = 'key'`)).toMatch(
      /audit_chain_heads: DELETE refused/,
    );
    expect(await refused('truncate audit_chain_heads')).toMatch(/audit_chain_heads: TRUNCATE refused/);
  });

  it('still appends, and the chain verifies', async () => {
    await recordAuditEntry(pool, { actor: 'system:test', action: 'key.retired', subject: 'did:ethr:0x1', details: {} });
    expect((await pool.query(`select seq from audit_chain_heads where chain = 'key'`)).rows[0].seq).toBe('3');
    expect(await runCli((p) => registerAuditCommands(p, { pool }), ['audit', 'verify'])).toMatch(
      /^audit chain intact in the database: 4 rows, 2 chains$/m,
    );
  });

  it('revokes UPDATE, DELETE and TRUNCATE from every role that held them; an application role keeps SELECT and INSERT', async () => {
    const privileges = async (table: string) =>
      (
        await pool.query(
          `select distinct a.privilege_type from pg_class c cross join lateral aclexplode(c.relacl) a
        where c.oid = $1::regclass order by 1`,
          [`orchestrator.${table}`],
        )
      ).rows.map((r) => r.privilege_type);
    expect(await privileges('audit_log')).toEqual(expect.arrayContaining(['INSERT', 'SELECT']));
    for (const p of ['DELETE', 'TRUNCATE', 'UPDATE']) expect(await privileges('audit_log')).not.toContain(p);
    for (const p of ['DELETE', 'TRUNCATE']) expect(await privileges('audit_chain_heads')).not.toContain(p);
    const has = async (table: string, privilege: string) =>
      (await pool.query('select has_table_privilege($1, $2, $3) as ok', [appRole, `orchestrator.${table}`, privilege]))
        .rows[0].ok;
    expect(await has('audit_log', 'SELECT')).toBe(true);
    expect(await has('audit_log', 'INSERT')).toBe(true);
    for (const p of ['UPDATE', 'DELETE', 'TRUNCATE']) expect(await has('audit_log', p)).toBe(false);
    expect(await has('audit_chain_heads', 'UPDATE')).toBe(true);
    expect(await has('audit_chain_heads', 'DELETE')).toBe(false);

    // As that role, the database refuses before any trigger runs.
    const client = await pool.connect();
    try {
      await client.query(`set role ${appRole}`);
      const e = await client.query(`update audit_log set actor = 'x'`).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(e?.message).toMatch(/permission denied for table audit_log/);
    } finally {
      await client.query('reset role');
      client.release();
    }
  });
});
