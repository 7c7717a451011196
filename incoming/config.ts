/**
 * Settings of incoming-transfer handling (environment variables in parentheses), parsed once at start-up; a bad value
 * stops the process with one ConfigError naming the variable and the fix.
 */
import { ConfigError } from '../lib/errors';

export interface IncomingConfig {
  /** A transfer nobody's registry owns waits this long for a person to route it, then escalates (INCOMING_ROUTE_DEADLINE, 1h). */
  routeDeadline: string;
  /** …and after escalation this much longer before it is rejected at the network as not ours (INCOMING_ROUTE_GIVE_UP_AFTER, 24h). */
  routeGiveUpAfter: string;
  /** A screening hit waits this long for a decision before escalating; it keeps waiting (INCOMING_REVIEW_DEADLINE, 4h). */
  reviewDeadline: string;
  /** Status poll that backs up the webhooks (INCOMING_POLL_INTERVAL, 5m). */
  pollInterval: string;
  /** Name similarity from 0 to 1 at which a sanctions entry is a hit (SCREENING_NAME_THRESHOLD, 0.85). */
  screeningThreshold: number;
  /**
   * How often the sweep lists the network's unanswered incoming transactions and starts any that no webhook started
   * (INCOMING_SWEEP_INTERVAL, 10m; `off` removes the schedule).
   */
  sweepInterval: string | null;
  /** Only transactions at least this old are swept, leaving the webhook time to start them (INCOMING_SWEEP_MIN_AGE, 2m). */
  sweepMinAge: string;
  /** Per-subsidiary signing secrets of the address webhook: JSON {vaspDID: secret} (ADDRESS_WEBHOOK_SECRETS). */
  addressWebhookSecrets: Record<string, string>;
}

type Env = Record<string, string | undefined>;

function duration(env: Env, name: string, fallback: string, zero = false): string {
  const raw = (env[name] || fallback).trim();
  if (!/^\d{1,9}(ms|s|m|h|d)$/.test(raw) || (!zero && /^0+[a-z]+$/.test(raw))) {
    throw new ConfigError(name, `"${raw}" is not a ${zero ? '' : 'positive '}duration`, `Set ${name} to a number with a unit ms, s, m, h or d (default ${fallback})`);
  }
  return raw;
}

export function loadIncomingConfig(env: Env = process.env): IncomingConfig {
  const threshold = Number(env.SCREENING_NAME_THRESHOLD || '0.85');
  if (!(threshold > 0 && threshold <= 1)) {
    throw new ConfigError('SCREENING_NAME_THRESHOLD', `"${env.SCREENING_NAME_THRESHOLD}" is not in (0, 1]`, 'Set it to a similarity such as 0.85');
  }
  let secrets: Record<string, string> = {};
  if (env.ADDRESS_WEBHOOK_SECRETS) {
    try {
      secrets = JSON.parse(env.ADDRESS_WEBHOOK_SECRETS) as Record<string, string>;
      if (typeof secrets !== 'object' || Array.isArray(secrets) || Object.values(secrets).some((v) => typeof v !== 'string' || v.length < 16)) throw new Error();
    } catch {
      throw new ConfigError('ADDRESS_WEBHOOK_SECRETS', 'is not a JSON object of VASP DID → secret (16+ characters)', 'Set it to {"did:ethr:0x…":"<secret>"}');
    }
  }
  return {
    routeDeadline: duration(env, 'INCOMING_ROUTE_DEADLINE', '1h'),
    routeGiveUpAfter: duration(env, 'INCOMING_ROUTE_GIVE_UP_AFTER', '24h'),
    reviewDeadline: duration(env, 'INCOMING_REVIEW_DEADLINE', '4h'),
    pollInterval: duration(env, 'INCOMING_POLL_INTERVAL', '5m'),
    screeningThreshold: threshold,
    sweepInterval: (env.INCOMING_SWEEP_INTERVAL ?? '').trim().toLowerCase() === 'off' ? null : duration(env, 'INCOMING_SWEEP_INTERVAL', '10m'),
    sweepMinAge: duration(env, 'INCOMING_SWEEP_MIN_AGE', '2m', true),
    addressWebhookSecrets: secrets,
  };
}
