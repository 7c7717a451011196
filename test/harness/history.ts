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
