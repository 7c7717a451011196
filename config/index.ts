import { loadAuditConfig, type AuditConfig } from '../audit/config';
import { ConfigError } from '../lib/errors';
import { TRACES_SAMPLERS, type TracesSampler } from '../lib/tracing/sampler-setting';
import { loadAddressBookConfig, type AddressBookConfig } from '../address-book/config';
import { loadRetentionConfig, type RetentionConfig } from '../retention/config';
import { loadApiTransportConfig, type ApiTransportConfig } from '../lib/api-transport';
import { isLoopbackHost } from '../lib/loopback';
import { loadTemporalConnectionConfig, type TemporalConnectionConfig } from '../lib/temporal/connection-config';
import {
  loadAgentListenerConfig,
  loadOperatorAuthConfig,
  type AgentListenerConfig,
  type OperatorAuthConfig,
} from '../auth/config';
import { loadTransferConfig, type TransferConfig } from '../outgoing/config';
import { loadIncomingConfig, type IncomingConfig } from '../incoming/config';
import { loadPolicyConfig, type PolicyConfig } from '../policy/config';
import { loadPricingConfig, type PricingConfig } from '../pricing/config';
import { loadWalletProofConfig, type WalletProofConfig } from '../wallet-proofs/config';
import { loadDepositConfig, type DepositConfig } from '../deposits/config';
import { loadCustodyConfig, type CustodyConfig } from '../custody/config';
import { loadJurisdictionConfig, type JurisdictionConfig } from '../jurisdictions/config';
import { loadWebhookConfig, type WebhookConfig } from '../webhooks/config';
import { loadWorkerTuning, type WorkerTuning } from '../lib/temporal/worker-tuning';
import type { NetworkBudgetConfig, NetworkConfig } from '../network/config';
import type { GroupConfig } from '../lib/group';
import { durationSetting, httpUrlSetting, intSetting, type Env } from '../lib/config-values';

/**
 * Every setting the processes read from the environment, parsed once and validated at start-up. A bad value stops the
 * process with one ConfigError line that names the variable and the fix. Each process entry point (client/main.ts,
 * workers/main.ts, sandbox/main.ts via sandbox/config.ts, the CLI) loads it once and passes the sections on; nothing
 * else reads process.env (eslint.config.mjs enforces it outside scripts/, test/ and bench/).
 */
export type { NetworkBudgetConfig, NetworkConfig } from '../network/config';
export type { GroupConfig } from '../lib/group';

export interface PlatformConfig {
  host: string;
  apiPort: number;
  sandboxPort: number;
  dataDir: string;
  logLevel: string;
  /** The Temporal frontend; TLS and API key as lib/temporal/connection-config.ts reads them (TEMPORAL_TLS_*, TEMPORAL_API_KEY). */
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    uiPort: number;
  } & TemporalConnectionConfig;
  databaseUrl?: string;
  sandboxDatabaseUrl?: string;
  /** `TEMPORAL_CODEC_KEYS`, unparsed; see lib/temporal/codec-keys.ts. */
  codecKeys?: string;
  /** The network the orchestrator talks to (the embedded sandbox by default). */
  network?: NetworkConfig;
  /** The budget every call to the network takes from (NETWORK_RATE_*). */
  networkBudget: NetworkBudgetConfig;
  /** The agent's `KEYS` variable, unparsed: a JSON array of {vaspDID, privateKeyHex}. */
  agentKeys?: string;
  /** URL of the internal API as the Temporal UI's browser reaches it (for the codec endpoint). */
  publicApiUrl: string;
  uiOrigin: string;
  /** The VASP group this system runs for: the gateway (receives) and its subsidiaries (send and own addresses). */
  group: GroupConfig;
  /** Reconciliation of the subsidiaries' address books (address-book/config.ts). */
  addressBook: AddressBookConfig;
  /** `KEYSTORE_MASTER_KEY`, unparsed (base64 of 32 bytes); see lib/crypto/key-wrapper.ts. Unset: a development key. */
  keystoreMasterKey?: string;
  /** `KEY_ROTATION_PERIOD` in milliseconds: how often each group VASP's key is rotated by schedule; 0 = no schedules. */
  keyRotationPeriodMs?: number;
  /** The nightly data-retention sweep (retention/config.ts). */
  retention: RetentionConfig;
  /** Outgoing transfers: deadlines, polling, the no-key mode, the callback (outgoing/config.ts). */
  transfers: TransferConfig;
  /** Incoming transfers: deadlines, polling, screening, the sweep (incoming/config.ts). */
  incoming: IncomingConfig;
  /** Decisions by policy, on or off (policy/config.ts). */
  policy: PolicyConfig;
  /** Prices for thresholds and amount rules: the table, the operator's price API, their maximum age. */
  pricing: PricingConfig;
  /** Ownership proofs of self-hosted wallets: reuse, deadlines, deposit addresses (wallet-proofs/config.ts). */
  walletProofs: WalletProofConfig;
  /** Deposits the custody system reports: the match window, the data deadline, the rechecks (deposits/config.ts). */
  deposits: DepositConfig;
  /** Where the custody system takes the deposits' and outgoing transfers' callbacks (custody/config.ts). */
  custody: CustodyConfig;
  /** Each subsidiary's country, whose Travel Rule thresholds apply to its transfers (jurisdictions/config.ts). */
  jurisdictions: JurisdictionConfig;
  /** Signing secrets of the network's webhooks (webhooks/config.ts). */
  webhooks: WebhookConfig;
  /** How callers of the internal API authenticate: OIDC tokens and API keys (auth/config.ts). */
  auth: OperatorAuthConfig;
  /** The agent-compatible endpoints without credentials, on a loopback listener of their own (auth/config.ts). */
  agent: AgentListenerConfig;
  /** The API's HTTPS and rate limits (lib/api-transport.ts). */
  transport: ApiTransportConfig;
  /** Signed checkpoints of the audit chains (audit/config.ts). */
  audit: AuditConfig;
  /** Prometheus listeners and the OpenTelemetry export (docs/configuration.md, "Observability"). */
  observability: ObservabilityConfig;
  /** The worker's capacity: cached workflows, concurrent tasks, pollers (lib/temporal/worker-tuning.ts). */
  worker: WorkerTuning;
}

