/** Settings of outgoing transfers (environment variables in parentheses); a section of config/index.ts. */
import { ConfigError } from '../lib/errors';
import { durationSetting, httpUrlSetting, parseDuration, type Env } from '../lib/config-values';
import { BROADCAST_RULES, type BroadcastRule } from './types';

export type NoKeyMode = 'originator-only' | 'escrow';

export interface TransferConfig {
  /** How long a transfer waits for the counterparty's final answer (TRANSFER_ANSWER_DEADLINE, default 24h). */
  answerDeadlineMs: number;
  /** Fallback polling of `GET /tx/info` while waiting, in case a webhook is lost (TRANSFER_POLL_INTERVAL, default 5m). */
  pollIntervalMs: number;
  /**
   * What to encrypt to when the beneficiary VASP has no published `pii_didkey` (TRANSFER_NO_KEY_MODE):
   * `originator-only` (default; the agent's documented rule) or `escrow` (pseudo end-to-end: the beneficiary's
   * service-generated escrow key, so it can read the data in the network's UI).
   */
  noKeyMode: NoKeyMode;
  /** Internal URL that receives each transfer's final status (TRANSFER_CALLBACK_URL; unset: no callback). */
  callbackUrl?: string;
  /** How long directory answers (`pii_didkey`, escrow keys) are reused (TRANSFER_DIRECTORY_CACHE, default 60s; 0 = off). */
  directoryCacheMs: number;
  /**
   * When the custody system may broadcast a transfer's funds (outgoing/types.ts BroadcastRule): `on-accepted` (default),
   * `at-once` or `after-timeout:<duration>` (TRANSFER_BROADCAST), per sending subsidiary where it differs
   * (TRANSFER_BROADCAST_BY_SUBSIDIARY, JSON `{"did:ethr:0x…": "at-once"}`).
   */
  broadcast: { rule: BroadcastRule; bySubsidiary: Record<string, BroadcastRule> };
  /** Whether `transfer.release`/`transfer.halt` go to the custody system (CUSTODY_CALLBACK_URL is set; custody/config.ts). */
  custodyCallbacks: boolean;
}

export function loadTransferConfig(env: Env, custody: { callbackUrl?: string } = {}): TransferConfig {
  const noKeyMode = (env.TRANSFER_NO_KEY_MODE || 'originator-only').trim();
  if (noKeyMode !== 'originator-only' && noKeyMode !== 'escrow') {
    throw new ConfigError(
      'TRANSFER_NO_KEY_MODE',
      `"${noKeyMode}" is not a mode`,
      'Set it to originator-only (default) or escrow',
    );
  }
  return {
    answerDeadlineMs: durationSetting(env, 'TRANSFER_ANSWER_DEADLINE', '24h', 100).ms,
    pollIntervalMs: durationSetting(env, 'TRANSFER_POLL_INTERVAL', '5m', 100).ms,
    noKeyMode,
    callbackUrl: httpUrlSetting(env, 'TRANSFER_CALLBACK_URL', 'https://ledger.internal/travel-rule/callback'),
    directoryCacheMs:
      env.TRANSFER_DIRECTORY_CACHE?.trim() === '0' ? 0 : durationSetting(env, 'TRANSFER_DIRECTORY_CACHE', '60s').ms,
    broadcast: {
      rule: broadcastRule(env.TRANSFER_BROADCAST, 'TRANSFER_BROADCAST') ?? { when: 'on-accepted' },
      bySubsidiary: broadcastBySubsidiary(env),
    },
    custodyCallbacks: custody.callbackUrl !== undefined,
  };
}

const BROADCAST_HINT = `Use one of ${BROADCAST_RULES.join(', ')}; after-timeout with its duration, e.g. after-timeout:10m`;

/** `on-accepted`, `at-once` or `after-timeout:<duration>`; undefined when unset. */
export function broadcastRule(raw: string | undefined, name: string): BroadcastRule | undefined {
  const v = raw?.trim();
  if (!v) return undefined;
  if (v === 'on-accepted' || v === 'at-once') return { when: v };
  const m = /^after-timeout:(.+)$/.exec(v);
  const afterMs = m ? parseDuration(m[1]!.trim()) : undefined;
  if (afterMs === undefined || afterMs < 1000)
    throw new ConfigError(name, `"${v}" is not a broadcast rule (a timeout is at least 1s)`, BROADCAST_HINT);
  return { when: 'after-timeout', afterMs };
}

function broadcastBySubsidiary(env: Env): Record<string, BroadcastRule> {
  const name = 'TRANSFER_BROADCAST_BY_SUBSIDIARY';
  const raw = env[name]?.trim();
  if (!raw) return {};
  const example = 'Set it to {"did:ethr:0x…": "at-once", "did:ethr:0x…": "after-timeout:10m"}';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(name, 'is not JSON', example);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError(name, 'is not an object of subsidiary DIDs to rules', example);
  const out: Record<string, BroadcastRule> = {};
  for (const [did, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (!did.startsWith('did:')) throw new ConfigError(name, `"${did}" is not a DID`, example);
    const rule = typeof value === 'string' ? broadcastRule(value, `${name}.${did}`) : undefined;
    if (!rule) throw new ConfigError(name, `${did}: is not a broadcast rule`, BROADCAST_HINT);
    out[did] = rule;
  }
  return out;
}
