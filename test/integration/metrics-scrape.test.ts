/**
 * The Prometheus metrics of the API and a worker as deployed: each its own process (client/main.ts, workers/main.ts,
 * as npm start runs them) with /metrics on a free port, against the sandbox over HTTP. One outgoing and one incoming
 * transfer go through the API; then both /metrics are scraped over HTTP and the counters must have moved by exactly
 * what happened:
 * - transfers by direction, subsidiary and status, and automatic decisions, in the worker (whose activities write the
 *   projection), by the statuses each transfer entered, and nothing of them in the API;
 * - network calls by route: the API's and the worker's together equal, route by route, the requests a counting proxy
 *   in front of the sandbox forwarded;
 * - webhooks: the API counted as many as the sandbox delivered to it.
 * Both processes also export their traces to a collector of the test's (OTEL_EXPORTER_OTLP_ENDPOINT): the outgoing
 * transfer is one trace from the API's request to the worker's network calls, and the worker's calls land as events
 * on the span of the activity that made them, found again after the activity's awaits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Pool } from 'pg';
import { createDidKeyRecord } from '../../lib/crypto';
import { routeLabel } from '../../lib/metrics/registry';
import { createPool } from '../../db/pool';
import { createApiKey } from '../../client/api/auth/api-keys';
import { systemPrincipal } from '../../lib/principal';
import { simulateTransfer } from '../../sandbox/nested-routing/simulate-client';
import { bearerCall } from '../harness/http';
import { attributeOf, startOtlpCollector, type OtlpCollector } from '../harness/otlp-collector';
import { eventually, groupSeed, startSandbox, stopChild, testEnv, type RunningSandbox } from '../harness/platform';

jest.setTimeout(300_000);

const ROOT = resolve(__dirname, '../..');
const evm = () => `0x${randomBytes(20).toString('hex')}`;
const freePort = () =>
  new Promise<number>((ok) => {
    const s = createNetServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => ok(port));
    });
  });

type Samples = Map<string, number>;

/** Prometheus' text format as `name{labels}` → value (counters and histograms' series alike). */
function parse(text: string): Samples {
  const out: Samples = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/** By how much each series of `name` moved between two scrapes, keyed by the labels named (the rest summed). */
function moved(before: Samples, after: Samples, name: string, by: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [series, value] of after) {
    const m = /^([^{]+)(?:\{(.*)\})?$/.exec(series);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]),
    );
    const delta = value - (before.get(series) ?? 0);
    if (delta === 0) continue;
    const key = by.map((l) => labels[l] ?? '').join(' ');
    out[key] = (out[key] ?? 0) + delta;
  }
  return out;
}

