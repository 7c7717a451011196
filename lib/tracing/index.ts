import { context, propagation, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Sampler,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { ClientInterceptors } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker';
import {
  ApplicationFailure,
  ApplicationFailureCategory,
  CompleteAsyncError,
  defaultPayloadConverter,
} from '@temporalio/common';
import type {
  ActivityExecuteInput,
  ActivityInterceptorsFactory,
  ActivityInboundCallsInterceptor,
  InjectedSinks,
  Next,
  WorkerInterceptors,
} from '@temporalio/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import type { TracesSampler } from './sampler-setting';

/**
 * OpenTelemetry tracing of one process (OTEL_EXPORTER_OTLP_ENDPOINT, read by config/index.ts): the API's requests
 * (client/api/tracing.ts), the Temporal Client's starts and signals, the workflows (workflows/tracing-interceptors.ts,
 * their spans leave the sandbox through the `exporter` sink), the activities and the calls to the network
 * (network/client.ts: events on the span they are made in, see there) share one trace, exported over OTLP/HTTP (JSON) in batches. Without an endpoint nothing is
 * started: no provider, no exporter; the API's global tracer stays the no-op one.
 *
 * No personal data in spans: span names are route templates, workflow and activity types; attributes pass an
 * allowlist (ALLOWED_ATTRIBUTES) before export, whatever an instrumentation set (the workflow sink copies the whole
 * WorkflowInfo, memo and search attributes included, onto every workflow span: they are dropped here).
 */
export interface Tracing {
  /** Interceptors of every Temporal Client of the process: StartWorkflow/SignalWorkflow spans, the trace in headers. */
  clientInterceptors: ClientInterceptors;
  /** The worker's activity interceptors (RunActivity spans, children of the workflow's RunWorkflow span). */
  workerInterceptors: Pick<WorkerInterceptors, 'activity'>;
  /** The worker's `exporter` sink: the workflows' spans, through the same allowlist and exporter. */
  sinks: InjectedSinks<OpenTelemetrySinks>;
  /** Exports what is pending. */
  flush(): Promise<void>;
  /** Exports what is pending, stops the exporter and leaves the process's tracing as it was before (no-op). */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces go to `<endpoint>/v1/traces`; unset, tracing is off. */
  otlpEndpoint?: string;
  /** `api`, `worker` or `all-in-one`: the resource's service.name is travel-rule-orchestrator-<process>. */
  process: string;
  /** OTEL_TRACES_SAMPLER(_ARG); default parentbased_always_on: every trace this process starts is recorded. */
  sampler?: TracesSampler;
}

/**
 * The OpenTelemetry sampler of a setting. A trace not sampled records nothing: its spans are non-recording, the
 * workflows it starts make no span (workflows/tracing-interceptors.ts reads the sampled flag), nothing is exported.
 */
export function samplerOf(setting: TracesSampler): Sampler {
  const [parentBased, root] = setting.name.startsWith('parentbased_')
    ? [true, setting.name.slice('parentbased_'.length)]
    : [false, setting.name];
  const sampler =
    root === 'always_off'
      ? new AlwaysOffSampler()
      : root === 'traceidratio'
        ? new TraceIdRatioBasedSampler(setting.ratio)
        : new AlwaysOnSampler();
  return parentBased ? new ParentBasedSampler({ root: sampler }) : sampler;
}

/**
 * Attribute keys a span may carry out of the process: identifiers of workflows and activities (transfer ids are ours,
 * not personal), route templates, methods, statuses, error types. Anything else is removed before export.
 */
export const ALLOWED_ATTRIBUTES: ReadonlySet<string> = new Set([
  // Temporal's interceptors
  'temporalWorkflowId',
  'temporalActivityId',
  'temporalUpdateId',
  'run_id',
  // The WorkflowInfo the workflow sink adds: only its identifiers
  'workflowId',
  'workflowType',
  'runId',
  'taskQueue',
  'namespace',
  'attempt',
  // HTTP, server side (client/api/tracing.ts) and client side (network/client.ts, on its call events)
  'http.request.method',
  'http.route',
  'http.response.status_code',
  'url.template',
  'server.address',
  'error.type',
  'network.priority',
  'network.duration_ms',
]);

/** Removes every attribute outside ALLOWED_ATTRIBUTES from a span as it ends, then hands it on. */
export class AllowlistSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parent: Context): void {
    this.next.onStart(span, parent);
  }

  onEnd(span: ReadableSpan): void {
    const attributes = span.attributes as Record<string, unknown>;
    for (const key of Object.keys(attributes)) if (!ALLOWED_ATTRIBUTES.has(key)) delete attributes[key];
    for (const event of span.events) {
      // An exception's message and stack are the project's typed errors (no personal data by rule); the network call
      // events carry allowlisted keys; nothing else.
      const a = event.attributes as Record<string, unknown> | undefined;
      if (!a) continue;
      for (const key of Object.keys(a))
        if (!ALLOWED_ATTRIBUTES.has(key) && !key.startsWith('exception.')) delete a[key];
    }
    this.next.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

/** Temporal's header of the W3C trace context (TRACE_HEADER of @temporalio/interceptors-opentelemetry). */
const TRACE_HEADER = '_tracer-data';

/**
 * The `RunActivity:<type>` span of each activity, the child of the trace its headers carry (the workflow's RunWorkflow
 * span), or a trace of its own without one. What Temporal's OpenTelemetryActivityInboundInterceptor makes, with less
 * work per activity: one context switch instead of two, the attributes given at the start. The network calls the
 * activity makes are events on this span (network/client.ts).
 */
/** The activity's context, as the worker hands it to its interceptor factories. */
type ActivityContext = Parameters<ActivityInterceptorsFactory>[0];

class ActivitySpans implements ActivityInboundCallsInterceptor {
  private static readonly tracer = trace.getTracer('@temporalio/interceptor-activity');

  constructor(private readonly ctx: ActivityContext) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const header = input.headers[TRACE_HEADER];
    const active = context.active();
    const parent = header
      ? propagation.extract(active, defaultPayloadConverter.fromPayload<Record<string, string>>(header) ?? {})
      : active;
    const info = this.ctx.info;
    const span = ActivitySpans.tracer.startSpan(
      `RunActivity:${info.activityType}`,
      {
        kind: SpanKind.INTERNAL,
        attributes:
          info.inWorkflow && info.workflowExecution
            ? {
                temporalActivityId: info.activityId,
                temporalWorkflowId: info.workflowExecution.workflowId,
                run_id: info.workflowExecution.runId,
              }
            : { temporalActivityId: info.activityId },
      },
      parent,
    );
    if (!span.isRecording()) return context.with(trace.setSpan(parent, span), () => next(input));
    try {
      const result = await context.with(trace.setSpan(parent, span), () => next(input));
      span.setStatus({ code: SpanStatusCode.OK });
      return result;
    } catch (err) {
      // As Temporal's interceptor: a benign failure is not an error; the activity completing later is none either.
      if (!(err instanceof CompleteAsyncError)) {
        const benign = err instanceof ApplicationFailure && err.category === ApplicationFailureCategory.BENIGN;
        span.setStatus({
          code: benign ? SpanStatusCode.UNSET : SpanStatusCode.ERROR,
          message: err instanceof Error ? err.message : String(err),
        });
        span.recordException(err as Error);
      } else span.setStatus({ code: SpanStatusCode.OK });
      throw err;
    } finally {
      span.end();
    }
  }
}

/** Starts tracing for this process when an endpoint is set; undefined (and nothing started) otherwise. */
export function startTracing(options: TracingOptions): Tracing | undefined {
  if (!options.otlpEndpoint) return undefined;
  const resource = new Resource({ 'service.name': `travel-rule-orchestrator-${options.process}` });
  const exporter = new OTLPTraceExporter({ url: `${options.otlpEndpoint.replace(/\/+$/, '')}/v1/traces` });
  const processor = new AllowlistSpanProcessor(new BatchSpanProcessor(exporter));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [processor],
    sampler: samplerOf(options.sampler ?? { name: 'parentbased_always_on', ratio: 1 }),
  });
  // The global provider, the AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  return {
    clientInterceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    workerInterceptors: {
      activity: [
        (ctx) => ({
          inbound: new ActivitySpans(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(processor, resource) },
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/**
 * The worker's `exporter` sink without tracing: a workflow started by a traced Client (an API with tracing on beside a
 * worker without) makes spans the worker drops, instead of calls to an unregistered sink it would log at every task.
 */
export const droppedWorkflowSpans: InjectedSinks<OpenTelemetrySinks> = {
  exporter: { export: { fn: () => undefined } },
};
