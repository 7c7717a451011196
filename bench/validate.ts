/**
 * `npm run bench:validate` (issue 21): `POST /v1/transfers/validate`, which the withdrawal screen waits for, against an
 * authenticated route that does nothing (`GET /v1/me`), both at BENCH_RATE requests per second (default 50) in the
 * same run, interleaved (each route's requests half a period apart), for BENCH_SECONDS (default 30) after a warm-up.
 *
 * Set-up (the integration tests' harness): the sandbox over HTTP, PostgreSQL, the API with an operator API key. Prices
 * come from a price API the bench serves (PRICE_API_URL), cached for 10 minutes and warmed by the warm-up: the
 * "warm price cache" of the target. Each validate names the beneficiary VASP and a fresh destination address (a
 * customer's withdrawal), so each one asks the group's registry and the network's address book (the directory's
 * profile is cached as in production, TRANSFER_DIRECTORY_CACHE); the personal data is the names.
 *
 * Target: p99 of validate ≤ 2× the p99 of GET /v1/me, and under 50 ms.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createDidKeyRecord } from '../lib/crypto';
import { NetworkClient } from '../network/client';
import globalSetup from '../test/harness/global-setup';
import globalTeardown from '../test/harness/global-teardown';
import { groupSeed, startOrchestrator, startSandbox } from '../test/harness/platform';
import { spawnSandbox } from './topology';
import { quantile } from './stats';

const RATE = Number(process.env.BENCH_RATE ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const log = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const names = {
  originator: {
    originatorPersons: [
      {
        naturalPerson: {
          name: [
            { nameIdentifier: [{ primaryIdentifier: 'Doe', secondaryIdentifier: 'Jane', nameIdentifierType: 'LEGL' }] },
          ],
        },
      },
    ],
  },
  beneficiary: {
    beneficiaryPersons: [
      {
        naturalPerson: {
          name: [
            { nameIdentifier: [{ primaryIdentifier: 'Roe', secondaryIdentifier: 'Rick', nameIdentifierType: 'LEGL' }] },
          ],
        },
      },
    ],
  },
};

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  await globalSetup();
  const prices = createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ priceUSD: 1, at: new Date().toISOString() }));
  });
  await new Promise<void>((r) => prices.listen(0, '127.0.0.1', r));
  const group = groupSeed();
  // The network in a process of its own, as a remote one would be (BENCH_SANDBOX=inline: in the bench's process).
  const sandbox =
    process.env.BENCH_SANDBOX === 'inline' ? await startSandbox(group.seed) : await spawnSandbox(group.seed);
  const key = createDidKeyRecord();
  const orch = await startOrchestrator(sandbox.networkConfig(group.gatewayUser), {
    group: { gatewayDid: group.gateway, subsidiaryDids: [group.subA, group.subB] },
    agentKeys: JSON.stringify([{ vaspDID: group.subA, privateKeyHex: key.keys[0].privateKeyHex }]),
    jurisdictions: { subsidiaryCountries: { [group.subA]: 'US' } },
    pricing: {
      apiUrl: `http://127.0.0.1:${(prices.address() as AddressInfo).port}/price`,
      apiTimeoutMs: 2000,
      cacheMs: 10 * 60_000,
      maxAgeMs: 3_600_000,
    },
  });
  await new NetworkClient(sandbox.networkConfig(group.externalUser)).api
    .post('tf/vasps/update', {
      json: { did: group.external, fields: [{ fieldName: 'incorporationCountry', values: [{ value: 'CH' }] }] },
    })
    .json();
  const headers = orch.headers('operator', { 'content-type': 'application/json' });
  const validate = async () => {
    const r = await fetch(`${orch.apiUrl}/v1/transfers/validate`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        transactionAsset: 'USDC',
        transactionAmount: '2500000000',
        originatorVASPdid: group.subA,
        beneficiaryVASPdid: group.external,
        transactionBlockchainInfo: { destination: `0x${randomBytes(20).toString('hex')}` },
        ...names,
      }),
    });
    const body = (await r.json()) as { type?: string };
    if (r.status !== 200 || body.type !== 'BELOW_THRESHOLD')
      throw new Error(`validate: ${r.status} ${JSON.stringify(body)}`);
  };
  const me = async () => {
    const r = await fetch(`${orch.apiUrl}/v1/me`, { headers });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`GET /v1/me: ${r.status}`);
  };

  /** Both routes at `rate` per second for `seconds`, half a period apart; each request's latency in ms. */
  async function run(seconds: number) {
    const period = 1000 / RATE;
    const lat = { validate: [] as number[], me: [] as number[] };
    const pending: Promise<void>[] = [];
    const t0 = performance.now();
    const timed = (name: 'validate' | 'me', f: () => Promise<void>) => {
      const s = performance.now();
      pending.push(f().then(() => void lat[name].push(performance.now() - s)));
    };
    for (let i = 0; i < seconds * RATE; i++) {
      await sleep(t0 + i * period - performance.now());
      timed('validate', validate);
      await sleep(t0 + (i + 0.5) * period - performance.now());
      timed('me', me);
    }
    await Promise.all(pending);
    return lat;
  }

  try {
    log(
      `validate bench: ${RATE} requests/s per route for ${SECONDS} s after ${WARMUP_SECONDS} s of warm-up; ` +
        `${cpus().length} cores, load average ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
    );
    await run(WARMUP_SECONDS);
    const lat = await run(SECONDS);
    const row = (name: string, xs: number[]) =>
      `${name.padEnd(28)} n=${xs.length}  p50 ${quantile(xs, 0.5).toFixed(2)} ms  p99 ${quantile(xs, 0.99).toFixed(2)} ms  max ${Math.max(...xs).toFixed(2)} ms`;
    log(row('POST /v1/transfers/validate', lat.validate));
    log(row('GET /v1/me (baseline)', lat.me));
    const p99v = quantile(lat.validate, 0.99);
    const p99m = quantile(lat.me, 0.99);
    const ratio = p99v / p99m;
    log(
      `p99 ratio validate / me: ${ratio.toFixed(2)}× (target ≤ 2×: ${ratio <= 2 ? 'met' : 'NOT met'}); ` +
        `validate p99 ${p99v.toFixed(2)} ms (target < 50 ms: ${p99v < 50 ? 'met' : 'NOT met'})`,
    );
  } finally {
    await orch.close();
    await sandbox.close();
    await new Promise((r) => prices.close(r));
    await globalTeardown();
  }
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`${e.stack}\n`);
    process.exit(1);
  },
);
