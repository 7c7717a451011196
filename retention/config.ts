import { ConfigError } from '../lib/errors';
import { cronSetting, intSetting, timezoneSetting, type Env } from '../lib/config-values';

/** Settings of the nightly data-retention sweep (environment variables in parentheses). */
export interface RetentionConfig {
  /** When the sweep runs (RETENTION_CRON, five fields, default `30 3 * * *`; `off` removes the schedule). */
  cron?: string;
  /** Time zone of the cron expression (RETENTION_TIMEZONE, an IANA name, default UTC). */
  timezone: string;
  /** Notification-webhook delivery ids are kept this many days for deduplication (RETENTION_WEBHOOK_DAYS, default 30):
   *  long enough to outlast the network's redelivery of a message. */
  webhookDays: number;
  /** An outgoing transfer's sealed request (IVMS101 personal data) is erased this many days after the transfer was
   *  created (RETENTION_TRANSFER_PII_DAYS, default 1825, five years). */
  transferPiiDays: number;
}

// An hour past the address book's nightly run (02:30), so the two heavy jobs do not share the database's quiet hour.
const DEFAULT_CRON = '30 3 * * *';
// Some hundred years: larger values are a typo, and the interval arithmetic must stay well inside timestamptz.
const MAX_DAYS = 36_500;

export function loadRetentionConfig(env: Env): RetentionConfig {
  return {
    cron: cronSetting(env, 'RETENTION_CRON', DEFAULT_CRON, '03:30 every night'),
    timezone: timezoneSetting(env, 'RETENTION_TIMEZONE'),
    webhookDays: intSetting(env, 'RETENTION_WEBHOOK_DAYS', 30, 1, MAX_DAYS, 'days'),
    transferPiiDays: intSetting(env, 'RETENTION_TRANSFER_PII_DAYS', 1825, 1, MAX_DAYS, 'days'),
  };
}

const DAY_MS = 86_400_000;

/**
 * A transfer's sealed request is read while its workflow runs, which lasts up to TRANSFER_ANSWER_DEADLINE (plus
 * minutes of retries): erasing it sooner would fail live transfers with GoneError. One day of margin is required.
 */
export function assertRetentionOutlastsTransfers(
  retention: Pick<RetentionConfig, 'transferPiiDays'>,
  answerDeadlineMs: number,
): void {
  const minimum = Math.ceil(answerDeadlineMs / DAY_MS) + 1;
  if (retention.transferPiiDays < minimum) {
    throw new ConfigError(
      'RETENTION_TRANSFER_PII_DAYS',
      `${retention.transferPiiDays} days would erase the requests of transfers still waiting for an answer (TRANSFER_ANSWER_DEADLINE is ${(answerDeadlineMs / DAY_MS).toFixed(2)} days)`,
      `Set RETENTION_TRANSFER_PII_DAYS to at least ${minimum}, or shorten TRANSFER_ANSWER_DEADLINE`,
    );
  }
}
