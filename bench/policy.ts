/**
 * `npm run bench:policy`: the cost of deciding one transfer by policy, against a 1,000-rule policy (the matching rule
 * last, so every rule is checked) and 100,000 reviewed counterparties in PostgreSQL (a fresh database of the local
 * server). Per evaluation, p50 and p99 of: the evaluation alone; the review lookup and the evaluation; and the whole
 * read path of a live decision (the versions in force, the review, the evaluation); and the whole decision as the
 * workflows take it, recorded. The target: p99 ≤ 1 ms.
 */
import { cpus, loadavg } from 'node:os';
import { dropDatabase, ensureDatabase } from '../db/database-url';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';
import { resolveDatabaseServer } from '../db/server';
import { effectiveReviewFor } from '../counterparties/store';
import { ReviewCache } from '../counterparties/review-cache';
import { compiledPolicy, compiledVersion } from '../policy/compiled';
import { decideTransfer, type DecideDeps } from '../policy/decide';
import { evaluatePolicy } from '../policy/evaluate';
import { activatePolicyVersion, policyRefsFor, savePolicyVersion } from '../policy/store';
import type { PolicyFacts, PolicyRule } from '../policy/types';
import { quantile } from './stats';

const RULES = 1000;
const REVIEWS = 100_000;
const WARMUP = 500;
const RUNS = 5000;
const TARGET_P99_MS = 1;
const log = (line: string) => process.stdout.write(`${line}\n`);
const counterparty = (i: number) => `did:ethr:0x${i.toString(16).padStart(40, '0')}`;

async function main(): Promise<void> {
  log(
    `policy bench: ${RULES} rules, ${REVIEWS.toLocaleString('en')} reviews; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}`,
  );
  const server = await resolveDatabaseServer({ databaseUrl: process.env.DATABASE_URL, dataDir: '.data', log });
  const name = `tro_bench_policy_${Date.now()}_${process.pid}`;
  const url = `${server.serverUrl}/${name}`;
  await ensureDatabase(url);
  const pool = createPool(url, 'orchestrator');
  try {
    await migrate(url, 'orchestrator');
    const gateway = 'did:ethr:0xbench0gateway';
    const subsidiary = 'did:ethr:0xbench0subsidiary';
    // 999 VASP rules that do not match, then the review rule that does.
    const rules: PolicyRule[] = Array.from({ length: RULES - 1 }, (_, i) => ({
      order: i + 1,
      actionRule: 'REJECT',
      ruleCheck: 'VASP',
      ruleValue: `did:ethr:0x${String(i).padStart(40, 'a')}`,
    }));
    rules.push({ order: RULES, actionRule: 'APPROVE', ruleCheck: 'REVIEWED_VASP_LIST', ruleValue: 'TRUSTED' });
    const version = await savePolicyVersion(pool, {
      vaspDid: gateway,
      document: { currency: 'USD', incoming: rules, outgoing: rules },
      author: 'bench',
      note: 'bench:policy',
    });
    await activatePolicyVersion(pool, gateway, version.id, 'bench');
    await pool.query(
      `insert into counterparty_reviews (scope, vasp_did, review_value, note, reviewed_by)
       select '*', 'did:ethr:0x' || lpad(to_hex(i), 40, '0'), (array['TRUSTED','BLOCKED','MANUAL'])[1 + i % 3], '', 'bench'
         from generate_series(1, $1::int) i`,
      [REVIEWS],
    );
    await pool.query('analyze counterparty_reviews');

    const facts = (i: number, review: PolicyFacts['counterpartyReview']): PolicyFacts => ({
      direction: 'incoming',
      vaspDid: subsidiary,
      counterpartyDid: counterparty(i),
      counterpartyReview: review,
      asset: 'ETH',
      amount: '1000',
      createdAt: new Date().toISOString(),
      sanctionsHit: false,
      personalDataReadable: true,
    });
    const pick = () => 1 + Math.floor(Math.random() * REVIEWS);
    const measure = async (label: string, once: (i: number) => Promise<unknown> | unknown) => {
      for (let k = 0; k < WARMUP; k++) await once(pick());
      const ms: number[] = [];
      for (let k = 0; k < RUNS; k++) {
        const i = pick();
        const start = performance.now();
        await once(i);
        ms.push(performance.now() - start);
      }
      ms.sort((a, b) => a - b);
      const [p50, p99] = [quantile(ms, 0.5), quantile(ms, 0.99)];
      log(
        `${label.padEnd(48)} p50 ${p50.toFixed(3)} ms  p99 ${p99.toFixed(3)} ms  ${p99 <= TARGET_P99_MS ? 'meets' : 'MISSES'} p99 ≤ ${TARGET_P99_MS} ms`,
      );
      return { p50, p99 };
    };

    const compiled = compiledPolicy(version, 'incoming');
    await measure('evaluation alone (1,000 rules, in memory)', (i) => evaluatePolicy(compiled, facts(i, 'TRUSTED')));
    await measure('review lookup + evaluation', async (i) => {
      const review = await effectiveReviewFor(pool, subsidiary, counterparty(i));
      return evaluatePolicy(compiledPolicy(version, 'incoming'), facts(i, review.reviewValue));
    });
    // What a live decision reads: the versions' identities (their rules are compiled once per process), the review.
    await measure('versions in force + review lookup + evaluation', async (i) => {
      const [versions, review] = await Promise.all([
        policyRefsFor(pool, subsidiary, gateway),
        effectiveReviewFor(pool, subsidiary, counterparty(i)),
      ]);
      return evaluatePolicy(await compiledVersion(pool, versions.active, 'incoming'), facts(i, review.reviewValue));
    });
    // What a worker does: the reviews in memory (counterparties/review-cache.ts), the versions' identities.
    const reviews = new ReviewCache(pool);
    await reviews.start();
    await measure('versions in force + reviews in memory + evaluation', async (i) => {
      const versions = await policyRefsFor(pool, subsidiary, gateway);
      const review = reviews.lookup(subsidiary, counterparty(i))!;
      return evaluatePolicy(await compiledVersion(pool, versions.active, 'incoming'), facts(i, review));
    });
    await measure('reviews in memory + evaluation', (i) =>
      evaluatePolicy(compiled, facts(i, reviews.lookup(subsidiary, counterparty(i))!)),
    );
    // The whole decision as the workflows take it, its recording (an insert) included.
    const deps: DecideDeps = {
      pool,
      gatewayDid: gateway,
      reviews,
      jurisdictionOf: async () => undefined,
      toFiat: async () => undefined,
    };
    let n = 0;
    await measure('the whole decision, recorded (policy/decide.ts)', (i) =>
      decideTransfer(deps, {
        transferId: `bench-${n++}`,
        direction: 'incoming',
        vaspDid: subsidiary,
        counterpartyDid: counterparty(i),
        asset: 'ETH',
        amount: '1000',
        createdAt: new Date().toISOString(),
      }),
    );
    await reviews.stop();
  } finally {
    await pool.end();
    await dropDatabase(server.serverUrl, name).catch(() => undefined);
    await server.stop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
