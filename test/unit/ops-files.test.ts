/**
 * The ready-made operations files (ops/): the Grafana dashboard parses, the alert rules parse, and every metric their
 * queries name is one the code defines (lib/metrics/registry.ts) or one of the Temporal SDK's own.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { parseDuration } from '../../lib/config-values';
import { metricNames, routeLabel } from '../../lib/metrics/registry';
import { METRICS_KEEP_ALIVE_MS } from '../../lib/metrics/server';

/** The Temporal SDK's runtime metrics the files use (served by its own listener, TEMPORAL_SDK_METRICS_PORT). */
const SDK_METRICS = ['temporal_num_pollers'];
const SUFFIXES = ['_bucket', '_sum', '_count'];

const ops = (p: string) => readFileSync(resolve(__dirname, '../../ops', p), 'utf8');

/** Metric names in a PromQL expression: identifiers that are neither functions, keywords nor label names. */
function metricsIn(expr: string): string[] {
  const withoutLabels = expr
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...withoutLabels.matchAll(/\b([a-z_][a-z0-9_]*)\b(?!\s*\()/g)]
    .map((m) => m[1]!)
    .filter((n) => n.includes('_') && !['group_left', 'group_right'].includes(n));
}

const known = () => {
  const names = new Set(metricNames());
  return (n: string) =>
    names.has(n) || SDK_METRICS.includes(n) || SUFFIXES.some((s) => n.endsWith(s) && names.has(n.slice(0, -s.length)));
};

describe('ops files name only metrics that exist', () => {
  it('the Grafana dashboard', () => {
    const dashboard = JSON.parse(ops('grafana/dashboard.json')) as { panels: { targets: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(5);
    const isKnown = known();
    const named = exprs.flatMap(metricsIn);
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((n) => !isKnown(n))).toEqual([]);
  });

  it('the Prometheus alert rules', () => {
    const rules = parse(ops('prometheus/alerts.yml')) as { groups: { rules: { alert: string; expr: string }[] }[] };
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        'ReviewQueuePastEscalation',
        'RateBudgetLockouts',
        'AuditAppendFailures',
        'WorkersWithoutPollers',
      ]),
    );
    const isKnown = known();
    expect(all.flatMap((r) => metricsIn(r.expr)).filter((n) => !isKnown(n))).toEqual([]);
  });

  it('a metric name the code does not define is caught', () => {
    expect(metricsIn('rate(travel_rule_no_such_metric_total[5m])').filter((n) => !known()(n))).toEqual([
      'travel_rule_no_such_metric_total',
    ]);
  });

  it('network routes become bounded labels without DIDs or ids', () => {
    expect(routeLabel('GET /tf/simple/vasps/did:ethr:0xabc123')).toBe('GET /tf/simple/vasps/:did');
    expect(routeLabel('GET /tx/info')).toBe('GET /tx/info');
    expect(routeLabel('POST /v1/items/0f8e1c2a-1111-2222-3333-444455556666')).toBe('POST /v1/items/:id');
  });
});

describe('the shipped Prometheus', () => {
  it('scrapes within the time the metrics listeners keep its connection (bench:transfers scrapes at this interval)', () => {
    const config = parse(ops('prometheus/prometheus.yml')) as { global?: { scrape_interval?: string } };
    const interval = parseDuration(config.global?.scrape_interval ?? '');
    expect(interval).toBeDefined();
    expect(interval!).toBeLessThan(METRICS_KEEP_ALIVE_MS);
  });
});
