import { ConfigError } from '../lib/errors';
import { cronSetting, intSetting, timezoneSetting, type Env } from '../lib/config-values';

/** The network's limit on one address CSV: "up to 100 MB". Decimal, so below 100 MiB too. */
export const NETWORK_MAX_UPLOAD_BYTES = 100_000_000;

/** Settings of the address book's reconciliation (environment variables in parentheses). */
export interface AddressBookConfig {
  /** Rows per uploaded CSV chunk at most (ADDRESS_BOOK_CHUNK_ROWS, default 50000). */
  chunkRows: number;
  /** Bytes per uploaded CSV chunk at most, header included (ADDRESS_BOOK_CHUNK_MAX_BYTES, default and ceiling 100 MB). */
  chunkMaxBytes: number;
  /** A first sync (the network lists nothing) computes this many chunks' worth of rows first and uploads them while
   *  the rest of the diff runs, so the network is busy from the start (ADDRESS_BOOK_HEAD_CHUNKS, default 3: enough
   *  uploads to cover the rest of a million-row diff at about 1 s per 50,000-row chunk; 0 computes the whole delta
   *  first). */
  headChunks: number;
  /** A delta of at most this many additions goes through `registerCustomer` one by one instead of an upload
   *  (ADDRESS_BOOK_REGISTER_THRESHOLD, default 100; 0 always uploads). */
  registerThreshold: number;
  /** Concurrent `registerCustomer` calls (ADDRESS_BOOK_REGISTER_CONCURRENCY, default 4). */
  registerConcurrency: number;
  /** Nightly run of every subsidiary (ADDRESS_BOOK_CRON, five fields, default `30 2 * * *`; `off` for none). */
  cron?: string;
  /** Time zone of the cron expression (ADDRESS_BOOK_TIMEZONE, an IANA name, default UTC). */
  timezone: string;
  /** How long a run waits for the network to process its changes (ADDRESS_BOOK_PROCESSING_TIMEOUT_S, default 3600). */
  processingTimeoutMs: number;
  /** Interval between polls of the network's listing while waiting (ADDRESS_BOOK_POLL_INTERVAL_MS, default 2000). */
  pollIntervalMs: number;
  /** Waiting ends early once the count has moved and then stayed still this long: the network has processed what it
   *  will take, and the verification names the rest (ADDRESS_BOOK_SETTLE_S, default 300). */
  settleMs: number;
  /** Chunks uploaded by one workflow execution before it continues as new (ADDRESS_BOOK_CHUNKS_PER_EXECUTION, 20). */
  chunksPerExecution: number;
  /** `count` (default): a run whose expected count is reached is verified by the listing's total; a mismatch lists
   *  everything to name the missing rows. `listing`: always compare the whole listing (ADDRESS_BOOK_VERIFY). */
  verify: 'count' | 'listing';
  /** Rejected rows stored per run with their reason (ADDRESS_BOOK_MAX_STORED_REJECTIONS, default 10000); the count is exact. */
  maxStoredRejections: number;
}

export function loadAddressBookConfig(env: Env): AddressBookConfig {
  const cron = cronSetting(env, 'ADDRESS_BOOK_CRON', '30 2 * * *', '02:30 every night');
  const timezone = timezoneSetting(env, 'ADDRESS_BOOK_TIMEZONE');
  const verify = (env.ADDRESS_BOOK_VERIFY || 'count').trim();
  if (verify !== 'count' && verify !== 'listing') {
    throw new ConfigError(
      'ADDRESS_BOOK_VERIFY',
      `"${verify}" is neither count nor listing`,
      'Set it to count (default) or listing',
    );
  }
  return {
    chunkRows: intSetting(env, 'ADDRESS_BOOK_CHUNK_ROWS', 50_000, 1, 10_000_000),
    chunkMaxBytes: intSetting(
      env,
      'ADDRESS_BOOK_CHUNK_MAX_BYTES',
      NETWORK_MAX_UPLOAD_BYTES,
      1024,
      NETWORK_MAX_UPLOAD_BYTES,
    ),
    headChunks: intSetting(env, 'ADDRESS_BOOK_HEAD_CHUNKS', 3, 0, 1000),
    registerThreshold: intSetting(env, 'ADDRESS_BOOK_REGISTER_THRESHOLD', 100, 0, 100_000),
    registerConcurrency: intSetting(env, 'ADDRESS_BOOK_REGISTER_CONCURRENCY', 4, 1, 64),
    cron,
    timezone,
    processingTimeoutMs: intSetting(env, 'ADDRESS_BOOK_PROCESSING_TIMEOUT_S', 3600, 1, 7 * 86_400) * 1000,
    pollIntervalMs: intSetting(env, 'ADDRESS_BOOK_POLL_INTERVAL_MS', 2000, 10, 600_000),
    settleMs: intSetting(env, 'ADDRESS_BOOK_SETTLE_S', 300, 1, 86_400) * 1000,
    chunksPerExecution: intSetting(env, 'ADDRESS_BOOK_CHUNKS_PER_EXECUTION', 20, 1, 10_000),
    verify,
    maxStoredRejections: intSetting(env, 'ADDRESS_BOOK_MAX_STORED_REJECTIONS', 10_000, 0, 10_000_000),
  };
}
