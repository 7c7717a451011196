/**
 * npm run bench:policy (second part) — what deciding by policy adds to an incoming transfer's CPU, on the real stack
 * (Temporal dev server, PostgreSQL, the sandbox over HTTP, the API here and one worker process). In the same run,
 * alternating so that drift in the machine's load hits both alike:
 *   off: POLICY_DECISIONS=off — screening alone decides (no hit → accept), as before policies;
 *   on:  the group's policy of 1,000 rules (999 that never match, then APPROVE for TRUSTED counterparties) with
 *        100,000 reviewed counterparties in the table, the sender among them.
 * Rounds alternate off, on, off, …, off (BENCH_POLICY_PAIRS on-rounds, default 3): each on-round is compared with the
 * mean of the off-rounds before and after it, and the ratio is the median of those, so a cost that drifts during the
 * run (it does: the servers' data grows) weighs on both sides alike. Each round sends
 * BENCH_POLICY_TRANSFERS (default 150) incoming transfers at BENCH_RATE per second (default 10) to
 * addresses in the group's registry and waits until the network shows every one ACCEPTED; CPU per transfer from
 * /proc for the worker process (where the workflow, screening and the decision run), the API and PostgreSQL's backends.
 * Target (issue 20): the worker's CPU per transfer with the policy at most 5 % above the same without it.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { simulateTransfer } from '../sandbox/nested-routing/simulate-client';
import { createDidKeyRecord } from '../lib/crypto';
import { createPool } from '../db/pool';
import { groupSeed, startSandbox, testEnv } from '../test/harness/platform';
import { activatePolicyVersion, savePolicyVersion } from '../policy/store';
import { putReview } from '../counterparties/store';
import type { PolicyRule } from '../policy/types';
import { decideTransfer, type DecideDeps } from '../policy/decide';
import { alternationLines, modeMean, roundFigures, roundWorker, type AlternateRound } from './alternation';
import { apiWithWorkerProcesses, benchOptions, cpuPerTransfer, cpuSnapshot, setupBenchTemporal } from './topology';

const TRANSFERS = Number(process.env.BENCH_POLICY_TRANSFERS ?? 150);
const RATE = Number(process.env.BENCH_RATE ?? 10);
const PAIRS = Number(process.env.BENCH_POLICY_PAIRS ?? 3);
const ROUNDS = ['off' as const, ...Array.from({ length: PAIRS }, () => ['on', 'off'] as const).flat()];
const TARGET = 1.05;
const WARM_UP = 20;
const REVIEWS = 100_000;
const RULES = 1000;

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const temporal = await setupBenchTemporal(benchOptions());
  const g = groupSeed();
  const sb = await startSandbox(g.seed);
  const gatewayKey = createDidKeyRecord();
  const db = createPool(testEnv().databaseUrl, 'orchestrator');
  const masterKey = randomBytes(32).toString('base64');
  try {
    const token = await sb.token(g.gatewayUser);
    const sandbox = (method: string, path: string, body: unknown) =>
      fetch(`${sb.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<Record<string, unknown>>);
    await sandbox('POST', '/tf/vasps/update', {
      did: g.gateway,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: gatewayKey.did }] }],
    });
    await sb.simulateCounterparty(g.external);
    await seedPolicy(db, g.gateway, g.external);
    const decisionMs = await decisionCpu(db, g);
    process.stdout.write(
      `one decision in this process (policy lookup, review lookup, 1,000 rules, recording): ${decisionMs.toFixed(3)} ms CPU\n`,
    );

    const address = (round: number, i: number) => `0x${round + 1}${String(i).padStart(39, '0')}`;
    const rounds: AlternateRound[] = [];
    let lostInAll = 0;
    process.stdout.write(
      `policy cost (${temporal.label}): ${TRANSFERS} incoming transfers per round at ${RATE}/s, rounds ${ROUNDS.join(', ')}; policy of ${RULES} rules, ${REVIEWS.toLocaleString('en')} reviewed counterparties\n`,
    );
    for (const [round, mode] of ROUNDS.entries()) {
      process.env.POLICY_DECISIONS = mode;
      const orch = await apiWithWorkerProcesses({
        network: sb.networkConfig(g.gatewayUser),
        group: { gatewayDid: g.gateway, subsidiaryDids: [g.subA, g.subB] },
        agentKeys: JSON.stringify([{ vaspDID: g.gateway, privateKeyHex: gatewayKey.keys[0].privateKeyHex }]),
        transfers: {},
        incoming: { pollInterval: '30s' },
        workers: 1,
        masterKey,
      });
      try {
        const hook = await sandbox('POST', '/webhook', {
          vaspDID: g.gateway,
          url: `${orch.apiUrl}/webhooks/notification/${encodeURIComponent(g.gateway)}`,
        });
        orch.webhooks.notification[g.gateway] = hook.secret as string;
        const addresses = Array.from({ length: TRANSFERS + WARM_UP }, (_, i) => ({
          vaspDID: g.subA,
          asset: 'ETH',
          address: address(round, i),
          customerRef: `r${round}-${i}`,
        }));
        const put = await fetch(`${orch.apiUrl}/v1/addresses`, {
          method: 'PUT',
          headers: orch.headers('operator', { 'content-type': 'application/json' }),
          body: JSON.stringify({ addresses }),
        });
        if (!put.ok) throw new Error(`registry upsert failed: ${put.status} ${await put.text()}`);
        // A few transfers first: JIT, pools and caches of a fresh worker are not the policy's cost.
        const all = addresses.map((a) => a.address);
        await sendAndWait(sb, g, all.slice(TRANSFERS), RATE);
        const parts = { temporal, workerPids: orch.workerPids };
        const before = await cpuSnapshot(parts);
        const started = Date.now();
        const { lost } = await sendAndWait(sb, g, all.slice(0, TRANSFERS), RATE);
        const cpu = cpuPerTransfer(before, await cpuSnapshot(parts), TRANSFERS);
        const r: AlternateRound = { mode, cpu, rate: TRANSFERS / ((Date.now() - started) / 1000) };
        rounds.push(r);
        lostInAll += lost;
        process.stdout.write(
          `  round ${round + 1} (${mode.padEnd(3)}): ${roundFigures(r)}${lost ? `, ${lost} not accepted` : ''}\n`,
        );
      } finally {
        await orch.close();
      }
    }
    for (const line of alternationLines('deciding by policy', rounds, TARGET)) process.stdout.write(`${line}\n`);
    process.stdout.write(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
    process.stdout.write(
      `the decision's own CPU against an off-round's worker CPU per transfer: ${((100 * decisionMs) / modeMean(rounds, 'off', roundWorker)).toFixed(2)} %\n`,
    );
    if (lostInAll > 0) process.exitCode = 1;
  } finally {
    await db.end();
    await sb.close();
    await temporal.teardown();
  }
}

/** The group's policy (1,000 rules, the matching one last) and 100,000 reviews, the external VASP TRUSTED. */
async function seedPolicy(db: ReturnType<typeof createPool>, gateway: string, external: string) {
  const rules: PolicyRule[] = Array.from({ length: RULES - 1 }, (_, i) => ({
    order: i + 1,
    actionRule: 'REJECT',
    ruleCheck: 'VASP',
    ruleValue: `did:ethr:0x${String(i).padStart(40, 'a')}`,
  }));
  rules.push({ order: RULES, actionRule: 'APPROVE', ruleCheck: 'REVIEWED_VASP_LIST', ruleValue: 'TRUSTED' });
  const version = await savePolicyVersion(db, {
    vaspDid: gateway,
    document: {
      currency: 'USD',
      incoming: [...rules, { order: RULES + 1, actionRule: 'SEND_TO_INBOX', ruleCheck: 'ALL', ruleValue: '' }],
      outgoing: rules,
    },
    author: 'bench',
    note: 'bench:policy',
  });
  await activatePolicyVersion(db, gateway, version.id, 'bench');
  // The counterparties table at the size the issue names, written in one statement.
  await db.query(
    `insert into counterparty_reviews (scope, vasp_did, review_value, note, reviewed_by)
     select '*', 'did:ethr:0x' || lpad(to_hex(i), 40, '0'), (array['TRUSTED','BLOCKED','MANUAL'])[1 + i % 3], '', 'bench'
     from generate_series(1, $1::int) i on conflict do nothing`,
    [REVIEWS - 1],
  );
  await putReview(db, {
    vaspDid: external,
    subsidiaryDid: null,
    reviewValue: 'TRUSTED',
    note: 'bench',
    reviewedBy: 'bench',
    dueAt: null,
    jurisdiction: null,
  });
}

