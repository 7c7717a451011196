/**
 * Not a workflow: the workflow interceptors of tracing, bundled with the workflows (workflowInterceptorModules in
 * scripts/build.cjs and test/harness/global-setup.ts, interceptors.workflowModules in workers/worker.ts).
 *
 * A workflow whose start carries a trace (its Client traced: the `_tracer-data` header, in the workflow's history) gets
 * one `RunWorkflow:<type>` span, the child of the Client's StartWorkflow span, and passes it on in the headers of the
 * activities, child workflows, signals and continue-as-new it starts, so their spans are its children. Every other
 * workflow runs through untouched, exactly as without this module; tracing off (no header) costs a header lookup.
 *
 * No OpenTelemetry SDK runs in the sandbox (Temporal's workflow interceptors do: a tracer provider, an
 * AsyncLocalStorage context manager, a span object per span). Each promise made in the sandbox costs its promise hook
 * a stack trace, and the context manager's hooks ran on all of them: that was most of tracing's CPU in the worker. The
 * span here is plain data, made once at the workflow's end and handed to the worker's `exporter` sink (lib/tracing),
 * which fills in the WorkflowInfo attributes, passes them through the allowlist and exports it with the process's spans.
 * Its span id is the run id's first 16 hex digits, so the headers are known from the start, and a replay computes the
 * same ones without random numbers (the workflow's own Math.random sequence is untouched). A start the caller did not
 * sample (its traceparent's flags) makes no span: the caller's context goes on as is, so the activities are unsampled
 * too. No span for signal or update handlers.
 */
import {
  defaultPayloadConverter,
  proxySinks,
  workflowInfo,
  type Headers,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import type {
  OpenTelemetrySinks,
  SerializableSpan,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';

/** Temporal's header of the W3C trace context (TRACE_HEADER of @temporalio/interceptors-opentelemetry). */
const TRACE_HEADER = '_tracer-data';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
// @opentelemetry/api's SpanKind.INTERNAL and SpanStatusCode.OK / ERROR, as numbers: the API is not bundled.
const INTERNAL = 0;
const OK = 1;
const ERROR = 2;

interface Traced {
  /** The header every call the workflow starts carries: its RunWorkflow span, or the caller's unsampled context. */
  header: Headers[string];
  /** The RunWorkflow span to export at the end; absent when the caller did not sample the trace. */
  span?: { traceId: string; spanId: string; parentSpanId: string; traceState?: string };
}

/** The trace the start's header carries, if any; what this workflow passes on. */
function traceOf(headers: Headers): Traced | undefined {
  const payload = headers[TRACE_HEADER];
  if (payload === undefined) return undefined;
  const carrier = defaultPayloadConverter.fromPayload<Record<string, string> | null>(payload);
  const match = TRACEPARENT.exec(carrier?.traceparent ?? '');
  if (!match) return undefined;
  const [, traceId = '', parentSpanId = '', flags = '00'] = match;
  if ((parseInt(flags, 16) & 1) === 0) return { header: payload };
  const spanId = workflowInfo().runId.replace(/-/g, '').slice(0, 16);
  const traceState = carrier?.tracestate;
  return {
    header: defaultPayloadConverter.toPayload({
      traceparent: `00-${traceId}-${spanId}-01`,
      ...(traceState && { tracestate: traceState }),
    }),
    span: { traceId, spanId, parentSpanId, ...(traceState && { traceState }) },
  };
}

const hrTime = (ms: number): [number, number] => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

function runWorkflowSpan(traced: NonNullable<Traced['span']>, error: unknown): SerializableSpan {
  const info = workflowInfo();
  const start = info.runStartTime.getTime();
  const end = Math.max(Date.now(), start);
  // A continue-as-new ends the run as planned, like Temporal's interceptor counts it.
  const failed = error !== undefined && (error as { name?: string }).name !== 'ContinueAsNew';
  return {
    name: `RunWorkflow:${info.workflowType}`,
    kind: INTERNAL,
    spanContext: {
      traceId: traced.traceId,
      spanId: traced.spanId,
      traceFlags: 1,
      ...(traced.traceState && { traceState: traced.traceState }),
    },
    parentSpanId: traced.parentSpanId,
    startTime: hrTime(start),
    endTime: hrTime(end),
    duration: hrTime(end - start),
    status: { code: failed ? ERROR : OK },
    attributes: failed ? { 'error.type': String((error as { name?: string }).name ?? 'Error') } : {},
    links: [],
    events: [],
    ended: true,
    droppedAttributesCount: 0,
    droppedLinksCount: 0,
    droppedEventsCount: 0,
    instrumentationLibrary: { name: 'travel-rule-orchestrator/workflow' },
  };
}

export const interceptors = (): WorkflowInterceptors => {
  // One per workflow execution: set when its start carries a trace, from its history, so a replay sets the same.
  let traced: Traced | undefined;
  const withTrace = <T extends { headers: Headers }>(input: T): T =>
    traced ? { ...input, headers: { ...input.headers, [TRACE_HEADER]: traced.header } } : input;
  const inbound: WorkflowInboundCallsInterceptor = {
    async execute(input, next) {
      traced ??= traceOf(input.headers);
      const span = traced?.span;
      if (!span) return next(input);
      let error: unknown;
      try {
        return await next(input);
      } catch (e) {
        error = e;
        throw e;
      } finally {
        // A sink call is not made again when the workflow replays.
        proxySinks<OpenTelemetrySinks>().exporter.export([runWorkflowSpan(span, error)]);
      }
    },
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => next(withTrace(input)),
    scheduleLocalActivity: (input, next) => next(withTrace(input)),
    startChildWorkflowExecution: (input, next) => next(withTrace(input)),
    signalWorkflow: (input, next) => next(withTrace(input)),
    continueAsNew: (input, next) => next(withTrace(input)),
    getLogAttributes: (input, next) => {
      const span = traced?.span;
      return next(span ? { trace_id: span.traceId, span_id: span.spanId, trace_flags: '01', ...input } : input);
    },
  };
  return { inbound: [inbound], outbound: [outbound] };
};
