/**
 * npm run bench:incoming — incoming transfers at the gateway, on the real stack (Temporal dev server, PostgreSQL, the
 * sandbox over HTTP, the project's worker and API). In the same run:
 *   baseline:     the sandbox routes by itself (addresses in the subsidiary's address book at the network):
 *                 create → confirmed (ACK) at the network;
 *   orchestrator: the addresses are only in the group's registry, so the network leaves the message at the gateway and
 *                 the notification webhook starts the incoming-transfer workflow, which redirects and confirms:
 *                 first webhook received → confirmed at the network.
 * Transfers are sent at BENCH_RATE per second (default 100) for BENCH_SECONDS (default 10). Latencies come from the
 * servers' own timestamps (the network's action log, the webhook receipt), so polling adds no error.
 * Last, the Temporal floor at the same rate (bench/floor.ts): empty workflows of one local activity, started and awaited
 * through the same server — what this machine allows any workflow-based flow before the project's own work.
 * Target: p99 under 250 ms at 100 transfers/s.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { simulateTransfer } from '../sandbox/nested-routing/simulate-client';
import globalSetup from '../test/harness/global-setup';
import globalTeardown from '../test/harness/global-teardown';
import { createDidKeyRecord } from '../lib/crypto';
import { eventually, groupSeed, startOrchestrator, startSandbox, testEnv } from '../test/harness/platform';
import { describeFloor, runFloor } from './floor';
import { quantile } from './stats';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const RATE = Number(process.env.BENCH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ms = (n: number) => `${Math.round(n)} ms`;

async function main() {
  // The runtime's logger must be installed before the test environment creates the runtime.
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  await globalSetup();
  const g = groupSeed();
  const sb = await startSandbox(g.seed);
  const gatewayKey = createDidKeyRecord();
  const orch = await startOrchestrator(sb.networkConfig(g.gatewayUser), {
    group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
    agentKeys: JSON.stringify([{ vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex }]),
    incoming: { pollInterval: '30s' },
  });
  try {
    const token = await sb.token(g.gatewayUser);
    const sandbox = (method: string, path: string, body: unknown) =>
      fetch(`${sb.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<Json>);
    await sandbox('POST', '/tf/vasps/update', { did: g.gateway, fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }] });
    await fetch(`${sb.url}/sandbox/counterparties/${g.external}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
    const hook = await sandbox('POST', '/webhook', { vaspDID: g.gateway, url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}` });
    orch.transfers.config.webhookSecrets[g.gateway] = hook.secret as string;

    const total = RATE * SECONDS;
    const address = (scenario: number, i: number) => `0x${scenario}${String(i).padStart(39, '0')}`;
    // Baseline addresses live in the network's address book; the orchestrator's only in the group's registry.
    const baselineCsv = Array.from({ length: total }, (_, i) => ({ vaspDID: g.subA, asset: 'ETH', address: address(1, i), customerRef: `b${i}` }));
    for (let i = 0; i < total; i += 500) {
      await Promise.all(baselineCsv.slice(i, i + 500).map((e) => sandbox('POST', '/address/registerCustomer', e)));
    }
    for (let i = 0; i < total; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, total - i) }, (_, k) => ({ vaspDID: g.subB, asset: 'ETH', address: address(2, i + k), customerRef: `o${i + k}` }));
      const r = await fetch(`${orch.apiUrl}/v1/addresses`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ addresses: batch }) });
      if (!r.ok) throw new Error(`registry upsert failed: ${r.status} ${await r.text()}`);
    }

    const send = async (destination: string) => (await simulateTransfer(sb.url, { from: g.external, to: g.gateway, destination, amount: '1000' })).id;

    /** Sends `total` transfers at RATE per second and waits until the network has confirmed every one. */
    const run = async (scenario: number) => {
      const ids: Promise<string>[] = [];
      const started = Date.now();
      for (let i = 0; i < total; i++) {
        const due = started + (i * 1000) / RATE;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        ids.push(send(address(scenario, i)));
      }
      const sent = await Promise.all(ids);
      const sendSeconds = (Date.now() - started) / 1000;
      const confirmed = await eventually(async () => {
        const { rows } = await sb.pool.query<{ n: string }>(
          `select count(*) n from transactions where id = any($1::uuid[]) and status in ('ACK', 'ACCEPTED', 'DECLINED')`, [sent]);
        return Number(rows[0]!.n) === sent.length ? Date.now() : undefined;
      }, 600_000, 200);
      const { rows } = await sb.pool.query<{ id: string; body: { actions: { action: string; createdAt: string }[] } }>(
        'select id, body from transactions where id = any($1::uuid[])', [sent]);
      const at = (b: { actions: { action: string; createdAt: string }[] }, a: string) => Date.parse(b.actions.find((x) => x.action === a)!.createdAt);
      const webhooks = new Map((await orch.pool.query<{ transaction_id: string; first: Date }>(
        'select transaction_id, min(received_at) first from received_webhooks where transaction_id = any($1) group by transaction_id', [sent])).rows.map((r) => [r.transaction_id, r.first.getTime()]));
      const endToEnd = rows.map((r) => at(r.body, 'confirm') - at(r.body, 'create'));
      const fromWebhook = rows.filter((r) => webhooks.has(r.id)).map((r) => at(r.body, 'confirm') - webhooks.get(r.id)!);
      return { sent: sent.length, sendSeconds, throughput: sent.length / ((confirmed - started) / 1000), endToEnd, fromWebhook };
    };

    const rss = () => Math.round(process.memoryUsage().rss / 1e6);
    process.stdout.write(`incoming transfers: ${total} per scenario at ${RATE}/s (${SECONDS} s), 2-core machine\n`);
    const baseline = await run(1);
    const ours = await run(2);
    const line = (name: string, xs: number[]) => `${name.padEnd(44)} p50 ${ms(quantile(xs, 0.5)).padStart(8)}   p99 ${ms(quantile(xs, 0.99)).padStart(8)}   max ${ms(Math.max(...xs)).padStart(8)}`;
    process.stdout.write(`${line('baseline: sandbox auto-routing, create→ACK', baseline.endToEnd)}   ${baseline.throughput.toFixed(1)} transfers/s\n`);
    process.stdout.write(`${line('orchestrator: webhook received→confirmed', ours.fromWebhook)}   ${ours.throughput.toFixed(1)} transfers/s\n`);
    process.stdout.write(`${line('orchestrator: create→confirmed (incl. webhook)', ours.endToEnd)}\n`);
    process.stdout.write(`ratio p99 orchestrator (webhook→confirmed) / baseline: ${(quantile(ours.fromWebhook, 0.99) / quantile(baseline.endToEnd, 0.99)).toFixed(2)}×\n`);
    process.stdout.write(`target p99 < 250 ms at ${RATE}/s: ${quantile(ours.fromWebhook, 0.99) < 250 ? 'met' : 'NOT met'}; bench process RSS ${rss()} MB\n`);
    const floor = await runFloor({ address: testEnv().temporalAddress, keyring: testEnv().keyring, rate: RATE, seconds: SECONDS, eager: false });
    process.stdout.write(`temporal floor, same server and rate: ${describeFloor(floor)}\n`);
  } finally {
    await orch.close();
    await sb.close();
    await globalTeardown();
  }
}

main().then(() => process.exit(0), (e: Error) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