/**
 * The CPU one decision costs this process, measured alone over 2,000 decisions (after 200 to warm up): the part of
 * the worker's cost the policy adds, without the noise of a whole transfer around it.
 */
async function decisionCpu(db: ReturnType<typeof createPool>, g: ReturnType<typeof groupSeed>): Promise<number> {
  const deps: DecideDeps = {
    pool: db,
    gatewayDid: g.gateway,
    jurisdictionOf: async () => undefined,
    toFiat: async () => undefined,
  };
  const decide = (i: number) =>
    decideTransfer(deps, {
      transferId: `bench-decision-${i}`,
      direction: 'incoming',
      vaspDid: g.subA,
      counterpartyDid: g.external,
      asset: 'ETH',
      amount: '1000',
      createdAt: new Date().toISOString(),
    });
  for (let i = 0; i < 200; i++) await decide(i);
  const before = process.cpuUsage();
  const n = 2000;
  for (let i = 0; i < n; i++) await decide(200 + i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / n;
}

/** Sends one transfer per address at `rate` and waits until the network shows each one ACCEPTED (2 minutes at most). */
async function sendAndWait(
  sb: Awaited<ReturnType<typeof startSandbox>>,
  g: ReturnType<typeof groupSeed>,
  addresses: string[],
  rate: number,
): Promise<{ lost: number }> {
  const started = Date.now();
  const ids: Promise<string>[] = [];
  for (const [i, destination] of addresses.entries()) {
    const wait = started + (i * 1000) / rate - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    ids.push(simulateTransfer(sb, { from: g.external, to: g.gateway, destination, amount: '1000' }).then((t) => t.id));
  }
  const sent = await Promise.all(ids);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { rows } = await sb.pool.query<{ n: string }>(
      `select count(*) n from transactions where id = any($1::uuid[]) and status = 'ACCEPTED'`,
      [sent],
    );
    const accepted = Number(rows[0]!.n);
    if (accepted === sent.length) return { lost: 0 };
    if (Date.now() > deadline) return { lost: sent.length - accepted };
    await new Promise((r) => setTimeout(r, 200));
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (e: Error) => {
    process.stderr.write(`${e.stack}\n`);
    process.exit(1);
  },
);