export interface ObservabilityConfig {
  /** Where the metrics listeners bind (METRICS_HOST): loopback unless set. */
  metricsHost: string;
  /** The API's /metrics port (METRICS_PORT); unset when `off`. */
  apiMetricsPort?: number;
  /** Each worker's /metrics port (WORKER_METRICS_PORT); 0 takes a free port; unset when `off`. */
  workerMetricsPort?: number;
  /** The Temporal SDK's own metrics (TEMPORAL_SDK_METRICS_PORT), one per process: its runtime is installed once. */
  temporalSdkMetricsPort?: number;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces are exported over OTLP/HTTP when set, not made at all otherwise. */
  otlpEndpoint?: string;
  /** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG: which traces are recorded (lib/tracing). */
  tracesSampler: TracesSampler;
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG alone (the benchmarks trace their in-process API by them). */
export function loadTracesSampler(env: Env = process.env): TracesSampler {
  const raw = env.OTEL_TRACES_SAMPLER || 'parentbased_always_on';
  const name = TRACES_SAMPLERS.find((s) => s === raw);
  if (!name) {
    throw new ConfigError(
      'OTEL_TRACES_SAMPLER',
      `"${raw}" is not a sampler`,
      `Set it to one of ${TRACES_SAMPLERS.join(', ')}`,
    );
  }
  const arg = env.OTEL_TRACES_SAMPLER_ARG;
  const ratio = arg === undefined || arg === '' ? 1 : Number(arg);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new ConfigError(
      'OTEL_TRACES_SAMPLER_ARG',
      `"${arg}" is not a ratio`,
      'Set it to a number from 0 to 1 (0.1: one trace in ten)',
    );
  }
  return { name, ratio };
}

/** A metrics port: 0–65535 (0 = a free port) or `off`. */
function metricsPort(env: Env, name: string, fallback: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'off') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new ConfigError(name, `"${raw}" is not a TCP port`, `Set ${name} to a whole number from 0 to 65535, or off`);
  }
  return n;
}