describe('/metrics of the API and a worker process after real transfers through the API (issue 24)', () => {
  const g = groupSeed();
  const gatewayKey = createDidKeyRecord();
  const subAKey = createDidKeyRecord();
  let sb: RunningSandbox;
  let pool: Pool;
  let proxy: Server;
  /** Requests the proxy forwarded to the sandbox's network API, by the metrics' route label. */
  const forwarded: Record<string, number> = {};
  const children: { api?: ChildProcess; worker?: ChildProcess } = {};
  const output = { api: '', worker: '' };
  let apiUrl: string;
  let apiMetrics: string;
  let workerMetrics: string;
  let operator: string;
  /** Both processes export their spans here. */
  let collector: OtlpCollector;
  /** The transfers the first test made: the outgoing one's workflow id, the incoming one's. */
  const made: { outgoing?: string; incoming?: string } = {};

  /** The port a process logged for its /metrics (`... metrics at http://127.0.0.1:<port>/metrics`). */
  const metricsPort = (log: string, prefix: string) =>
    new RegExp(`"msg":"${prefix}metrics at http://127\\.0\\.0\\.1:(\\d+)/metrics"`).exec(log)?.[1];

  beforeAll(async () => {
    collector = await startOtlpCollector();
    sb = await startSandbox(g.seed);
    pool = createPool(testEnv().databaseUrl, 'orchestrator');
    // The network as the processes see it: the sandbox behind a proxy that counts what reaches it.
    proxy = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (!path.startsWith('/oauth/')) {
        // As the processes name a call: the DID decoded, the personal-data service's base as {pii}.
        const route = routeLabel(`${req.method} ${decodeURIComponent(path).replace(/^\/pii\//, '{pii}/')}`);
        forwarded[route] = (forwarded[route] ?? 0) + 1;
      }
      const target = new URL(sb.url);
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
    const network = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

    const gwToken = await sb.token(g.gatewayUser);
    await bearerCall(sb.url, gwToken, 'POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    await sb.simulateCounterparty(g.external);
    const apiPort = await freePort();
    apiUrl = `http://127.0.0.1:${apiPort}`;
    const hook = await bearerCall(sb.url, gwToken, 'POST', '/webhook', {
      vaspDID: g.gateway,
      url: `${apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
    });
    const creds = sb.networkConfig(g.gatewayUser);
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LOG_LEVEL: 'info',
      DATABASE_URL: testEnv().databaseUrl,
      TEMPORAL_ADDRESS: testEnv().temporalAddress,
      TEMPORAL_TASK_QUEUE: `metrics-scrape-${randomUUID()}`,
      TEMPORAL_CODEC_KEYS: process.env.TEST_CODEC_KEYS,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'metrics-scrape-')),
      KEYSTORE_MASTER_KEY: randomBytes(32).toString('base64'),
      KEYS: JSON.stringify([
        { vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex },
        { vaspDID: g.subA, privateKeyHex: subAKey.keys[0].privateKeyHex },
      ]),
      CLIENT_ID: creds.clientId,
      CLIENT_SECRET: creds.clientSecret,
      AUTH_URL: sb.url,
      AUDIENCE: sb.url,
      AUDIENCE_PII: `${sb.url}/pii`,
      BASE_URL: network,
      BASEURL_PII: `${network}/pii`,
      GATEWAY_VASP_DID: g.gateway,
      SUBSIDIARY_VASP_DIDS: [g.subA, g.subB].join(','),
      NOTIFICATION_WEBHOOK_SECRET: hook.body.secret as string,
      // /metrics on free ports (the defaults are one per machine); nothing scheduled behind the test's back.
      METRICS_PORT: '0',
      WORKER_METRICS_PORT: '0',
      TEMPORAL_SDK_METRICS_PORT: 'off',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      KEY_ROTATION_PERIOD: 'off',
      ADDRESS_BOOK_CRON: 'off',
      RETENTION_CRON: 'off',
      INCOMING_SWEEP_INTERVAL: 'off',
    };
    const start = (name: 'api' | 'worker', script: string, extra: Record<string, string> = {}) => {
      const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, script)], {
        env: { ...env, ...extra },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (d) => (output[name] += d));
      child.stderr!.on('data', (d) => (output[name] += d));
      children[name] = child;
    };
    start('worker', 'workers/main.ts');
    start('api', 'client/main.ts', { PORT: String(apiPort) });
    const ports = await eventually(
      async () => {
        for (const [name, child] of Object.entries(children))
          if (child.exitCode !== null) throw new Error(`the ${name} exited:\n${output[name as 'api' | 'worker']}`);
        const api = metricsPort(output.api, '');
        const worker = metricsPort(output.worker, 'worker ');
        const healthy = await fetch(`${apiUrl}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        return api && worker && healthy && /worker polling task queue/.test(output.worker)
          ? { api, worker }
          : undefined;
      },
      240_000,
      500,
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\nAPI:\n${output.api}\nworker:\n${output.worker}`);
    });
    apiMetrics = `http://127.0.0.1:${ports.api}/metrics`;
    workerMetrics = `http://127.0.0.1:${ports.worker}/metrics`;
    operator = (await createApiKey(pool, { name: 'metrics-scrape', role: 'admin' }, systemPrincipal('test'))).key;
  }, 300_000);
  afterAll(async () => {
    await stopChild(children.api);
    await stopChild(children.worker);
    await new Promise((ok) => proxy?.close(ok));
    await collector?.close();
    await pool?.end();
    await sb?.close();
  });

  const call = (method: string, path: string, body?: unknown) => bearerCall(apiUrl, operator, method, path, body);
  const scrape = async () =>
    Promise.all([apiMetrics, workerMetrics].map(async (u) => parse(await (await fetch(u)).text())));

  it('counts the transfers, decisions, network calls and webhooks of one outgoing and one incoming transfer exactly', async () => {
    const [api0, worker0] = await scrape();
    const requests0 = { ...forwarded };

    // Outgoing: the first subsidiary to the sandbox's simulated counterparty, which accepts.
    const ivms = JSON.parse(readFileSync(resolve(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8'));
    const id = randomUUID();
    const sent = await fetch(`${apiUrl}/v1/transfers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json', 'idempotency-key': id },
      body: JSON.stringify({
        transactionAsset: 'ETH',
        transactionAmount: '1000000000000000000',
        originatorVASPdid: g.subA,
        beneficiaryVASPdid: g.external,
        transactionBlockchainInfo: { destination: evm() },
        originator: ivms.originator,
        beneficiary: ivms.beneficiary,
      }),
    });
    expect(sent.status).toBe(202);
    const outgoing = await eventually(async () => {
      const v = (await call('GET', `/v1/transfers/list/outgoing-${id}`)).body;
      return v.final ? v : undefined;
    }, 120_000);

    // Incoming: the counterparty pays a customer of the first subsidiary; the notification webhook starts it.
    const address = evm();
    expect(
      (
        await call('PUT', '/v1/addresses', {
          addresses: [{ vaspDID: g.subA, asset: 'ETH', address, customerRef: `c-${address.slice(-6)}` }],
        })
      ).status,
    ).toBe(200);
    const { id: txId } = await simulateTransfer(sb, { from: g.external, to: g.gateway, destination: address });
    const incoming = await eventually(async () => {
      const v = (await call('GET', `/v1/transfers/list/incoming-${txId}`)).body;
      return v.final ? v : undefined;
    }, 120_000);
    expect([outgoing.status, incoming.status]).toEqual(['ACCEPTED', 'ACCEPTED']);
    Object.assign(made, { outgoing: `outgoing-${id}`, incoming: `incoming-${txId}` });

    // Quiet again: every webhook delivered, and each request the proxy forwarded counted by one of the processes.
    const deliveries = async () =>
      (
        (await (
          await fetch(`${sb.url}/sandbox/webhooks/deliveries?vaspDID=${encodeURIComponent(g.gateway)}`, {
            headers: { authorization: `Bearer ${sb.testToken}` },
          })
        ).json()) as { deliveries: { state: string; attempts: number }[] }
      ).deliveries;
    let last = '';
    const settled = await eventually(
      async () => {
        const ds = await deliveries();
        if (ds.some((d) => d.state !== 'delivered')) {
          last = `deliveries ${JSON.stringify(ds)}`;
          return undefined;
        }
        const [api1, worker1] = await scrape();
        const counted = moved(api0!, api1!, 'travel_rule_network_calls_total', ['route']);
        for (const [route, n] of Object.entries(
          moved(worker0!, worker1!, 'travel_rule_network_calls_total', ['route']),
        ))
          counted[route] = (counted[route] ?? 0) + n;
        const requests: Record<string, number> = {};
        for (const [route, n] of Object.entries(forwarded))
          if (n - (requests0[route] ?? 0) > 0) requests[route] = n - (requests0[route] ?? 0);
        last = `counted ${JSON.stringify(counted)}, forwarded ${JSON.stringify(requests)}, deliveries ${JSON.stringify(ds)}`;
        return same(counted, requests) ? { api1: api1!, worker1: worker1!, counted, requests, ds } : undefined;
      },
      60_000,
      500,
    ).catch(async (e: unknown) => {
      throw new Error(
        `${(e as Error).message}: the network calls counted never matched the requests forwarded: ${last}`,
      );
    });
    const { api1, worker1, counted, requests, ds } = settled;

    // Network calls: route by route, as many as reached the network, and the transfers' own among them.
    expect(counted).toEqual(requests);
    expect(counted['POST /tx/create']).toBe(1);
    expect(Object.keys(counted).every((r) => !r.includes(g.external))).toBe(true);

    // Transfers by direction, subsidiary and status, each status entered once: the API wrote the outgoing transfer's
    // first row when it took the request, the worker's activities every later one.
    const transfers = (s0: Samples, s1: Samples) =>
      moved(s0, s1, 'travel_rule_transfers_total', ['direction', 'subsidiary', 'status']);
    expect(transfers(api0!, api1)).toEqual({ [`outgoing ${g.subA} RECEIVED`]: 1 });
    // The worker: the outgoing one SENT and ACCEPTED, and ACK between them when its workflow saw the counterparty's ACK
    // before the acceptance (as the answers fall); the incoming one received at the gateway (no subsidiary yet), then
    // accepted for the first subsidiary. Its confirmation answered ACK at once, so no list entry said ACK
    // (incoming-lean-views writes one only when the transfer waits for it). Each status entered exactly once.
    const inWorker = transfers(worker0!, worker1);
    const ack = `outgoing ${g.subA} ACK`;
    expect(inWorker).toEqual({
      [`outgoing ${g.subA} SENT`]: 1,
      ...(inWorker[ack] !== undefined ? { [ack]: 1 } : {}),
      [`outgoing ${g.subA} ACCEPTED`]: 1,
      'incoming none SENT': 1,
      [`incoming ${g.subA} ACCEPTED`]: 1,
    });

    // Decisions without a person: the policy's on the outgoing one, screening's approval of the incoming one.
    const decisions = moved(worker0!, worker1, 'travel_rule_automatic_decisions_total', ['direction', 'action']);
    const { rows } = await pool.query<{ direction: string; decidedBy: string | null; decisionAction: string | null }>(
      `select direction, decided_by as "decidedBy", decision_action as "decisionAction" from transfer_view
        where workflow_id = any($1::text[])`,
      [[`outgoing-${id}`, `incoming-${txId}`]],
    );
    expect(decisions).toEqual(expectedDecisions(...rows));
    expect(Object.keys(decisions).length).toBeGreaterThan(0);
    // One answer time observed: the counterparty's answer to the outgoing transfer.
    expect(moved(worker0!, worker1, 'travel_rule_counterparty_answer_seconds_count', ['subsidiary'])).toEqual({
      [g.subA]: 1,
    });

    // Webhooks: every attempt the sandbox made reached the API and was counted there, by outcome.
    const webhooks = moved(api0!, api1, 'travel_rule_webhooks_total', ['outcome']);
    const attempts = ds.reduce((n, d) => n + d.attempts, 0);
    expect(Object.values(webhooks).reduce((a, b) => a + b, 0)).toBe(attempts);
    expect(attempts).toBeGreaterThan(0);
    // No counterparty DID in any label of either process.
    for (const s of [api1, worker1]) expect([...s.keys()].some((k) => k.includes(g.external))).toBe(false);
  });

  it("exports each transfer's trace from both processes, the worker's network calls on their activities' spans", async () => {
    const { outgoing, incoming } = made;
    if (!outgoing || !incoming) throw new Error('the first test made no transfers');
    const api = 'travel-rule-orchestrator-api';
    const worker = 'travel-rule-orchestrator-worker';
    // The processes export in batches (every 5 s): wait until both workflows' spans and their activities' are in.
    const spans = await eventually(
      async () => {
        const all = collector.spans();
        const workflows = all.filter((s) => s.name.startsWith('RunWorkflow:'));
        const done = [outgoing, incoming].every((id) =>
          workflows.some((s) => attributeOf(s.attributes, 'workflowId') === id),
        );
        return done ? all : undefined;
      },
      30_000,
      500,
    );
    const runOf = (workflowId: string) =>
      spans.find((s) => s.name.startsWith('RunWorkflow:') && attributeOf(s.attributes, 'workflowId') === workflowId);
    const runActivities = (workflowId: string) =>
      spans.filter(
        (s) => s.name.startsWith('RunActivity:') && attributeOf(s.attributes, 'temporalWorkflowId') === workflowId,
      );
    const eventsOf = (s: { events?: { name: string }[] } | undefined) => (s?.events ?? []).map((e) => e.name);

    // Outgoing: POST /v1/transfers (the API) → StartWorkflow (the API's Client) → RunWorkflow → RunActivity (the
    // worker), one trace, and the activity that sent the transfer carries its network calls as events.
    const run = runOf(outgoing)!;
    const start = spans.find((s) => s.spanId === run.parentSpanId);
    const request = spans.find((s) => s.spanId === start?.parentSpanId);
    expect([request?.service, request?.name, start?.service, start?.name, run.service]).toEqual([
      api,
      'POST /v1/transfers',
      api,
      'StartWorkflow:outgoingTransfer',
      worker,
    ]);
    const sent = runActivities(outgoing);
    expect(sent.length).toBeGreaterThan(0);
    for (const a of sent) expect([a.service, a.traceId, a.parentSpanId]).toEqual([worker, run.traceId, run.spanId]);
    expect(eventsOf(sent.find((a) => a.name === 'RunActivity:sendOutgoingTransfer'))).toEqual(
      expect.arrayContaining(['network POST {pii}/put', 'network POST /tx/create']),
    );

    // Incoming: the webhook's request (the API) → SignalWithStart → RunWorkflow → each step's RunActivity (the
    // worker), and each step's network calls on its own span, made after the step's first awaits.
    const received = runOf(incoming)!;
    const signalled = spans.find((s) => s.spanId === received.parentSpanId);
    const webhook = spans.find((s) => s.spanId === signalled?.parentSpanId);
    expect([webhook?.service, webhook?.name, signalled?.name, received.service]).toEqual([
      api,
      'POST /webhooks/notification/:endpoint',
      'SignalWithStartWorkflow:incomingTransfer',
      worker,
    ]);
    const steps = runActivities(incoming);
    for (const a of steps) expect([a.traceId, a.parentSpanId]).toEqual([received.traceId, received.spanId]);
    const callsOf = (step: string) => steps.filter((a) => a.name === `RunActivity:${step}`).flatMap(eventsOf);
    expect(callsOf('getIncomingTransaction')).toContain('network GET /tx/info');
    expect(callsOf('redirectIncomingTransaction')).toContain('network POST /tx/redirect');
    expect(callsOf('confirmIncomingTransaction')).toContain('network POST /tx/confirm');
    expect(callsOf('screenIncomingTransfer')).toContain('network POST {pii}/get');
    expect(callsOf('acceptIncomingTransaction')).toContain('network POST /tx/accept');
    // Steps that only write here make no network call, and so carry no event.
    expect(callsOf('recordTransferView')).toEqual([]);
    // No network call made its own span: each is an event of the span it was made in.
    expect(spans.filter((s) => s.name.startsWith('network ') || s.name.startsWith('HTTP '))).toEqual([]);
  });
});

const same = (a: Record<string, number>, b: Record<string, number>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/** The automatic decisions the transfers' projection rows say were taken without a person. */
function expectedDecisions(
  ...rows: { direction: string; decidedBy?: string | null; decisionAction?: string | null }[]
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) {
    if (r.decidedBy !== 'system') continue;
    const key = `${r.direction} ${r.decisionAction ?? 'unknown'}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}
