import type { temporal } from '@temporalio/proto';

/** Every Payload anywhere in a workflow history, found by walking the decoded protobuf objects. */
export function payloadsIn(
  value: unknown,
  out: temporal.api.common.v1.IPayload[] = [],
): temporal.api.common.v1.IPayload[] {
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return out;
  const v = value as Record<string, unknown>;
  if ('metadata' in v && 'data' in v && v.metadata && typeof v.metadata === 'object') {
    out.push(v as temporal.api.common.v1.IPayload);
    return out;
  }
  for (const child of Object.values(v)) payloadsIn(child, out);
  return out;
}

/** A protobuf Timestamp or Duration in milliseconds, to the nanosecond (seconds may be a Long or a string). */
export function timestampMs(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  const s = t?.seconds as { toNumber?: () => number } | number | string | null | undefined;
  const seconds = typeof s === 'object' && s?.toNumber ? s.toNumber() : Number(s ?? 0);
  return seconds * 1000 + (t?.nanos ?? 0) / 1e6;
}