function loadObservabilityConfig(env: Env): ObservabilityConfig {
  return {
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    apiMetricsPort: metricsPort(env, 'METRICS_PORT', 9464),
    workerMetricsPort: metricsPort(env, 'WORKER_METRICS_PORT', 9465),
    temporalSdkMetricsPort: metricsPort(env, 'TEMPORAL_SDK_METRICS_PORT', 9466),
    otlpEndpoint: httpUrlSetting(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
    tracesSampler: loadTracesSampler(env),
  };
}

const DID = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/;

function group(env: Env): GroupConfig {
  const gatewayDid = env.GATEWAY_VASP_DID || undefined;
  if (gatewayDid && !DID.test(gatewayDid)) {
    throw new ConfigError(
      'GATEWAY_VASP_DID',
      `"${gatewayDid}" is not a DID`,
      'Set it to the gateway VASP DID, e.g. did:ethr:0x…',
    );
  }
  const subsidiaryDids = (env.SUBSIDIARY_VASP_DIDS || '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = subsidiaryDids.find((d) => !DID.test(d));
  if (bad)
    throw new ConfigError(
      'SUBSIDIARY_VASP_DIDS',
      `"${bad}" is not a DID`,
      'Set a comma-separated list of subsidiary VASP DIDs',
    );
  if (gatewayDid && subsidiaryDids.includes(gatewayDid)) {
    throw new ConfigError(
      'SUBSIDIARY_VASP_DIDS',
      'contains the gateway DID',
      'A gateway only receives; list only its subsidiaries',
    );
  }
  return { gatewayDid, subsidiaryDids };
}

/**
 * A setting keyed by VASP DID names only the group's own VASPs: a mistyped DID would otherwise be ignored without a
 * word, and its VASP fall back to the default.
 */
function refuseOtherVasps(name: string, keys: string[], allowed: string[]): void {
  const other = keys.find((k) => !allowed.includes(k));
  if (other)
    throw new ConfigError(
      name,
      `"${other}" is not one of the group's VASPs`,
      'Use DIDs of GATEWAY_VASP_DID or SUBSIDIARY_VASP_DIDS (for TRANSFER_BROADCAST_BY_SUBSIDIARY: subsidiaries only)',
    );
}

export const DEFAULT_KEY_ROTATION_PERIOD = '90d';

/** `KEY_ROTATION_PERIOD`: a duration of at least one minute, or `off` (or 0) for no scheduled rotation. */
function keyRotationPeriodMs(env: Env): number {
  const raw = (env.KEY_ROTATION_PERIOD ?? '').trim();
  if (raw === 'off' || raw === '0') return 0;
  return durationSetting(env, 'KEY_ROTATION_PERIOD', DEFAULT_KEY_ROTATION_PERIOD, 60_000).ms;
}

function port(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    throw new ConfigError(name, `"${raw}" is not a TCP port`, `Set ${name} to a whole number from 1 to 65535`);
  }
  return n;
}

const url = (env: Env, name: string) => httpUrlSetting(env, name);

/** A URL the orchestrator sends credentials and personal data to: https, or http only to this machine. */
function networkUrl(env: Env, name: string): string | undefined {
  const value = url(env, name);
  if (value && new URL(value).protocol === 'http:' && !isLoopbackHost(new URL(value).hostname)) {
    throw new ConfigError(
      name,
      `"${value}" is plain http to a host that is not on loopback`,
      `Use https:// (tokens, client secrets and personal data travel on it); http is accepted for 127.0.0.1 and localhost only`,
    );
  }
  return value;
}

function network(env: Env): NetworkConfig | undefined {
  const names = ['CLIENT_ID', 'CLIENT_SECRET', 'AUTH_URL', 'BASE_URL'] as const;
  const present = names.filter((n) => env[n]);
  if (present.length === 0) return undefined;
  const missing = names.filter((n) => !env[n]);
  if (missing.length > 0) {
    throw new ConfigError(
      missing[0]!,
      `is unset while ${present.join(', ')} ${present.length === 1 ? 'is' : 'are'} set`,
      `Set all of ${names.join(', ')} to talk to a network, or none of them to use the embedded sandbox`,
    );
  }
  const baseUrl = networkUrl(env, 'BASE_URL')!;
  const baseUrlPii = networkUrl(env, 'BASEURL_PII') ?? `${baseUrl}/pii`;
  return {
    authUrl: networkUrl(env, 'AUTH_URL')!,
    audience: env.AUDIENCE || baseUrl,
    baseUrl,
    audiencePii: env.AUDIENCE_PII || baseUrlPii,
    baseUrlPii,
    clientId: env.CLIENT_ID!,
    clientSecret: env.CLIENT_SECRET!,
  };
}

export const DEFAULT_NETWORK_RATE_LIMIT = 6000;

export function loadNetworkBudgetConfig(env: Env = process.env): NetworkBudgetConfig {
  const off = (env.NETWORK_RATE_LIMIT || '').trim() === 'off';
  const limit = off
    ? DEFAULT_NETWORK_RATE_LIMIT
    : intSetting(env, 'NETWORK_RATE_LIMIT', DEFAULT_NETWORK_RATE_LIMIT, 2, 1_000_000_000);
  const burst = intSetting(env, 'NETWORK_RATE_BURST', Math.max(1, Math.floor(limit / 20)), 1, limit - 1);
  return {
    enabled: !off,
    limit,
    windowMs: durationSetting(env, 'NETWORK_RATE_WINDOW', '300s', 1000).ms,
    burst,
    reserve: intSetting(env, 'NETWORK_RATE_RESERVE', Math.floor(burst / 2), 0, burst - 1),
    maxWaitMs: durationSetting(env, 'NETWORK_RATE_MAX_WAIT', '15s', 0).ms,
    lockoutMs: durationSetting(env, 'NETWORK_RATE_LOCKOUT', '10s', 1000).ms,
  };
}

export function loadConfig(env: Env = process.env): PlatformConfig {
  const host = env.HOST || '127.0.0.1';
  const apiPort = port(env, 'PORT', 3000);
  const uiPort = port(env, 'TEMPORAL_UI_PORT', 8233);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'is not a postgres:// URL', 'Use the form postgres://user@host:5432/dbname');
  }
  const temporalAddress = env.TEMPORAL_ADDRESS || '127.0.0.1:7233';
  const transport = loadApiTransportConfig(env);
  const custody = loadCustodyConfig(env);
  const vasps = group(env);
  const transfers = loadTransferConfig(env, custody);
  const jurisdictions = loadJurisdictionConfig(env);
  refuseOtherVasps(
    'TRANSFER_BROADCAST_BY_SUBSIDIARY',
    Object.keys(transfers.broadcast.bySubsidiary),
    vasps.subsidiaryDids,
  );
  refuseOtherVasps('SUBSIDIARY_JURISDICTIONS', Object.keys(jurisdictions.subsidiaryCountries), [
    ...(vasps.gatewayDid ? [vasps.gatewayDid] : []),
    ...vasps.subsidiaryDids,
  ]);
  return {
    host,
    apiPort,
    sandboxPort: port(env, 'SANDBOX_PORT', 4000),
    dataDir: env.DATA_DIR || '.data',
    logLevel: startupSettings(env).logLevel,
    temporal: {
      address: temporalAddress,
      namespace: env.TEMPORAL_NAMESPACE || 'default',
      taskQueue: env.TEMPORAL_TASK_QUEUE || 'travel-rule',
      uiPort,
      ...loadTemporalConnectionConfig(env, temporalAddress),
    },
    databaseUrl,
    sandboxDatabaseUrl: env.SANDBOX_DATABASE_URL || undefined,
    codecKeys: env.TEMPORAL_CODEC_KEYS || undefined,
    network: network(env),
    networkBudget: loadNetworkBudgetConfig(env),
    agentKeys: env.KEYS || undefined,
    publicApiUrl:
      url(env, 'PUBLIC_API_URL') ??
      `${transport.tls ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host}:${apiPort}`,
    uiOrigin: url(env, 'TEMPORAL_UI_ORIGIN') ?? `http://localhost:${uiPort}`,
    group: vasps,
    addressBook: loadAddressBookConfig(env),
    keystoreMasterKey: env.KEYSTORE_MASTER_KEY || undefined,
    keyRotationPeriodMs: keyRotationPeriodMs(env),
    retention: loadRetentionConfig(env),
    transfers,
    incoming: loadIncomingConfig(env),
    policy: loadPolicyConfig(env),
    pricing: loadPricingConfig(env),
    walletProofs: loadWalletProofConfig(env),
    deposits: loadDepositConfig(env, custody),
    custody,
    jurisdictions,
    webhooks: loadWebhookConfig(env),
    auth: loadOperatorAuthConfig(env),
    agent: loadAgentListenerConfig(env, apiPort, transport),
    transport,
    audit: loadAuditConfig(env),
    observability: loadObservabilityConfig(env),
    worker: loadWorkerTuning(env),
  };
}

