import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const spans = new WeakMap<FastifyRequest, Span>();
const tracer = () => trace.getTracer('travel-rule-orchestrator/api');

/**
 * A server span per API request, named by its route template (`POST /v1/transfers`, `GET /v1/transfers/:id`: never
 * the raw URL, whose ids and query could be personal), the parent of everything the handler does: the workflow it
 * starts (the Temporal Client's interceptor reads the active context), the network calls it makes. A `traceparent`
 * from the caller continues the caller's trace. Attributes: method, route template, status; no header, query or body.
 * Installed before any route (client/api/server.ts), only when the process traces (lib/tracing).
 */
export function traceRequests(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.url ?? 'unknown route';
    const parent = propagation.extract(context.active(), request.headers);
    const span = tracer().startSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': request.method, 'http.route': route },
      },
      parent,
    );
    spans.set(request, span);
  });
  app.addHook('onResponse', async (request, reply) => {
    const span = spans.get(request);
    if (!span) return;
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    spans.delete(request);
  });
  app.addHook('onRequestAbort', async (request) => {
    const span = spans.get(request);
    span?.setAttribute('error.type', 'aborted');
    span?.end();
    spans.delete(request);
  });
  // The handler runs in the request span's context, so that what it starts (workflows, network calls) is its child.
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function (this: unknown, request, reply) {
      const span = spans.get(request);
      if (!span) return handler.call(this as never, request, reply);
      return context.with(trace.setSpan(context.active(), span), () => handler.call(this as never, request, reply));
    };
  });
}
