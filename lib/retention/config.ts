import { ConfigError } from '../errors';

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

type Env = Record<string, string | undefined>;

// An hour past the address book's nightly run (02:30), so the two heavy jobs do not share the database's quiet hour.
const DEFAULT_CRON = '30 3 * * *';
const CRON_FIELD = /^[\d*/,\-A-Za-z?LW#]+$/;
// Some hundred years: larger values are a typo, and the interval arithmetic must stay well inside timestamptz.
const MAX_DAYS = 36_500;

function days(env: Env, name: string, fallback: number): number {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return fallback;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_DAYS) {
    throw new ConfigError(name, `"${raw}" is not a whole number of days from 1 to ${MAX_DAYS}`, `Set ${name} to a number of days or unset it (default ${fallback})`);
  }
  return n;
}

export function loadRetentionConfig(env: Env): RetentionConfig {
  const rawCron = (env.RETENTION_CRON ?? DEFAULT_CRON).trim() || DEFAULT_CRON;
  let cron: string | undefined;
  if (rawCron !== 'off') {
    const fields = rawCron.split(/\s+/);
    if ((fields.length !== 5 && !rawCron.startsWith('@')) || !fields.every((f) => CRON_FIELD.test(f))) {
      throw new ConfigError('RETENTION_CRON', `"${rawCron}" is not a five-field cron expression`, `Use e.g. "${DEFAULT_CRON}" (03:30 every night), or off`);
    }
    cron = rawCron;
  }
  const timezone = (env.RETENTION_TIMEZONE || 'UTC').trim();
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new ConfigError('RETENTION_TIMEZONE', `"${timezone}" is not an IANA time zone`, 'Use e.g. UTC or Europe/Zurich');
  }
  return {
    cron,
    timezone,
    webhookDays: days(env, 'RETENTION_WEBHOOK_DAYS', 30),
    transferPiiDays: days(env, 'RETENTION_TRANSFER_PII_DAYS', 1825),
  };
}

const DAY_MS = 86_400_000;

/**
 * A transfer's sealed request is read while its workflow runs, which lasts up to TRANSFER_ANSWER_DEADLINE (plus
 * minutes of retries): erasing it sooner would fail live transfers with GoneError. One day of margin is required.
 */
export function assertRetentionOutlastsTransfers(retention: Pick<RetentionConfig, 'transferPiiDays'>, answerDeadlineMs: number): void {
  const minimum = Math.ceil(answerDeadlineMs / DAY_MS) + 1;
  if (retention.transferPiiDays < minimum) {
    throw new ConfigError(
      'RETENTION_TRANSFER_PII_DAYS',
      `${retention.transferPiiDays} days would erase the requests of transfers still waiting for an answer (TRANSFER_ANSWER_DEADLINE is ${(answerDeadlineMs / DAY_MS).toFixed(2)} days)`,
      `Set RETENTION_TRANSFER_PII_DAYS to at least ${minimum}, or shorten TRANSFER_ANSWER_DEADLINE`,
    );
  }
}
