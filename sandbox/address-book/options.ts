import { ConfigError } from '../../lib/errors';

/** Settings of the address book. Every one has a default; tests and operators may override any of them. */
export interface AddressBookOptions {
  /**
   * Where accepted CSV files wait for processing (files are removed once processed). Created, or narrowed, to mode
   * 0700: the files are VASPs' customer address lists. Unset: a fresh private directory per sandbox (mkdtemp),
   * removed when it stops; sandbox/config.ts sets `<DATA_DIR>/sandbox/address-uploads` so a restart finds its files.
   */
  spoolDir?: string;
  /** Largest CSV accepted, in bytes: "up to 100 MB". Checked while streaming. */
  maxUploadBytes: number;
  /** Lifetime of an upload URL. The real network hands out short-lived S3 URLs; a few minutes here. */
  uploadUrlTtlSeconds: number;
  /** Rows per multi-row INSERT … ON CONFLICT while processing a CSV. */
  batchSize: number;
  /** Uploads processed at the same time by one sandbox process; more wait in a queue. */
  processingConcurrency: number;
  /** Rejected rows kept per upload with their reasons (the rejected count is always exact). */
  maxStoredRejections: number;
  /** Rejected rows listed in the summary e-mail. */
  maxRejectionsInEmail: number;
  /** An upload whose owner has not reported progress for this long is taken over by a (re)started sandbox. */
  abandonAfterSeconds: number;
}

export const DEFAULT_OPTIONS: AddressBookOptions = {
  maxUploadBytes: 100 * 1024 * 1024,
  uploadUrlTtlSeconds: 300,
  batchSize: 5000,
  processingConcurrency: 2,
  maxStoredRejections: 10_000,
  maxRejectionsInEmail: 100,
  abandonAfterSeconds: 60,
};

declare module '../config' {
  interface SandboxConfig {
    /** Overrides of the address book's defaults (sandbox/address-book/options.ts). */
    addressBook?: Partial<AddressBookOptions>;
  }
}

export function resolveOptions(overrides: Partial<AddressBookOptions> | undefined): AddressBookOptions {
  const o = { ...DEFAULT_OPTIONS, ...overrides };
  for (const k of [
    'maxUploadBytes',
    'uploadUrlTtlSeconds',
    'batchSize',
    'processingConcurrency',
    'abandonAfterSeconds',
  ] as const) {
    if (!Number.isInteger(o[k]) || o[k] < 1)
      throw new ConfigError(`addressBook.${k}`, `${o[k]} is not a positive integer`, 'Use a whole number above 0');
  }
  for (const k of ['maxStoredRejections', 'maxRejectionsInEmail'] as const) {
    if (!Number.isInteger(o[k]) || o[k] < 0)
      throw new ConfigError(`addressBook.${k}`, `${o[k]} is not a whole number`, 'Use 0 or more');
  }
  return o;
}

type Env = Record<string, string | undefined>;

/**
 * The environment variables of the address book, for sandbox/config.ts to fold into `SandboxConfig.addressBook`:
 * SANDBOX_UPLOAD_DIR, SANDBOX_UPLOAD_MAX_BYTES, SANDBOX_UPLOAD_URL_TTL_SECONDS, SANDBOX_ADDRESS_BATCH_SIZE.
 * Unset variables keep their defaults.
 */
export function addressBookOptionsFromEnv(env: Env): Partial<AddressBookOptions> {
  const out: Partial<AddressBookOptions> = {};
  const int = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1)
      throw new ConfigError(name, `"${raw}" is not a positive whole number`, `Set ${name} to a whole number above 0`);
    return n;
  };
  if (env.SANDBOX_UPLOAD_DIR) out.spoolDir = env.SANDBOX_UPLOAD_DIR;
  const max = int('SANDBOX_UPLOAD_MAX_BYTES');
  if (max !== undefined) out.maxUploadBytes = max;
  const ttl = int('SANDBOX_UPLOAD_URL_TTL_SECONDS');
  if (ttl !== undefined) out.uploadUrlTtlSeconds = ttl;
  const batch = int('SANDBOX_ADDRESS_BATCH_SIZE');
  if (batch !== undefined) out.batchSize = batch;
  return out;
}
