import { durationSetting, type Env } from '../lib/config-values';

/** Signed checkpoints of the audit chains (audit/checkpoint-signature.ts; environment variables in parentheses). */
export interface AuditConfig {
  /** AUDIT_CHECKPOINT_KEYS, unparsed: `id:base64` HMAC keys, the signing one first. Unset: a development key in the data directory. */
  checkpointKeys?: string;
  /** AUDIT_CHECKPOINT_INTERVAL: how often the API signs the heads when they changed (default 1m). */
  checkpointIntervalMs: number;
  /** AUDIT_CHECKPOINT_HEARTBEAT: the longest time without a checkpoint when nothing changes (default 1h). */
  checkpointHeartbeatMs: number;
}

export function loadAuditConfig(env: Env): AuditConfig {
  return {
    checkpointKeys: env.AUDIT_CHECKPOINT_KEYS?.trim() || undefined,
    checkpointIntervalMs: durationSetting(env, 'AUDIT_CHECKPOINT_INTERVAL', '1m', 1000).ms,
    checkpointHeartbeatMs: durationSetting(env, 'AUDIT_CHECKPOINT_HEARTBEAT', '1h', 1000).ms,
  };
}
