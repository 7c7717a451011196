/**
 * The OpenTelemetry sampler names this project takes (OTEL_TRACES_SAMPLER, read by config/index.ts; made into a sampler
 * by lib/tracing). `parentbased_*` follow the caller's choice when a traceparent comes with the request or the task.
 */
export const TRACES_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

export interface TracesSampler {
  name: (typeof TRACES_SAMPLERS)[number];
  /** OTEL_TRACES_SAMPLER_ARG: the share of traces recorded by the `*traceidratio` samplers, 0 to 1. */
  ratio: number;
}
