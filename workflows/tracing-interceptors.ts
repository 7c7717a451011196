/**
 * Not a workflow: the workflow interceptors of tracing, bundled with the workflows (workflowInterceptorModules in
 * scripts/build.cjs and test/harness/global-setup.ts, interceptors.workflowModules in workers/worker.ts).
 *
 * Temporal's OpenTelemetry interceptors (the RunWorkflow span and its handlers', exported through the worker's
 * `exporter` sink, lib/tracing; the trace carried into activities' headers) for a workflow whose start carries a trace (its Client traced: the
 * `_tracer-data` header, in the workflow's history); every other workflow runs through untouched, exactly as without
 * this module. The choice is made once per workflow from its history, so a replay makes the same one, and tracing off
 * (no header) costs a header lookup.
 */
import type {
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { headersWithContext, TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';

interface Traced {
  inbound: OpenTelemetryInboundInterceptor;
  outbound: OpenTelemetryOutboundInterceptor;
  internals: OpenTelemetryInternalsInterceptor;
}

/** The call with the workflow's trace (its RunWorkflow span, the active context) in its headers. */
const withTrace = <T extends { headers: Parameters<typeof headersWithContext>[0] }>(input: T): T => ({
  ...input,
  headers: headersWithContext(input.headers),
});

export const interceptors = (): WorkflowInterceptors => {
  // One per workflow execution: set when its start carries a trace.
  let traced: Traced | undefined;
  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      if (!traced && input.headers[TRACE_HEADER] !== undefined) {
        traced = {
          inbound: new OpenTelemetryInboundInterceptor(),
          outbound: new OpenTelemetryOutboundInterceptor(),
          internals: new OpenTelemetryInternalsInterceptor(),
        };
      }
      return traced ? traced.inbound.execute(input, next) : next(input);
    },
    handleSignal: (input, next) => (traced ? traced.inbound.handleSignal(input, next) : next(input)),
    handleUpdate: (input, next) => (traced ? traced.inbound.handleUpdate(input, next) : next(input)),
    validateUpdate: (input, next) => (traced ? traced.inbound.validateUpdate(input, next) : next(input)),
    handleQuery: (input, next) => (traced ? traced.inbound.handleQuery(input, next) : next(input)),
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    // No StartActivity/StartChildWorkflow/SignalWorkflow span: the trace goes into the call's headers, so the activity's
    // RunActivity span is the RunWorkflow span's child. Every promise made in the workflow sandbox costs its promise
    // hook a stack trace; those spans' promises made tracing cost about a quarter of the worker's CPU per transfer.
    scheduleActivity: (input, next) => next(traced ? withTrace(input) : input),
    scheduleLocalActivity: (input, next) => next(traced ? withTrace(input) : input),
    startChildWorkflowExecution: (input, next) => next(traced ? withTrace(input) : input),
    signalWorkflow: (input, next) => next(traced ? withTrace(input) : input),
    startNexusOperation: (input, next) => (traced ? traced.outbound.startNexusOperation(input, next) : next(input)),
    continueAsNew: (input, next) => (traced ? traced.outbound.continueAsNew(input, next) : next(input)),
    getLogAttributes: (input, next) => (traced ? traced.outbound.getLogAttributes(input, next) : next(input)),
  };
  const internals: WorkflowInternalsInterceptor = {
    dispose: (input, next) => (traced ? traced.internals.dispose(input, next) : next(input)),
  };
  return { inbound: [inbound], outbound: [outbound], internals: [internals] };
};
