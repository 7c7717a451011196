import { payloadsIn } from '../harness/history';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createPool } from '../../db/pool';
import { EncryptionCodec, ENCRYPTED_ENCODING } from '../../lib/temporal/codec';
import { retentionSweep } from '../../workflows';
import {
  eventually,
  groupSeed,
  startOrchestrator,
  startSandbox,
  testEnv,
  type RunningOrchestrator,
  type RunningSandbox,
} from '../harness/platform';

describe('platform: worker, API, sandbox, encrypted history', () => {
  const group = groupSeed();
  let sandbox: RunningSandbox;
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    sandbox = await startSandbox(group.seed);
    orch = await startOrchestrator(sandbox.networkConfig(group.gatewayUser));
  });
  afterAll(async () => {
    await orch?.close();
    await sandbox?.close();
  });

  it('runs the connectivity check through the real worker and stores no plaintext payload in history', async () => {
    const started = await fetch(`${orch.apiUrl}/v1/checks/connectivity`, {
      method: 'POST',
      headers: orch.headers('operator'),
    });
    expect(started.status).toBe(202);
    const { workflowId } = (await started.json()) as { workflowId: string };

    const done = await eventually(async () => {
      const r = await fetch(`${orch.apiUrl}/v1/checks/connectivity/${workflowId}`, { headers: orch.headers('viewer') });
      const body = (await r.json()) as { status: string; result?: { userDid: string; vasps: string[] } };
      return body.status === 'COMPLETED' ? body : undefined;
    });
    // The gateway's credentials act for the gateway and both subsidiaries, not for the external VASP.
    expect(done.result!.userDid).toBe(group.gatewayUser.did);
    expect(done.result!.vasps.sort()).toEqual([group.gateway, group.subA, group.subB].sort());

    // Read the history with a client that has NO codec: what the server stores.
    const raw = new Client({ connection: await Connection.connect({ address: testEnv().temporalAddress }) });
    try {
      const history = await raw.workflow.getHandle(workflowId).fetchHistory();
      const payloads = payloadsIn(history.events);
      expect(payloads.length).toBeGreaterThan(0);
      for (const p of payloads) {
        expect(Buffer.from(p.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
        expect(Buffer.from(p.metadata!['encryption-key-id']!).toString()).toBe(testEnv().keyring.currentKeyId);
      }
      const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
      expect(bytes.includes(Buffer.from(group.gatewayUser.did))).toBe(false);
      expect(bytes.includes(Buffer.from(group.subA))).toBe(false);

      // The UI's codec endpoint turns the stored result back into JSON.
      const completed = history.events!.find((e) => e.workflowExecutionCompletedEventAttributes)!;
      const stored = completed.workflowExecutionCompletedEventAttributes!.result!.payloads![0]!;
      const toJson = (p: temporal.api.common.v1.IPayload) => ({
        metadata: Object.fromEntries(
          Object.entries(p.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
        ),
        data: Buffer.from(p.data!).toString('base64'),
      });
      const decode = (headers: Record<string, string>) =>
        fetch(`${orch.apiUrl}/codec/decode`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            origin: 'http://localhost:8233',
            'x-namespace': 'default',
            ...headers,
          },
          body: JSON.stringify({ payloads: [toJson(stored)] }),
        });
      // Decoding shows what history holds: compliance or admin only, and the UI's browser can read the refusal.
      const anonymous = await decode({});
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
      expect((await decode(orch.headers('viewer'))).status).toBe(403);
      expect((await decode(orch.headers('operator'))).status).toBe(403);
      expect((await decode(orch.headers('admin'))).status).toBe(200);
      const decoded = await decode(orch.headers('compliance'));
      expect(decoded.status).toBe(200);
      expect(decoded.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
      const {
        payloads: [plain],
      } = (await decoded.json()) as { payloads: { data: string }[] };
      expect(JSON.parse(Buffer.from(plain!.data, 'base64').toString()).userDid).toBe(group.gatewayUser.did);

      // A payload under a key this process does not hold is refused with a clear 400, not a 500.
      const foreign = toJson(stored);
      foreign.metadata['encryption-key-id'] = Buffer.from('retired-key').toString('base64');
      const refused = await fetch(`${orch.apiUrl}/codec/decode`, {
        method: 'POST',
        headers: orch.headers('compliance', { 'content-type': 'application/json' }),
        body: JSON.stringify({ payloads: [foreign] }),
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /retired-key.*TEMPORAL_CODEC_KEYS/,
      );
    } finally {
      await raw.connection.close();
    }
  });

  it("the worker refuses a workflow started with plaintext input: no activity runs with it; the codec client's runs", async () => {
    // Anyone who reaches the Temporal server can start workflows; without the codec its input arrives in plaintext.
    const raw = new Client({ connection: await Connection.connect({ address: testEnv().temporalAddress }) });
    const input = { webhookDays: 3650, transferPiiDays: 3650 };
    const workflowId = `plaintext-retention-${Date.now()}`;
    try {
      const handle = await raw.workflow.start('retentionSweep', {
        taskQueue: orch.taskQueue,
        workflowId,
        args: [input],
      });
      const failed = await eventually(async () => {
        const events = (await handle.fetchHistory()).events ?? [];
        return events.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes ?? undefined;
      });
      // The refusal is in history, encrypted like every failure message the worker writes.
      const [attributes] = await new EncryptionCodec(testEnv().keyring).decode([failed.failure!.encodedAttributes!]);
      expect(JSON.parse(Buffer.from(attributes!.data!).toString()).message).toMatch(
        /refused a payload not encrypted by the project's codec.*json\/plain/,
      );
      // The workflow stays open on its failed task, retried by the server and refused each time; it schedules nothing.
      await new Promise((r) => setTimeout(r, 1500));
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.some((e) => e.activityTaskScheduledEventAttributes)).toBe(false);
      expect(
        events.some((e) => e.workflowExecutionCompletedEventAttributes || e.workflowExecutionFailedEventAttributes),
      ).toBe(false);
      await handle.terminate('test: plaintext input refused');
    } finally {
      await raw.connection.close();
    }
    // The same input through the project's client (the codec) runs the sweep.
    const result = await orch.client.workflow.execute(retentionSweep, {
      taskQueue: orch.taskQueue,
      workflowId: `${workflowId}-codec`,
      args: [input],
    });
    expect(result).toMatchObject({ webhooksDeleted: expect.any(Number), transferRequestsErased: expect.any(Number) });
  });

  it('reports health 200 with both dependencies up, 503 naming the database when it is down', async () => {
    const ok = await fetch(`${orch.apiUrl}/healthz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, temporal: { ok: true }, database: { ok: true } });

    const deadPool = createPool('postgres://postgres@127.0.0.1:1/none', 'orchestrator', {
      connectionTimeoutMillis: 500,
    });
    const down = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), { pool: deadPool });
    try {
      const r = await fetch(`${down.apiUrl}/healthz`);
      expect(r.status).toBe(503);
      // A fixed word per check: the driver's error would tell an unauthenticated caller hosts, ports and names.
      const body = (await r.json()) as Record<string, unknown>;
      expect(body).toEqual({ ok: false, temporal: { ok: true }, database: { ok: false, error: 'unreachable' } });
      expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|none/);
    } finally {
      await down.close();
      await deadPool.end();
    }
  });

  it('serves an OpenAPI document generated from the route schemas, and the docs page', async () => {
    type Operation = { security?: unknown; description?: string };
    const doc = (await (await fetch(`${orch.apiUrl}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, Operation>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/healthz', '/codec/decode', '/v1/checks/connectivity']),
    );
    // Each route shows whether it takes the bearer scheme, and which roles.
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/v1/checks/connectivity']!.post).toMatchObject({
      security: [{ bearerAuth: [] }],
      description: expect.stringMatching(/Roles: operator, admin\.$/),
    });
    expect(doc.paths['/codec/decode']!.post!.description).toMatch(/Roles: compliance, admin\.$/);
    expect(doc.paths['/healthz']!.get!.security).toEqual([]);
    expect((await fetch(`${orch.apiUrl}/docs`, { redirect: 'follow' })).status).toBe(200);
  });

  it('rejects a malformed codec request with a 400 naming the field', async () => {
    const r = await fetch(`${orch.apiUrl}/codec/decode`, {
      method: 'POST',
      headers: orch.headers('compliance', { 'content-type': 'application/json' }),
      body: JSON.stringify({ payloads: 'x' }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { field: string } }).error.field).toBe('payloads');
  });

  it("answers the codec's CORS preflight for the UI origin only, and no other route cross-origin", async () => {
    const preflight = (path: string, origin: string) =>
      fetch(`${orch.apiUrl}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,authorization-extras,content-type,x-namespace',
        },
      });
    const ui = await preflight('/codec/decode', 'http://localhost:8233');
    expect(ui.status).toBe(204);
    expect(ui.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    expect(ui.headers.get('access-control-allow-headers')).toMatch(/authorization-extras/);
    expect(
      (await preflight('/codec/decode', 'https://evil.example')).headers.get('access-control-allow-origin'),
    ).toBeNull();
    expect(
      (await preflight('/v1/transfers', 'http://localhost:8233')).headers.get('access-control-allow-origin'),
    ).toBeNull();
    const read = await fetch(`${orch.apiUrl}/v1/transfers`, {
      headers: orch.headers('viewer', { origin: 'http://localhost:8233' }),
    });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
  });
});
