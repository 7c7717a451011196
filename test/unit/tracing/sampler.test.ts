import { context, trace, TraceFlags } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { loadConfig, loadTracesSampler } from '../../../config';
import { samplerOf } from '../../../lib/tracing';

// Its id parts XOR to 0xfffffffe, above any ratio's bound but 1's (TraceIdRatioBasedSampler): a ratio below 1 drops it.
const TRACE_ID = 'fffffffe000000000000000000000000';
const decide = (setting: Parameters<typeof samplerOf>[0], parentSampled?: boolean) => {
  const parent =
    parentSampled === undefined
      ? context.active()
      : trace.setSpanContext(context.active(), {
          traceId: TRACE_ID,
          spanId: 'aaaaaaaaaaaaaaaa',
          traceFlags: parentSampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
          isRemote: true,
        });
  return samplerOf(setting).shouldSample(parent, TRACE_ID, 'POST /v1/transfers', 1, {}, []).decision;
};

describe('OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (issue 24)', () => {
  it('default: every trace recorded; a ratio is read from 0 to 1; anything else is refused by name', () => {
    expect(loadConfig({}).observability.tracesSampler).toEqual({ name: 'parentbased_always_on', ratio: 1 });
    expect(
      loadConfig({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }).observability
        .tracesSampler,
    ).toEqual({ name: 'parentbased_traceidratio', ratio: 0.1 });
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(/^OTEL_TRACES_SAMPLER: "sometimes"/);
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(/^OTEL_TRACES_SAMPLER_ARG: "1.5"/);
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER_ARG: 'half' })).toThrow(/^OTEL_TRACES_SAMPLER_ARG: "half"/);
  });

  it('the setting alone reads as the whole config does (the benchmarks trace their in-process API by it)', () => {
    const env = { OTEL_TRACES_SAMPLER: 'always_off' };
    expect(loadTracesSampler(env)).toEqual({ name: 'always_off', ratio: 1 });
    expect(loadTracesSampler(env)).toEqual(loadConfig(env).observability.tracesSampler);
    expect(() => loadTracesSampler({ OTEL_TRACES_SAMPLER_ARG: '-1' })).toThrow(/^OTEL_TRACES_SAMPLER_ARG: "-1"/);
  });

  it('a ratio drops new traces outside it; parent-based follows the caller either way', () => {
    const ratio = (r: number) => ({ name: 'parentbased_traceidratio' as const, ratio: r });
    expect(decide(ratio(1))).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(ratio(0.5))).toBe(SamplingDecision.NOT_RECORD);
    expect(decide(ratio(0.5), true)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide({ name: 'parentbased_always_on', ratio: 1 }, false)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide({ name: 'traceidratio', ratio: 0.5 }, true)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide({ name: 'always_off', ratio: 1 })).toBe(SamplingDecision.NOT_RECORD);
  });
});
