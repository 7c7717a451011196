/**
 * Settings of outgoing transfers and the notification webhook (environment variables in parentheses). Parsed once at
 * start-up; a bad value stops the process with one ConfigError naming the variable and the fix.
 */
import { ConfigError } from '../lib/errors';
import { isUsableWebhookSecret } from '../lib/webhook-signature';

/** Verification needs a key of 16 bytes or more: a shorter secret would make every webhook fail, so start-up refuses it. */
const SECRET_RULE = 'is not a webhook signing secret: whsec_ followed by base64 of at least 16 bytes';

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
   * Signing secrets of the notification webhook (NOTIFICATION_WEBHOOK_SECRETS): a JSON object from an endpoint name
   * (usually the VASP DID the endpoint is registered for, used as `/webhooks/notification/<name>`) to its secret, or
   * a single secret for every endpoint (NOTIFICATION_WEBHOOK_SECRET).
   */
  webhookSecrets: Record<string, string>;
  webhookDefaultSecret?: string;
}

type Env = Record<string, string | undefined>;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function duration(env: Env, name: string, fallback: string, minMs: number): number {
  const raw = (env[name] || fallback).trim();
  const m = /^(\d{1,9})(ms|s|m|h|d)$/.exec(raw);
  const ms = m ? Number(m[1]) * UNITS[m[2]!]! : NaN;
  if (!(ms >= minMs)) {
    throw new ConfigError(name, `"${raw}" is not a duration of at least ${minMs} ms`, `Set ${name} to a number with a unit ms, s, m, h or d (default ${fallback})`);
  }
  return ms;
}

function httpUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new ConfigError(name, `"${raw}" is not an http(s) URL`, `Set ${name} to a URL such as https://ledger.internal/travel-rule/callback`);
  }
  return raw;
}

export function loadTransferConfig(env: Env = process.env): TransferConfig {
  const noKeyMode = (env.TRANSFER_NO_KEY_MODE || 'originator-only').trim();
  if (noKeyMode !== 'originator-only' && noKeyMode !== 'escrow') {
    throw new ConfigError('TRANSFER_NO_KEY_MODE', `"${noKeyMode}" is not a mode`, 'Set it to originator-only (default) or escrow');
  }
  let webhookSecrets: Record<string, string> = {};
  if (env.NOTIFICATION_WEBHOOK_SECRETS) {
    const fix = 'Set it to a JSON object such as {"did:ethr:0x…": "whsec_…"}';
    let parsed: unknown;
    try {
      parsed = JSON.parse(env.NOTIFICATION_WEBHOOK_SECRETS);
    } catch {
      throw new ConfigError('NOTIFICATION_WEBHOOK_SECRETS', 'is not valid JSON', fix);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError('NOTIFICATION_WEBHOOK_SECRETS', 'is not a JSON object', fix);
    }
    for (const [name, secret] of Object.entries(parsed)) {
      if (typeof secret !== 'string' || !isUsableWebhookSecret(secret)) {
        throw new ConfigError('NOTIFICATION_WEBHOOK_SECRETS', `the secret of "${name}" ${SECRET_RULE}`, fix);
      }
    }
    webhookSecrets = parsed as Record<string, string>;
  }
  const webhookDefaultSecret = env.NOTIFICATION_WEBHOOK_SECRET || undefined;
  if (webhookDefaultSecret !== undefined && !isUsableWebhookSecret(webhookDefaultSecret)) {
    throw new ConfigError('NOTIFICATION_WEBHOOK_SECRET', SECRET_RULE, 'Set it to the secret POST /webhook answered (whsec_…)');
  }
  return {
    answerDeadlineMs: duration(env, 'TRANSFER_ANSWER_DEADLINE', '24h', 100),
    pollIntervalMs: duration(env, 'TRANSFER_POLL_INTERVAL', '5m', 100),
    noKeyMode,
    callbackUrl: httpUrl(env, 'TRANSFER_CALLBACK_URL'),
    directoryCacheMs: env.TRANSFER_DIRECTORY_CACHE === '0' ? 0 : duration(env, 'TRANSFER_DIRECTORY_CACHE', '60s', 1),
    webhookSecrets,
    webhookDefaultSecret,
  };
}
