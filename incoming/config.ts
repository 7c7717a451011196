/** Settings of incoming-transfer handling (environment variables in parentheses); a section of config/index.ts. */
import { ConfigError } from '../lib/errors';
import { durationSetting, isOff, type Env } from '../lib/config-values';

/** Durations are kept as written (`1h`): workflows take them as Temporal durations and their history shows them so. */
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
}

export function loadIncomingConfig(env: Env): IncomingConfig {
  const threshold = Number(env.SCREENING_NAME_THRESHOLD || '0.85');
  if (!(threshold > 0 && threshold <= 1)) {
    throw new ConfigError(
      'SCREENING_NAME_THRESHOLD',
      `"${env.SCREENING_NAME_THRESHOLD}" is not in (0, 1]`,
      'Set it to a similarity such as 0.85',
    );
  }
  return {
    routeDeadline: durationSetting(env, 'INCOMING_ROUTE_DEADLINE', '1h').text,
    routeGiveUpAfter: durationSetting(env, 'INCOMING_ROUTE_GIVE_UP_AFTER', '24h').text,
    reviewDeadline: durationSetting(env, 'INCOMING_REVIEW_DEADLINE', '4h').text,
    pollInterval: durationSetting(env, 'INCOMING_POLL_INTERVAL', '5m').text,
    screeningThreshold: threshold,
    sweepInterval: isOff(env, 'INCOMING_SWEEP_INTERVAL')
      ? null
      : durationSetting(env, 'INCOMING_SWEEP_INTERVAL', '10m').text,
    sweepMinAge: durationSetting(env, 'INCOMING_SWEEP_MIN_AGE', '2m', 0).text,
  };
}
