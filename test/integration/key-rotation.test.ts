// Longer than 400 lines on purpose: every case shares one sandbox, orchestrator and Temporal run (beforeAll), and
// splitting the file would start them again for each part.
import { payloadsIn } from '../harness/history';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { runCli } from '../harness/cli';
import { registerKeyCommands } from '../../client/cli/keys';
import { ensureKeyRotationSchedules } from '../../client/key-rotation-schedules';
import {
  createDidKeyRecord,
  decryptPiiValue,
  encryptPiiValue,
  localDidKey,
  parseDidKeyRecord,
  piiRecipients,
} from '../../lib/crypto';
import { listKeys, LocalKeyWrapper, type KeyInfo } from '../../keys';
import { aesGcmOpen } from '../../lib/crypto/key-wrapper';
import { EncryptionCodec } from '../../lib/temporal/codec';
import { VaspDid } from '../../lib/temporal/search-attributes';
import { keyRotation } from '../../workflows';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { keyRotationStatusQuery } from '../../workflows/key-rotation.messages';
import type { Role } from '../../lib/principal';
import {
  eventually,
  groupSeed,
  randomDid,
  startOrchestrator,
  startSandbox,
  testEnv,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

type Json = Record<string, unknown>;

/** Opens a stored key the way the keystore does, from the table and the master key: the test's view of a secret. */
async function storedSeed(pool: Pool, keyId: string, masterKey: Buffer): Promise<Buffer> {
  const { rows } = await pool.query('select * from vasp_keys where id = $1', [keyId]);
  const row = rows[0];
  const context = `tro-keystore:v1|${row.id}|${row.vasp_did}|${row.did_key}`;
  const dataKey = await new LocalKeyWrapper(masterKey).unwrap(row.wrapped_data_key, row.wrapping_key_id, context);
  const seed = aesGcmOpen(dataKey, row.sealed_private_key, `seed|${context}`, 'test');
  expect(createDidKeyRecord(seed).did).toBe(row.did_key);
  return seed;
}

/** The spellings a private key could take in a byte string. */
function secretForms(seed: Buffer): Buffer[] {
  const record = createDidKeyRecord(seed);
  const hex = seed.toString('hex');
  return [
    seed,
    Buffer.from(hex),
    Buffer.from(hex.toUpperCase()),
    Buffer.from(record.keys[0].privateKeyHex),
    Buffer.from(seed.toString('base64')),
    Buffer.from(seed.toString('base64url')),
  ];
}

describe('key rotation: keystore, workflow, directory, API', () => {
  const group = groupSeed();
  const masterKey = randomBytes(32);
  const subAOriginal = createDidKeyRecord(randomBytes(32));
  const subBOriginal = createDidKeyRecord(randomBytes(32));
  const agentKeys = JSON.stringify([
    { vaspDID: group.subA, privateKeyHex: subAOriginal.keys[0].privateKeyHex },
    { vaspDID: group.subB, privateKeyHex: subBOriginal.keys[0].privateKeyHex },
  ]);
  const groupConfig = { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB] };
  let sb: RunningSandbox;
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
    orch = await startOrchestrator(sb.networkConfig(group.gatewayUser), {
      group: groupConfig,
      keystoreMasterKey: masterKey.toString('base64'),
      agentKeys,
    });
  });
  afterAll(async () => {
    await orch?.close();
    await sb?.close();
  });

  const api = async (method: string, path: string, body?: unknown, role: Role = 'admin') => {
    const r = await fetch(`${orch.apiUrl}${path}`, {
      method,
      headers: orch.headers(role, body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, headers: r.headers, body: (await r.json()) as Json };
  };
  const enc = encodeURIComponent;
  const published = async (vaspDid: string) => {
    const r = await fetch(`${sb.url}/tf/simple/vasps/${enc(vaspDid)}?fields=pii_didkey`);
    return ((await r.json()) as { pii_didkey: string | null }).pii_didkey;
  };
  const rotation = async (vaspDid: string) => (await api('GET', `/v1/vasps/${enc(vaspDid)}/keys/rotation`)).body;
  const finished = (vaspDid: string) =>
    eventually(
      async () => {
        const r = await rotation(vaspDid);
        return r.workflowStatus !== 'RUNNING' && r.step !== undefined ? r : undefined;
      },
      60_000,
      200,
    );
  const keysOf = (vaspDid: string) => listKeys(orch.pool, vaspDid);

  it('imports KEYS at start and serves GET /didkey/new without storing anything', async () => {
    const listed = await api('GET', `/v1/vasps/${enc(group.subA)}/keys`);
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toEqual([
      expect.objectContaining({ did: subAOriginal.did, state: 'active', source: 'imported' }),
    ]);
    expect(JSON.stringify(listed.body)).not.toMatch(/privateKeyHex/);

    const before = await orch.pool.query('select count(*)::int as n from vasp_keys');
    const created = await api('GET', '/didkey/new');
    expect(created.status).toBe(200);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const record = parseDidKeyRecord(created.body, 'didkey');
    expect(record).toEqual(created.body);
    expect(record.did).toMatch(/^did:key:z6Mk/);
    expect((await orch.pool.query('select count(*)::int as n from vasp_keys')).rows[0].n).toBe(before.rows[0].n);
    expect((await api('GET', '/didkey/new')).body.did).not.toBe(record.did);

    const doc = (await (await fetch(`${orch.apiUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/didkey/new',
        '/v1/vasps/{vaspDID}/keys',
        '/v1/vasps/{vaspDID}/keys/rotate',
        '/v1/vasps/{vaspDID}/keys/rotation',
        '/v1/vasps/{vaspDID}/keys/import',
        '/v1/vasps/{vaspDID}/keys/{keyId}/destroy',
      ]),
    );
  });

  it('rotates through the API: publishes the new pii_didkey, activates it, and still decrypts data sent to the old key', async () => {
    // Make the old key the published one, and have a counterparty encrypt to it.
    await fetch(`${sb.url}/tf/vasps/update`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await tokenFor(sb, group.gatewayUser)}` },
      body: JSON.stringify({
        did: group.subA,
        fields: [{ fieldName: 'pii_didkey', values: [{ value: subAOriginal.did }] }],
      }),
    });
    expect(await published(group.subA)).toBe(subAOriginal.did);
    const counterparty = localDidKey(createDidKeyRecord(randomBytes(32)));
    const oldData = encryptPiiValue('Alice Example', counterparty, piiRecipients(counterparty, [subAOriginal.did]));

    // Who asks is the caller the API authenticated, not a name in the body.
    const named = await api(
      'POST',
      `/v1/vasps/${enc(group.subA)}/keys/rotate`,
      { reason: 'suspected compromise', requestedBy: 'alice@ops' },
      'operator',
    );
    expect(named).toMatchObject({ status: 400, body: { error: { field: 'requestedBy' } } });
    const started = await api(
      'POST',
      `/v1/vasps/${enc(group.subA)}/keys/rotate`,
      { reason: 'suspected compromise' },
      'operator',
    );
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ workflowId: workflowIds.keyRotation(group.subA), vaspDID: group.subA });
    expect(started.body.step).not.toBe('verifying-vasp');
    const done = await finished(group.subA);
    // Who asked, by the key's stable id (its name is in the principal, for display).
    const operator = (await api('GET', '/v1/me', undefined, 'operator')).body.actor as string;
    expect(operator).toMatch(/^apikey:[0-9a-f-]{36}$/);
    expect(done).toMatchObject({
      workflowStatus: 'COMPLETED',
      step: 'completed',
      reason: 'suspected compromise',
      requestedBy: operator,
      previousDid: subAOriginal.did,
    });
    expect(done.status).toMatch(/^Rotated: did:key:z6Mk.* is active; did:key:.* is retired/);

    const keys = await keysOf(group.subA);
    const active = keys.find((k) => k.state === 'active')!;
    expect(active.did).toBe(done.newDid);
    expect(keys.find((k) => k.did === subAOriginal.did)!.state).toBe('retired');
    expect(await published(group.subA)).toBe(active.did);

    // Data encrypted to the old key is still readable; new data goes to the new key and is readable too.
    const keyring = (await orch.keystore.loadKeyring(group.subA))!;
    expect(decryptPiiValue(oldData, keyring).body).toBe('Alice Example');
    const newData = encryptPiiValue('Bob Example', counterparty, piiRecipients(counterparty, [active.did]));
    expect(decryptPiiValue(newData, keyring).body).toBe('Bob Example');
    expect((await orch.keystore.loadActiveKey(group.subA))!.did).toBe(active.did);

    // The reason is audited with who asked.
    const audit = await orch.pool.query<{ actor: string; action: string; details: Json }>(
      `select actor, action, details from audit_log where subject = $1 and action like 'key.%' order by id`,
      [group.subA],
    );
    const requested = audit.rows.find((r) => r.action === 'key.rotation.requested')!;
    const principal = {
      kind: 'api-key',
      name: 'test-operator',
      roles: ['operator'],
      credentialId: orch.apiKeys.operator.slice(0, 20),
    };
    expect(requested).toMatchObject({
      actor: operator,
      details: { reason: 'suspected compromise', workflowId: workflowIds.keyRotation(group.subA), principal },
    });
    expect(audit.rows.find((r) => r.action === 'key.activated')!).toMatchObject({
      actor: operator,
      details: { reason: 'suspected compromise', keyId: active.id, principal },
    });

    // The search attribute is set, so operators can filter the VASP's workflows in the UI.
    const description = await orch.client.workflow.getHandle(workflowIds.keyRotation(group.subA)).describe();
    expect(description.typedSearchAttributes.get(VaspDid)).toBe(group.subA);

    // The table holds no plaintext private key, neither of the imported key nor of the generated one.
    const rows = await orch.pool.query<{ t: string; w: Buffer; s: Buffer }>(
      'select t::text as t, wrapped_data_key as w, sealed_private_key as s from vasp_keys t where vasp_did = $1',
      [group.subA],
    );
    const tableBytes = Buffer.concat(rows.rows.flatMap((r) => [Buffer.from(r.t), r.w, r.s]));
    const newSeed = await storedSeed(orch.pool, active.id, masterKey);
    const oldSeed = Buffer.from(subAOriginal.keys[0].privateKeyHex.slice(0, 64), 'hex');
    for (const form of [...secretForms(newSeed), ...secretForms(oldSeed)])
      expect(tableBytes.includes(form)).toBe(false);

    // Workflow history: neither the stored bytes (read without the codec) nor the decoded payloads hold a private key.
    const raw = new Client({ connection: await Connection.connect({ address: testEnv().temporalAddress }) });
    try {
      const history = await raw.workflow.getHandle(workflowIds.keyRotation(group.subA)).fetchHistory();
      const stored = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
      const payloads = payloadsIn(history.events);
      expect(payloads.length).toBeGreaterThan(5);
      const decoded = await new EncryptionCodec(testEnv().keyring).decode(payloads as never);
      const plain = Buffer.concat(decoded.map((p) => Buffer.from(temporal.api.common.v1.Payload.encode(p).finish())));
      // The decoded history does hold the public did:key, which proves the search looks at real plaintext.
      expect(plain.includes(Buffer.from(active.did))).toBe(true);
      for (const form of [...secretForms(newSeed), ...secretForms(oldSeed)]) {
        expect(stored.includes(form)).toBe(false);
        expect(plain.includes(form)).toBe(false);
      }
    } finally {
      await raw.connection.close();
    }
  });

  it('refuses a second rotation of the same VASP while one runs (409), and finishes the first', async () => {
    // Hold the sandbox's profile writes, so the first rotation waits in its publishing step.
    const lock = await sb.pool.connect();
    await lock.query('begin');
    await lock.query('lock table vasp_field_values in exclusive mode');
    let released = false;
    try {
      const first = await api('POST', `/v1/vasps/${enc(group.subA)}/keys/rotate`, { reason: 'routine' });
      expect(first.status).toBe(202);
      await eventually(async () => ((await rotation(group.subA)).step === 'publishing' ? true : undefined));
      const second = await api('POST', `/v1/vasps/${enc(group.subA)}/keys/rotate`, { reason: 'again' });
      expect(second.status).toBe(409);
      expect(second.body.error).toMatchObject({
        type: 'ConflictError',
        field: 'vaspDID',
        workflowId: workflowIds.keyRotation(group.subA),
        message: expect.stringMatching(/a key rotation for .* is already running/),
      });
      await lock.query('commit');
      released = true;
      const done = await finished(group.subA);
      expect(done).toMatchObject({ workflowStatus: 'COMPLETED', reason: 'routine' });
      expect((await keysOf(group.subA)).filter((k) => k.state === 'active')).toHaveLength(1);
    } finally {
      if (!released) await lock.query('rollback');
      lock.release();
    }
  });

  it("leaves the old key active and the new one pending when publication is refused, and fails with the network's error", async () => {
    // Take trustframework.updateVASP (and manage) away from the orchestrator's user on the network.
    const { rows } = await sb.pool.query<{ permissions: string[] }>(
      'select permissions from user_roles where user_did = $1 and vasp_did = $2',
      [group.gatewayUser.did, group.gateway],
    );
    await sb.pool.query('update user_roles set permissions = $3 where user_did = $1 and vasp_did = $2', [
      group.gatewayUser.did,
      group.gateway,
      ['auth.customerToken'],
    ]);
    try {
      const started = await api('POST', `/v1/vasps/${enc(group.subB)}/keys/rotate`, { reason: 'routine' });
      expect(started.status).toBe(202);
      const done = await finished(group.subB);
      expect(done).toMatchObject({ workflowStatus: 'FAILED', step: 'failed', error: { type: 'ForbiddenError' } });
      expect((done.error as { message: string }).message).toMatch(
        /POST \/tf\/vasps\/update: network answered 403 UserDIDNotAdminforVASPError: .*trustframework\.updateVASP/,
      );
      expect(done.status).toMatch(
        /^Failed while publishing the new key as pii_didkey: POST .*\. The previous key stays active; the new key did:key:.* stays pending\.$/,
      );

      const keys = await keysOf(group.subB);
      expect(keys.find((k) => k.did === subBOriginal.did)!.state).toBe('active');
      expect(keys.find((k) => k.did === done.newDid)!.state).toBe('pending');

      const failure = await orch.client.workflow
        .getHandle(workflowIds.keyRotation(group.subB))
        .result()
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      const cause = (failure as WorkflowFailedError).cause as ApplicationFailure;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect(cause.type).toBe('ForbiddenError');
      expect(cause.message).toMatch(/network answered 403 UserDIDNotAdminforVASPError/);
      const audit = await orch.pool.query(
        `select details from audit_log where subject = $1 and action = 'key.rotation.failed'`,
        [group.subB],
      );
      expect(audit.rows[0].details).toMatchObject({ step: 'publishing', error: { type: 'ForbiddenError' } });
    } finally {
      await sb.pool.query('update user_roles set permissions = $3 where user_did = $1 and vasp_did = $2', [
        group.gatewayUser.did,
        group.gateway,
        rows[0]!.permissions,
      ]);
    }
  });

  it('gives up after a bounded wait when the directory never shows the published key, leaving the new key pending', async () => {
    // A directory that accepts the update but never shows it (this VASP only): drop its pii_didkey writes.
    const fn = `drop_pii_${randomBytes(6).toString('hex')}`;
    await sb.pool.query(`create function ${fn}() returns trigger language plpgsql as $$
      begin if new.vasp_did = '${group.subB}' and new.field_name = 'pii_didkey' then return null; end if; return new; end $$`);
    await sb.pool.query(
      `create trigger ${fn} before insert on vasp_field_values for each row execute function ${fn}()`,
    );
    try {
      const before = await keysOf(group.subB);
      const handle = await orch.client.workflow.start(keyRotation, {
        taskQueue: orch.taskQueue,
        workflowId: workflowIds.keyRotation(group.subB),
        args: [{ vaspDid: group.subB, reason: 'routine', requestedBy: 'test', publicationTimeoutMs: 2500 }],
      });
      const failure = await handle.result().catch((e: unknown) => e);
      expect(((failure as WorkflowFailedError).cause as ApplicationFailure).type).toBe('PublicationNotVisibleError');
      const state = await handle.query(keyRotationStatusQuery);
      expect(state).toMatchObject({ step: 'failed', error: { type: 'PublicationNotVisibleError' } });
      expect(state.publicationChecks).toBeGreaterThanOrEqual(2);
      expect(state.error!.message).toMatch(
        /the directory still shows .* after \d+ checks; the new key did:key:.* stays pending/,
      );
      const after = await keysOf(group.subB);
      expect(after).toHaveLength(before.length + 1);
      expect(after.find((k) => k.did === state.newDid)!.state).toBe('pending');
      expect(after.find((k) => k.did === subBOriginal.did)!.state).toBe('active');
    } finally {
      await sb.pool.query(`drop trigger ${fn} on vasp_field_values`);
      await sb.pool.query(`drop function ${fn}()`);
    }
  });

  it('answers a clear 4xx for a VASP outside the group, unknown to the network, or a malformed request, and changes nothing', async () => {
    const outsider = await api('POST', `/v1/vasps/${enc(group.external)}/keys/rotate`, { reason: 'routine' });
    expect(outsider.status).toBe(404);
    expect(outsider.body.error).toMatchObject({
      type: 'NotFoundError',
      field: 'vaspDID',
      message: expect.stringMatching(/not part of this system's group/),
    });
    expect((await api('GET', `/v1/vasps/${enc(group.external)}/keys`)).status).toBe(404);
    expect((await api('GET', `/v1/vasps/${enc(group.external)}/keys/rotation`)).status).toBe(404);

    // In the group, but unknown to the network: the workflow's directory check answers, synchronously.
    const ghost = randomDid();
    const ghostOrch = await startOrchestrator(sb.networkConfig(group.gatewayUser), {
      group: { gatewayDid: group.gateway, subsidiaryDids: [ghost] },
      keystoreMasterKey: masterKey.toString('base64'),
    });
    try {
      const r = await fetch(`${ghostOrch.apiUrl}/v1/vasps/${enc(ghost)}/keys/rotate`, {
        method: 'POST',
        headers: ghostOrch.headers('operator', { 'content-type': 'application/json' }),
        body: JSON.stringify({ reason: 'routine' }),
      });
      expect(r.status).toBe(404);
      const body = (await r.json()) as { error: Json };
      expect(body.error).toMatchObject({
        type: 'NotFoundError',
        field: 'vaspDID',
        message: expect.stringMatching(/is not in the network's directory .*404/),
      });
      expect(await listKeys(orch.pool, ghost)).toEqual([]);
    } finally {
      await ghostOrch.close();
    }

    const noReason = await api('POST', `/v1/vasps/${enc(group.subA)}/keys/rotate`, {});
    expect(noReason.status).toBe(400);
    expect(noReason.body.error).toMatchObject({ field: 'reason', rule: 'is required' });
    const badDid = await api('POST', `/v1/vasps/not-a-did/keys/rotate`, { reason: 'routine' });
    expect(badDid.status).toBe(400);
    expect((badDid.body.error as { field: string }).field).toMatch(/vaspDID/);
  });

  it('imports a key through the API, refusing bad key material with a 400 naming the field and changing nothing', async () => {
    const before = await keysOf(group.gateway);
    const good = createDidKeyRecord(randomBytes(32));
    const other = createDidKeyRecord(randomBytes(32));
    const path = `/v1/vasps/${enc(group.gateway)}/keys/import`;
    const cases: [string, Json, string, RegExp][] = [
      [
        'malformed did:key',
        { privateKeyHex: good.keys[0].privateKeyHex, did: 'did:key:z6Mk0OIl' },
        'did',
        /must be a did:key with an Ed25519 public key/,
      ],
      [
        'wrong key length',
        { privateKeyHex: good.keys[0].privateKeyHex.slice(0, 64) },
        'privateKeyHex',
        /must be 128 hex characters/,
      ],
      [
        'key/did mismatch',
        { privateKeyHex: good.keys[0].privateKeyHex, did: other.did },
        'did',
        /does not match the key in privateKeyHex/,
      ],
      [
        'spliced public half',
        { privateKeyHex: good.keys[0].privateKeyHex.slice(0, 64) + other.keys[0].publicKeyHex },
        'privateKeyHex',
        /public half does not match/,
      ],
      [
        'record whose key is not its did',
        { key: { ...good, did: other.did } },
        'key.keys[0].publicKeyHex',
        /does not match the key in did/,
      ],
      [
        'record with a short private key',
        { key: { ...good, keys: [{ ...good.keys[0], privateKeyHex: good.keys[0].privateKeyHex.slice(2) }] } },
        'key.keys[0].privateKeyHex',
        /128 hex/,
      ],
      ['both forms', { key: good, privateKeyHex: good.keys[0].privateKeyHex }, 'key', /either key .* or privateKeyHex/],
    ];
    for (const [name, body, field, rule] of cases) {
      const r = await api('POST', path, { reason: 'migrating the agent', ...body });
      expect([name, r.status]).toEqual([name, 400]);
      expect([name, (r.body.error as Json).field]).toEqual([name, field]);
      expect((r.body.error as { message: string }).message).toMatch(rule);
      expect(JSON.stringify(r.body)).not.toContain(good.keys[0].privateKeyHex.slice(0, 64));
    }
    const unknown = await api('POST', `/v1/vasps/${enc(randomDid())}/keys/import`, { reason: 'x-x-x', key: good });
    expect(unknown.status).toBe(404);
    expect(await keysOf(group.gateway)).toEqual(before);

    const imported = await api('POST', path, { reason: 'migrating the agent', key: good });
    expect(imported.status).toBe(201);
    expect(imported.body).toMatchObject({ outcome: 'imported-active', key: { did: good.did, state: 'active' } });
    expect(JSON.stringify(imported.body)).not.toMatch(/privateKeyHex/);
    const again = await api('POST', path, {
      reason: 'migrating the agent',
      privateKeyHex: good.keys[0].privateKeyHex,
      did: good.did,
    });
    expect(again).toMatchObject({ status: 200, body: { outcome: 'already-present' } });
    // The same key for another VASP of the group is a conflict.
    expect(
      (await api('POST', `/v1/vasps/${enc(group.subA)}/keys/import`, { reason: 'oops-oops', key: good })).status,
    ).toBe(409);
  });

  it('destroys a retired key only on request, never the active one', async () => {
    const keys = await keysOf(group.subA);
    const active = keys.find((k) => k.state === 'active')!;
    const retired = keys.find((k) => k.did === subAOriginal.did)!;
    const refused = await api('POST', `/v1/vasps/${enc(group.subA)}/keys/${active.id}/destroy`, { reason: 'test' });
    expect(refused.status).toBe(409);
    const destroyed = await api('POST', `/v1/vasps/${enc(group.subA)}/keys/${retired.id}/destroy`, {
      reason: 'no data left encrypted to it',
    });
    expect(destroyed).toMatchObject({ status: 200, body: { id: retired.id, state: 'destroyed' } });
    const { rows } = await orch.pool.query('select sealed_private_key, wrapped_data_key from vasp_keys where id = $1', [
      retired.id,
    ]);
    expect(rows[0]).toEqual({ sealed_private_key: null, wrapped_data_key: null });
    expect((await orch.keystore.loadKeyring(group.subA))!.dids).not.toContain(subAOriginal.did);
  });

  it('ensures one schedule per group VASP at API start; a scheduled run rotates the key', async () => {
    const config = {
      group: groupConfig,
      keyRotationPeriodMs: 3_600_000,
      temporal: { taskQueue: orch.taskQueue } as never,
    };
    expect(await ensureKeyRotationSchedules(orch.client, config)).toEqual({
      [group.gateway]: 'created',
      [group.subA]: 'created',
      [group.subB]: 'created',
    });
    expect(await ensureKeyRotationSchedules(orch.client, config)).toEqual({
      [group.gateway]: 'updated',
      [group.subA]: 'updated',
      [group.subB]: 'updated',
    });
    try {
      const handle = orch.client.schedule.getHandle(workflowIds.keyRotationSchedule(group.gateway));
      const described = await handle.describe();
      expect(described.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'scheduledKeyRotation',
        args: [{ vaspDid: group.gateway }],
      });
      expect(described.spec.intervals).toEqual([expect.objectContaining({ every: 3_600_000 })]);

      const before = (await keysOf(group.gateway)).find((k) => k.state === 'active')!;
      await handle.trigger();
      const rotated = await eventually(
        async () => {
          const active = (await keysOf(group.gateway)).find((k: KeyInfo) => k.state === 'active');
          return active && active.id !== before.id ? active : undefined;
        },
        60_000,
        200,
      );
      expect(await published(group.gateway)).toBe(rotated.did);
      // The key is active a moment before the workflow itself completes.
      expect(await finished(group.gateway)).toMatchObject({
        workflowStatus: 'COMPLETED',
        requestedBy: 'schedule',
        reason: 'scheduled rotation',
      });
    } finally {
      const off = await ensureKeyRotationSchedules(orch.client, { ...config, keyRotationPeriodMs: 0 });
      expect(off).toEqual({ [group.gateway]: 'deleted', [group.subA]: 'deleted', [group.subB]: 'deleted' });
    }
  });

  it('rotates, lists and imports keys from the CLI through the API', async () => {
    const run = (...args: string[]) =>
      runCli(registerKeyCommands, [...args, '--api', orch.apiUrl, '--token', orch.apiKeys.admin]);
    const before = (await keysOf(group.subA)).find((k) => k.state === 'active')!;
    const rotated = await run('keys', 'rotate', group.subA, '--reason', 'quarterly review', '--follow');
    expect(rotated).toMatch(/^started key-rotation-did:ethr:.*\nCOMPLETED: Rotated: did:key:z6Mk/);
    const listed = await run('keys', 'list', group.subA);
    const active = (await keysOf(group.subA)).find((k) => k.state === 'active')!;
    expect(active.id).not.toBe(before.id);
    expect(listed).toContain(`active    ${active.id} ${active.did}`);
    expect(listed).toContain(`retired   ${before.id} ${before.did}`);
    await expect(run('keys', 'rotate', group.external, '--reason', 'not ours')).rejects.toThrow(
      /404 VASP .* is not part of this system's group/,
    );

    // A record made by `keys create` imports as a decryption-only key when the VASP already has an active one.
    const file = join(mkdtempSync(join(tmpdir(), 'keys-')), 'key.json');
    const created = createDidKeyRecord(randomBytes(32));
    writeFileSync(file, JSON.stringify(created));
    const imported = await run('keys', 'import', group.subA, '--file', file, '--reason', 'old agent key');
    expect(imported).toMatch(new RegExp(`^imported-retired: [0-9a-f-]{36} ${created.did} \\(retired\\)`));
    expect(imported).not.toContain(created.keys[0].privateKeyHex.slice(0, 64));
    rmSync(file);
  });

  it('imports KEYS idempotently on every start, and refuses bad KEYS naming the entry', async () => {
    const before = [...(await keysOf(group.subA)), ...(await keysOf(group.subB))];
    const again = await startOrchestrator(sb.networkConfig(group.gatewayUser), {
      keystoreMasterKey: masterKey.toString('base64'),
      agentKeys,
    });
    await again.close();
    expect([...(await keysOf(group.subA)), ...(await keysOf(group.subB))]).toEqual(before);

    const bad = JSON.stringify([
      { vaspDID: group.subA, privateKeyHex: subAOriginal.keys[0].privateKeyHex },
      { vaspDID: group.subB, privateKeyHex: 'abcd' },
    ]);
    await expect(
      startOrchestrator(sb.networkConfig(group.gatewayUser), {
        keystoreMasterKey: masterKey.toString('base64'),
        agentKeys: bad,
      }),
    ).rejects.toThrow(/^KEYS: KEYS\[1\]\.privateKeyHex: must be 128 hex characters/);
  });
});

/** A bearer token of the network (sandbox) for the user, as the orchestrator's network client obtains it. */
async function tokenFor(sb: RunningSandbox, user: { clientId: string; clientSecret: string }): Promise<string> {
  const r = await fetch(`${sb.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: user.clientId,
      client_secret: user.clientSecret,
      grant_type: 'client_credentials',
      audience: sb.url,
    }),
  });
  return ((await r.json()) as { access_token: string }).access_token;
}
