/**
 * `npm run bench:console-api` (issue #13): the console's transfer list with 1,000,000 transfers in the projection,
 * measured over HTTP against the real internal API (buildApi, the same routes and schemas `npm start` serves) on a
 * fresh database of the local PostgreSQL server. Several filter mixes, each request with a different value drawn from
 * the data, one request at a time (the console's own pattern: a person paging), after a warm-up. Target: p99 under
 * 100 ms for a filtered page.
 *
 * Then the compliance KPIs (GET /v1/kpis, issue #24) over the same million: a 30-day window (the dashboard's default)
 * at a random place in the year, without filters and with a subsidiary and/or a direction, daily and hourly series.
 * Target: p99 ≤ 200 ms. A whole year's window is measured too, for scale.
 *
 * Knobs: BENCH_ROWS (default 1000000), BENCH_REQUESTS per mix (default 200), BENCH_LIMIT rows per page (default 50),
 * BENCH_KPI_REQUESTS per KPI mix (default 100), BENCH_ONLY=kpis to measure the KPIs alone.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { loadApiTransportConfig } from '../lib/api-transport';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import pino from 'pino';
import { buildApi } from '../client/api/server';
import { createApiKey } from '../client/api/auth/api-keys';
import { systemPrincipal } from '../lib/principal';
import { ensureDatabase } from '../db/database-url';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';
import { resolveDatabaseServer } from '../db/server';
import { fillSyntheticTransfers } from '../transfer-view/synthetic-store';
import { loadIncomingConfig } from '../incoming/config';
import { quantile } from './stats';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 50);
const KPI_REQUESTS = Number(process.env.BENCH_KPI_REQUESTS ?? 100);
const ONLY_KPIS = process.env.BENCH_ONLY === 'kpis';
const log = (line: string) => process.stdout.write(`${line}\n`);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const day = 86_400_000;
const yearStart = Date.parse('2025-11-24T00:00:00Z');
const randomDay = () => new Date(yearStart + Math.floor(Math.random() * 330) * day);

async function main(): Promise<void> {
  log(
    `console-api bench: ${ROWS.toLocaleString('en')} transfers, ${REQUESTS} requests per mix, ${LIMIT} rows per page; ` +
      `${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  const server = await resolveDatabaseServer({ databaseUrl: process.env.DATABASE_URL, dataDir: '.data', log });
  const url = `${server.serverUrl}/tro_bench_console_${Date.now()}_${process.pid}`;
  await ensureDatabase(url);
  const pool = createPool(url, 'orchestrator');
  const temporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
  let api: Awaited<ReturnType<typeof buildApi>> | undefined;
  try {
    await migrate(url, 'orchestrator');
    const started = performance.now();
    const data = await fillSyntheticTransfers(pool, ROWS);
    log(
      `filled ${ROWS.toLocaleString('en')} rows and rebuilt the indexes in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    api = await buildApi({
      temporal,
      pool,
      codec: { encode: async (p) => p, decode: async (p) => p },
      taskQueue: 'bench',
      logger: pino({ level: 'warn' }),
      corsOrigins: [],
      group: { gatewayDid: 'did:ethr:0xgateway', subsidiaryDids: data.subsidiaries },
      incoming: loadIncomingConfig({}),
      webhooks: { notification: {}, address: {} },
      rateLimits: loadApiTransportConfig({}).rateLimits,
    });
    await api.listen({ host: '127.0.0.1', port: 0 });
    const origin = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    const base = `${origin}/v1/transfers`;
    // Every request authenticates as a console user does: an API key of the viewer role (one indexed lookup).
    const authorization = `Bearer ${(await createApiKey(pool, { name: 'bench-viewer', role: 'viewer' }, systemPrincipal('bench'))).key}`;

    const mixes: { name: string; query: () => Record<string, string>; pages?: number; freeText?: boolean }[] = [
      { name: 'no filter, newest first', query: () => ({}) },
      { name: 'review queue (needs=either, oldest first)', query: () => ({ needs: 'either', order: 'asc' }) },
      {
        name: 'direction + status',
        query: () => ({
          direction: pick(['incoming', 'outgoing']),
          status: pick(['DECLINED', 'REJECTED', 'CANCELLED']),
        }),
      },
      { name: 'subsidiary + asset', query: () => ({ subsidiary: pick(data.subsidiaries), asset: pick(data.assets) }) },
      {
        name: 'counterparty + created in a 30-day window',
        query: () => {
          const from = randomDay();
          return {
            counterparty: pick(data.counterparties),
            createdFrom: from.toISOString(),
            createdTo: new Date(from.getTime() + 30 * day).toISOString(),
          };
        },
      },
      {
        name: 'status + subsidiary + asset + direction',
        query: () => ({
          status: 'ACCEPTED',
          subsidiary: pick(data.subsidiaries),
          asset: pick(data.assets),
          direction: pick(['incoming', 'outgoing']),
        }),
      },
      {
        name: 'free text: 8 characters of a transaction id',
        query: () => ({ q: pick(data.transactionIds).slice(0, 8) }),
        freeText: true,
      },
      {
        name: 'free text: a reference prefix matching many ("ref-12")',
        query: () => ({ q: `ref-${10 + Math.floor(Math.random() * 90)}` }),
        freeText: true,
      },
      { name: 'status=DECLINED, 5 pages deep by cursor', query: () => ({ status: 'DECLINED' }), pages: 5 },
    ];

    const fetchPage = async (query: Record<string, string>) => {
      const t = performance.now();
      const r = await fetch(`${base}?${new URLSearchParams({ limit: String(LIMIT), ...query })}`, {
        headers: { authorization },
      });
      const body = (await r.json()) as { data: unknown[]; nextCursor: string | null };
      if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - t, body };
    };

    if (!ONLY_KPIS) await listMixes(mixes, fetchPage);
    await kpiMixes(origin, authorization, data.subsidiaries);
  } finally {
    await api?.close();
    await temporal.connection.close().catch(() => undefined);
    await pool.end();
    const admin = new PgClient({ connectionString: `${server.serverUrl}/postgres` });
    await admin.connect();
    await admin.query(`drop database if exists "${new URL(url).pathname.slice(1)}" with (force)`);
    await admin.end();
    await server.stop();
  }
}

async function listMixes(
  mixes: { name: string; query: () => Record<string, string>; pages?: number; freeText?: boolean }[],
  fetchPage: (
    query: Record<string, string>,
  ) => Promise<{ ms: number; body: { data: unknown[]; nextCursor: string | null } }>,
): Promise<void> {
  {
    // Warm-up: the first queries of each shape load the indexes into the cache.
    for (const mix of mixes) for (let i = 0; i < 20; i++) await fetchPage(mix.query());

    log('');
    log(`| filter mix | requests | rows per page (mean) | p50 ms | p99 ms | max ms |`);
    log(`|---|---:|---:|---:|---:|---:|`);
    const all: number[] = [];
    const structured: number[] = [];
    const started = performance.now();
    for (const mix of mixes) {
      const times: number[] = [];
      let rows = 0;
      for (let i = 0; i < REQUESTS; i++) {
        let query = mix.query();
        for (let p = 0; p < (mix.pages ?? 1); p++) {
          const { ms, body } = await fetchPage(query);
          times.push(ms);
          rows += body.data.length;
          if (!body.nextCursor) break;
          query = { ...query, cursor: body.nextCursor };
        }
      }
      all.push(...times);
      if (!mix.freeText) structured.push(...times);
      log(
        `| ${mix.name} | ${times.length} | ${(rows / times.length).toFixed(1)} | ${quantile(times, 0.5).toFixed(1)} | ${quantile(times, 0.99).toFixed(1)} | ${Math.max(...times).toFixed(1)} |`,
      );
    }
    log(
      `| **all but free text** | ${structured.length} | | ${quantile(structured, 0.5).toFixed(1)} | ${quantile(structured, 0.99).toFixed(1)} | ${Math.max(...structured).toFixed(1)} |`,
    );
    log(
      `| **all mixes** | ${all.length} | | ${quantile(all, 0.5).toFixed(1)} | ${quantile(all, 0.99).toFixed(1)} | ${Math.max(...all).toFixed(1)} |`,
    );
    log('');
    const p99 = quantile(all, 0.99);
    const p99s = quantile(structured, 0.99);
    log(
      `p99 over every filtered page: ${p99.toFixed(1)} ms, without free text ${p99s.toFixed(1)} ms (target < 100 ms: ${p99 < 100 ? 'met' : p99s < 100 ? 'met without free text' : 'NOT met'}); ` +
        `${((performance.now() - started) / 1000).toFixed(1)} s measuring; load average now ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
    );
  }
}

/** GET /v1/kpis mixes: each request a different window (and subsidiary, direction), one at a time after a warm-up. */
async function kpiMixes(origin: string, authorization: string, subsidiaries: string[]): Promise<void> {
  const window = (days: number) => {
    const from = days >= 365 ? new Date(yearStart) : randomDay();
    return { from: from.toISOString(), to: new Date(from.getTime() + days * day).toISOString() };
  };
  const mixes: { name: string; query: () => Record<string, string>; target: boolean }[] = [
    { name: '30 days, no filter', query: () => window(30), target: true },
    { name: '30 days, one subsidiary', query: () => ({ ...window(30), subsidiary: pick(subsidiaries) }), target: true },
    {
      name: '30 days, one direction',
      query: () => ({ ...window(30), direction: pick(['incoming', 'outgoing']) }),
      target: true,
    },
    {
      name: '30 days, subsidiary + direction',
      query: () => ({ ...window(30), subsidiary: pick(subsidiaries), direction: pick(['incoming', 'outgoing']) }),
      target: true,
    },
    {
      name: '7 days, hourly series, one subsidiary',
      query: () => ({ ...window(7), bucket: 'hour', subsidiary: pick(subsidiaries) }),
      target: true,
    },
    { name: 'the whole year (365 days), no filter', query: () => window(365), target: false },
    {
      name: 'the whole year, one subsidiary',
      query: () => ({ ...window(365), subsidiary: pick(subsidiaries) }),
      target: false,
    },
  ];
  const fetchKpis = async (query: Record<string, string>) => {
    const t = performance.now();
    const r = await fetch(`${origin}/v1/kpis?${new URLSearchParams(query)}`, { headers: { authorization } });
    const body = (await r.json()) as { counts: { total: number }; series: unknown[] };
    if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(body)}`);
    return { ms: performance.now() - t, body };
  };
  for (const mix of mixes) for (let i = 0; i < 5; i++) await fetchKpis(mix.query());
  log('');
  log(
    `| KPI query (GET /v1/kpis) | requests | transfers counted (mean) | series points (mean) | p50 ms | p99 ms | max ms |`,
  );
  log(`|---|---:|---:|---:|---:|---:|---:|`);
  const targeted: number[] = [];
  const started = performance.now();
  for (const mix of mixes) {
    const times: number[] = [];
    let counted = 0;
    let points = 0;
    for (let i = 0; i < (mix.target ? KPI_REQUESTS : Math.ceil(KPI_REQUESTS / 5)); i++) {
      const { ms, body } = await fetchKpis(mix.query());
      times.push(ms);
      counted += body.counts.total;
      points += body.series.length;
    }
    if (mix.target) targeted.push(...times);
    log(
      `| ${mix.name}${mix.target ? '' : ' (for scale)'} | ${times.length} | ${Math.round(counted / times.length).toLocaleString('en')} | ${(points / times.length).toFixed(0)} | ${quantile(times, 0.5).toFixed(1)} | ${quantile(times, 0.99).toFixed(1)} | ${Math.max(...times).toFixed(1)} |`,
    );
  }
  const p99 = quantile(targeted, 0.99);
  log(
    `| **30-day and 7-day mixes** | ${targeted.length} | | | ${quantile(targeted, 0.5).toFixed(1)} | ${p99.toFixed(1)} | ${Math.max(...targeted).toFixed(1)} |`,
  );
  log('');
  log(
    `KPI p99 over the 30-day and 7-day windows: ${p99.toFixed(1)} ms (target ≤ 200 ms: ${p99 <= 200 ? 'met' : 'NOT met'}); ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s measuring; load average now ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench failed: ${(e as Error).stack}\n`);
    process.exit(1);
  },
);
