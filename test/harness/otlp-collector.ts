import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An attribute as OTLP/HTTP JSON carries it: `{ key, value: { stringValue: … } }` (or intValue, …). */
export interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

/** One span as OTLP/HTTP JSON carries it (the fields the tests read), with its process's `service.name`. */
export interface OtlpSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: OtlpAttribute[];
  events?: { name: string; attributes?: OtlpAttribute[] }[];
}

interface OtlpExport {
  resourceSpans: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans: { spans: Omit<OtlpSpan, 'service'>[] }[];
  }[];
}

/** The value of attribute `key`, whatever its type (`stringValue`, `intValue`, …); undefined without it. */
export const attributeOf = (attributes: OtlpAttribute[] | undefined, key: string): unknown => {
  const value = attributes?.find((a) => a.key === key)?.value;
  return value && Object.values(value)[0];
};

export interface OtlpCollector {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to: exporters post to `<endpoint>/v1/traces`. */
  endpoint: string;
  /** Each export as it arrived: its content type and its body, as sent. */
  exports: { contentType: string; body: string }[];
  /** Every span received so far, across exports and processes. */
  spans(): OtlpSpan[];
  close(): Promise<void>;
}

/** The tests' OTLP/HTTP trace collector on a free loopback port: keeps what exporters post to /v1/traces. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const exports: OtlpCollector['exports'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces')
        exports.push({ contentType: req.headers['content-type'] ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    spans: () =>
      exports.flatMap((e) =>
        (JSON.parse(e.body) as OtlpExport).resourceSpans.flatMap((rs) => {
          const service = String(attributeOf(rs.resource?.attributes, 'service.name'));
          return rs.scopeSpans.flatMap((s) => s.spans.map((span) => ({ ...span, service })));
        }),
      ),
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}
