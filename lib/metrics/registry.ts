/**
 * The orchestrator's Prometheus metrics: one registry per process, defined here so that the ops files' test
 * (test/unit/ops-files.test.ts) can check every name they use. Labels are bounded sets only: direction, a group VASP's
 * DID (subsidiaries and the gateway, configured), statuses, route templates, outcomes. Never a counterparty's DID, a
 * transfer id or anything of a customer.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();

const PREFIX = 'travel_rule_';

/** What the review-queue gauges read at each scrape (the API process sets it: the projection's partial index). */
export interface ReviewQueueSnapshot {
  length: number;
  oldestAgeSeconds: number;
  overdue: number;
}
let reviewQueueSource: (() => Promise<ReviewQueueSnapshot>) | undefined;
export function setReviewQueueSource(source: (() => Promise<ReviewQueueSnapshot>) | undefined): void {
  reviewQueueSource = source;
}

/** What the key-age gauge reads at each scrape: per group VASP, seconds since its active key was made. */
let keyAgeSource: (() => Promise<{ vasp: string; ageSeconds: number }[]>) | undefined;
export function setKeyAgeSource(source: typeof keyAgeSource): void {
  keyAgeSource = source;
}

export const metrics = {
  transfers: new Counter({
    name: `${PREFIX}transfers_total`,
    help: 'Transfers entering a status, as the transfer projection records them',
    labelNames: ['direction', 'subsidiary', 'status'] as const,
    registers: [registry],
  }),
  counterpartyAnswerSeconds: new Histogram({
    name: `${PREFIX}counterparty_answer_seconds`,
    help: "Time from an outgoing transfer's creation to the counterparty's first answer",
    labelNames: ['subsidiary'] as const,
    buckets: [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 3 * 24 * 3600],
    registers: [registry],
  }),
  automaticDecisions: new Counter({
    name: `${PREFIX}automatic_decisions_total`,
    help: 'Transfers decided without a person, by the action taken',
    labelNames: ['direction', 'action'] as const,
    registers: [registry],
  }),
  networkCalls: new Counter({
    name: `${PREFIX}network_calls_total`,
    help: 'Calls to the network by route template and outcome (HTTP status, or "error" when none came back)',
    labelNames: ['route', 'status'] as const,
    registers: [registry],
  }),
  networkCallSeconds: new Histogram({
    name: `${PREFIX}network_call_seconds`,
    help: 'Duration of calls to the network by route template',
    labelNames: ['route'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  }),
  rateLimited: new Counter({
    name: `${PREFIX}network_rate_limited_total`,
    help: "The network's 429 answers",
    registers: [registry],
  }),
  rateBudgetLockouts: new Counter({
    name: `${PREFIX}rate_budget_lockouts_total`,
    help: 'Blocks of the shared rate budget after a 429',
    registers: [registry],
  }),
  rateBudgetExhausted: new Counter({
    name: `${PREFIX}rate_budget_exhausted_total`,
    help: 'Calls that gave up waiting for the shared rate budget, by priority',
    labelNames: ['priority'] as const,
    registers: [registry],
  }),
  webhooks: new Counter({
    name: `${PREFIX}webhooks_total`,
    help: "The network's webhooks by outcome",
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
  addressBookRuns: new Counter({
    name: `${PREFIX}address_book_runs_total`,
    help: 'Address-book reconciliation runs by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
  addressBookRunSeconds: new Histogram({
    name: `${PREFIX}address_book_run_seconds`,
    help: 'Duration of address-book reconciliation runs',
    buckets: [1, 5, 15, 60, 300, 900, 3600],
    registers: [registry],
  }),
  auditAppendFailures: new Counter({
    name: `${PREFIX}audit_append_failures_total`,
    help: 'Appends to the audit chain that failed',
    registers: [registry],
  }),
  reviewQueueLength: new Gauge({
    name: `${PREFIX}review_queue_length`,
    help: 'Transfers waiting for a person',
    registers: [registry],
    async collect() {
      const s = await reviewQueueSource?.();
      this.set(s?.length ?? 0);
      metrics.reviewQueueOldestAge.set(s?.oldestAgeSeconds ?? 0);
      metrics.reviewQueueOverdue.set(s?.overdue ?? 0);
    },
  }),
  reviewQueueOldestAge: new Gauge({
    name: `${PREFIX}review_queue_oldest_age_seconds`,
    help: 'Age of the oldest transfer waiting for a person',
    registers: [registry],
  }),
  reviewQueueOverdue: new Gauge({
    name: `${PREFIX}review_queue_overdue`,
    help: 'Transfers waiting for a person past their escalation deadline',
    registers: [registry],
  }),
  keyAge: new Gauge({
    name: `${PREFIX}key_age_seconds`,
    help: "Age of each group VASP's active key",
    labelNames: ['vasp'] as const,
    registers: [registry],
    async collect() {
      const ages = await keyAgeSource?.();
      this.reset();
      for (const a of ages ?? []) this.set({ vasp: a.vasp }, a.ageSeconds);
    },
  }),
};

/** Every metric name the code defines (the ops files' test checks theirs against it). */
export function metricNames(): string[] {
  return registry.getMetricsAsArray().map((m) => m.name);
}

/**
 * A network call's description as a bounded label: the `what` of network/client.ts `call` (`GET /tf/simple/vasps/<did>`)
 * with DIDs, numbers and id-like path segments (a digit in 6 characters or more) replaced (`GET /tf/simple/vasps/:did`).
 */
export function routeLabel(what: string): string {
  const [method = '', path = ''] = what.replace(/did:[a-z0-9]+:[A-Za-z0-9._:%-]+/g, ':did').split(/\s+/);
  const template = path
    .split('/')
    .map((s) => (/^\d+$/.test(s) || (s.length >= 6 && /\d/.test(s)) ? ':id' : s))
    .join('/');
  return `${method} ${template}`.trim().slice(0, 80);
}