/**
 * What config/run-main.ts needs before (and even without) a valid configuration: its own log level (LOG_LEVEL) and
 * whether a process that fails to start prints the error's stack (DEBUG_STARTUP).
 */
export function startupSettings(env: Env = process.env): { logLevel: string; debug: boolean } {
  return { logLevel: env.LOG_LEVEL || 'info', debug: Boolean(env.DEBUG_STARTUP) };
}

/**
 * `npm run start:cluster`: the Temporal server on PostgreSQL instead of the dev server. The frontend is
 * `TEMPORAL_ADDRESS`; every other port of the server's services defaults to an offset from the frontend's port, so one
 * variable moves them all, and each can be set on its own. Metrics are off unless `TEMPORAL_METRICS_PORT` is set.
 */
export interface ClusterConfig {
  frontendHost: string;
  ports: {
    frontend: number;
    frontendHttp: number;
    frontendMembership: number;
    history: number;
    historyMembership: number;
    matching: number;
    matchingMembership: number;
    worker: number;
    workerMembership: number;
  };
  metricsPort?: number;
  /** The Temporal server's own databases (`<name>` and `<name>_visibility`), never the orchestrator's. */
  database: string;
  /** How many worker processes `start:cluster` runs on the task queue. */
  workerProcesses: number;
}

export const CLUSTER_PORT_OFFSETS = {
  frontendHttp: ['TEMPORAL_FRONTEND_HTTP_PORT', 10],
  frontendMembership: ['TEMPORAL_FRONTEND_MEMBERSHIP_PORT', 20],
  history: ['TEMPORAL_HISTORY_PORT', 1],
  historyMembership: ['TEMPORAL_HISTORY_MEMBERSHIP_PORT', 21],
  matching: ['TEMPORAL_MATCHING_PORT', 2],
  matchingMembership: ['TEMPORAL_MATCHING_MEMBERSHIP_PORT', 22],
  worker: ['TEMPORAL_WORKER_PORT', 3],
  workerMembership: ['TEMPORAL_WORKER_MEMBERSHIP_PORT', 23],
} as const;

export const MAX_MEMBERSHIP_PORT = 32767;

export function loadClusterConfig(env: Env = process.env): ClusterConfig {
  const address = env.TEMPORAL_ADDRESS || '127.0.0.1:7233';
  const [frontendHost, frontendPortText] = address.split(':');
  const frontend = port({ TEMPORAL_ADDRESS: frontendPortText }, 'TEMPORAL_ADDRESS', NaN);
  if (!frontendHost || Number.isNaN(frontend)) {
    throw new ConfigError(
      'TEMPORAL_ADDRESS',
      `"${address}" is not host:port`,
      'Set TEMPORAL_ADDRESS to the frontend to run, e.g. 127.0.0.1:7233',
    );
  }
  const ports = { frontend } as ClusterConfig['ports'];
  for (const [key, [name, offset]] of Object.entries(CLUSTER_PORT_OFFSETS)) {
    const value = port(env, name, frontend + offset);
    // The server records membership ports in a smallint column of its database.
    if (key.endsWith('Membership') && value > MAX_MEMBERSHIP_PORT) {
      throw new ConfigError(
        name,
        `${value} is above ${MAX_MEMBERSHIP_PORT}`,
        `Temporal stores membership ports as a signed 16-bit number: set ${name} (or TEMPORAL_ADDRESS's port) lower`,
      );
    }
    ports[key as keyof typeof CLUSTER_PORT_OFFSETS] = value;
  }
  const database = env.TEMPORAL_CLUSTER_DATABASE || 'travel_rule_temporal';
  if (!/^[a-z_][a-z0-9_]{0,40}$/.test(database)) {
    throw new ConfigError(
      'TEMPORAL_CLUSTER_DATABASE',
      `"${database}" is not a plain database name`,
      'Use lower-case letters, digits and underscores',
    );
  }
  const workers = Number(env.WORKER_PROCESSES || 2);
  if (!Number.isInteger(workers) || workers < 1 || workers > 16) {
    throw new ConfigError(
      'WORKER_PROCESSES',
      `"${env.WORKER_PROCESSES}" is not a count from 1 to 16`,
      'Set WORKER_PROCESSES to how many worker processes to run',
    );
  }
  return {
    frontendHost,
    ports,
    metricsPort: env.TEMPORAL_METRICS_PORT ? port(env, 'TEMPORAL_METRICS_PORT', 0) : undefined,
    database,
    workerProcesses: workers,
  };
}
