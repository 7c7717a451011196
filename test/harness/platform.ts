import { loadWalletProofConfig, type WalletProofConfig } from '../../wallet-proofs/config';
import { loadDepositConfig, type DepositConfig } from '../../deposits/config';
import { ReviewCache } from '../../counterparties/review-cache';
import { createPricing } from '../../pricing';
import { loadPricingConfig, type PricingConfig } from '../../pricing/config';
import type { JurisdictionConfig } from '../../jurisdictions/config';
import type { PolicyConfig } from '../../policy/config';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import pino from 'pino';
import { createActivities, type Activities } from '../../activities';
import { workflowStatusOf } from '../../lib/temporal/workflow-status';
import { NetworkClient } from '../../network/client';
import { buildApi } from '../../client/api/server';
import { buildAgentApi } from '../../client/api/agent-server';
import { createPool } from '../../db/pool';
import { dropDatabase, ensureDatabase } from '../../db/database-url';
import type { AddressBookConfig } from '../../address-book/config';
import type { GroupConfig, NetworkBudgetConfig, NetworkConfig } from '../../config';
import { createRateBudget } from '../../network/rate-budget';
import { networkBudgetStore } from '../../network/budget-store';
import { openKeystore, type Keystore } from '../../keys';
import { EncryptionCodec } from '../../lib/temporal/codec';
import { parseCodecKeys } from '../../lib/temporal/codec-keys';
import type { Tracing } from '../../lib/tracing';
import { createDataConverter } from '../../lib/temporal/data-converter';
import type { SandboxConfig } from '../../sandbox/config';
import { buildSandbox, operatorIssuerUrl } from '../../sandbox/server';
import { DEFAULT_OPERATOR_AUDIENCE } from '../../sandbox/auth/operator-issuer';
import { applySeed, type Seed } from '../../sandbox/seed';
import { createWorker } from '../../workers/worker';
import { loadTransferConfig, type TransferConfig } from '../../outgoing/config';
import { createTransferContext, type TransferContext } from '../../outgoing/context';
import { LocalKeyWrapper } from '../../keys';
import { loadIncomingConfig, type IncomingConfig } from '../../incoming/config';
import type { WebhookConfig } from '../../webhooks/config';
import { loadAddressBookConfig } from '../../address-book/config';
import type { OperatorAuthConfig } from '../../auth/config';
import type { ApiTransportConfig } from '../../lib/api-transport';
import { ROLES, systemPrincipal, type Role } from '../../lib/principal';
import { createApiKey } from '../../client/api/auth/api-keys';
import type { ApiTarget } from '../../client/cli/api-client';

/** What global-setup.ts prepared for this run. */
export function testEnv() {
  const need = (name: string) => {
    const v = process.env[name];
    if (!v) throw new Error(`${name} is unset: run tests through jest's integration project (npm test)`);
    return v;
  };
  return {
    temporalAddress: need('TEST_TEMPORAL_ADDRESS'),
    databaseUrl: need('TEST_DATABASE_URL'),
    workflowBundle: need('TEST_WORKFLOW_BUNDLE'),
    keyring: parseCodecKeys(need('TEST_CODEC_KEYS')),
  };
}

export const quietLogger = () => pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

const listen = async (app: FastifyInstance) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
};

export const randomDid = () => `did:ethr:0x${randomBytes(20).toString('hex')}`;
export const randomSecret = () => randomBytes(24).toString('base64url');

/** A demo group like `npm start` seeds: a gateway with two subsidiaries, an external VASP, credentials for each. */
export function groupSeed() {
  const gateway = randomDid();
  const subA = randomDid();
  const subB = randomDid();
  const external = randomDid();
  const gatewayUser = { did: randomDid(), clientId: `gw-${randomSecret()}`, clientSecret: randomSecret() };
  const externalUser = { did: randomDid(), clientId: `ext-${randomSecret()}`, clientSecret: randomSecret() };
  const all = [
    'manage',
    'address.uploadAddressList',
    'address.registerCustomer',
    'auth.customerToken',
    'trustframework.updateVASP',
  ];
  const seed: Seed = {
    vasps: [
      { did: gateway, name: 'Gateway VASP' },
      { did: subA, name: 'Subsidiary A', parentDid: gateway },
      { did: subB, name: 'Subsidiary B', parentDid: gateway },
      { did: external, name: 'External VASP', simulated: true },
    ],
    users: [
      {
        did: gatewayUser.did,
        name: 'Gateway Operator',
        email: 'ops@gateway.example',
        jobTitle: 'Compliance',
        roles: [{ vaspDID: gateway, permissions: all }],
        credentials: [{ clientId: gatewayUser.clientId, clientSecret: gatewayUser.clientSecret }],
      },
      {
        did: externalUser.did,
        name: 'External Operator',
        email: 'ops@external.example',
        roles: [{ vaspDID: external, permissions: all }],
        credentials: [{ clientId: externalUser.clientId, clientSecret: externalUser.clientSecret }],
      },
    ],
  };
  return { seed, gateway, subA, subB, external, gatewayUser, externalUser };
}

/** Adds an unrelated VASP with one `manage` user to a seed: the party that must see nothing of the others' data. */
export function addOutsiderVasp(seed: Seed, name = 'Third VASP') {
  const did = randomDid();
  const user = { did: randomDid(), clientId: `third-${randomSecret()}`, clientSecret: randomSecret() };
  seed.vasps.push({ did, name });
  seed.users.push({
    did: user.did,
    name: `${name} operator`,
    email: 'ops@third.example',
    roles: [{ vaspDID: did, permissions: ['manage'] }],
    credentials: [{ clientId: user.clientId, clientSecret: user.clientSecret }],
  });
  return { did, user };
}

/** A client of the sandbox's operator identity provider (sandbox/auth/operator-issuer.ts), as a seed lists it. */
export type OperatorClientSeed = NonNullable<Seed['operators']>[number];

/** One operator client per role, with a person's name: add them to a seed as `seed.operators`. */
export function operatorSeed(): Record<Role, OperatorClientSeed> {
  const names: Record<Role, string> = {
    viewer: 'Vera Viewer',
    operator: 'Otto Operator',
    compliance: 'Maya Compliance',
    admin: 'Ada Admin',
  };
  return Object.fromEntries(
    ROLES.map((role) => [
      role,
      {
        clientId: `op-${role}-${randomSecret()}`,
        clientSecret: randomSecret(),
        subject: `user-${randomBytes(6).toString('hex')}`,
        // An email of this seed's own: suites share the sandbox's database, and a sign-in looks at most 5 clients of one email.
        name: names[role],
        email: `${role}-${randomBytes(4).toString('hex')}@operators.example`,
        roles: [role],
      },
    ]),
  ) as Record<Role, OperatorClientSeed>;
}

/** The orchestrator's authentication with the sandbox as its identity provider, as `npm start` sets it up. */
export const sandboxOidc = (sb: { url: string }): OperatorAuthConfig => ({
  oidc: {
    issuer: operatorIssuerUrl(sb.url),
    audience: DEFAULT_OPERATOR_AUDIENCE,
    rolesClaim: 'roles',
    rolePrefix: '',
    algorithms: ['ES256'],
    clockToleranceSeconds: 30,
  },
});

export interface RunningSandbox {
  url: string;
  app: FastifyInstance;
  pool: Pool;
  networkConfig(credentials: { clientId: string; clientSecret: string }): NetworkConfig;
  /** An access token for the credentials (API audience unless given), fetched once and reused. */
  token(credentials: { clientId: string; clientSecret: string }, audience?: string): Promise<string>;
  /** A fresh access token of the operators' identity provider (/oidc/token) for an operator client of the seed. */
  operatorToken(client: { clientId: string; clientSecret: string }, audience?: string): Promise<string>;
  /** The sandbox operator token its `/sandbox/*` test routes require (SANDBOX_OPERATOR_TOKEN). */
  testToken: string;
  /** Headers for a `/sandbox/*` test route: the test token as a bearer token, plus `extra`. */
  testHeaders(extra?: Record<string, string>): Record<string, string>;
  /**
   * Makes `did` a counterparty the sandbox plays itself (PUT /sandbox/counterparties/:did): it sends incoming
   * transfers and answers outgoing ones, as `config` says (the sandbox's defaults when empty).
   */
  simulateCounterparty(did: string, config?: Record<string, unknown>): Promise<void>;
  /**
   * Switches network faults (PUT /sandbox/faults, sandbox/faults); `{}` turns them all off and the counts start again.
   * Needs a sandbox started with `faults: true`.
   */
  setFaults(config: Record<string, unknown>): Promise<void>;
  /** What the faults injected since the last switch, by kind (GET /sandbox/faults). */
  injectedFaults(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/**
 * The sandbox on a free port, over real HTTP, against the run's database (or `databaseUrl`, one a test keeps to itself).
 * No rate limit unless `extra.rateLimit` sets one (or a test sets it at run time through PUT /sandbox/rate-limit).
 * Its `/sandbox/*` test routes are on (SANDBOX_TEST_ROUTES=1) with a fresh operator token (`testHeaders()`).
 */
export async function startSandbox(
  seed: Seed,
  {
    databaseUrl = testEnv().databaseUrl,
    ...extra
  }: Partial<Pick<SandboxConfig, 'addressBook' | 'faults' | 'rateLimit' | 'testRoutes'>> & {
    databaseUrl?: string;
  } = {},
): Promise<RunningSandbox> {
  const pool = createPool(databaseUrl, 'sandbox');
  await applySeed(pool, seed);
  // The public URL is the token audience, so it must be known before listening: reserve a port first.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const url = `http://127.0.0.1:${port}`;
  const testToken = randomSecret();
  const app = await buildSandbox({
    pool,
    logger: quietLogger(),
    config: {
      host: '127.0.0.1',
      port,
      publicUrl: url,
      piiUrl: `${url}/pii`,
      testRoutes: true,
      operatorToken: testToken,
      ...extra,
    },
  });
  await app.listen({ host: '127.0.0.1', port });
  const tokens = new Map<string, string>();
  return {
    url,
    app,
    pool,
    testToken,
    testHeaders: (more = {}) => ({ authorization: `Bearer ${testToken}`, ...more }),
    simulateCounterparty: async (did, config = {}) => {
      const r = await fetch(`${url}/sandbox/counterparties/${did}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${testToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(config),
      });
      if (r.status !== 200) throw new Error(`PUT /sandbox/counterparties/${did}: ${r.status} ${await r.text()}`);
    },
    setFaults: async (config) => {
      const r = await fetch(`${url}/sandbox/faults`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${testToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(config),
      });
      if (r.status !== 200) throw new Error(`PUT /sandbox/faults: ${r.status} ${await r.text()}`);
    },
    injectedFaults: async () => {
      const r = await fetch(`${url}/sandbox/faults`, { headers: { authorization: `Bearer ${testToken}` } });
      if (r.status !== 200) throw new Error(`GET /sandbox/faults: ${r.status} ${await r.text()}`);
      return ((await r.json()) as { injected: Record<string, number> }).injected;
    },
    networkConfig: (c) => ({
      authUrl: url,
      audience: url,
      baseUrl: url,
      audiencePii: `${url}/pii`,
      baseUrlPii: `${url}/pii`,
      clientId: c.clientId,
      clientSecret: c.clientSecret,
    }),
    token: async (c, audience = url) => {
      const key = `${c.clientId}|${audience}`;
      if (!tokens.has(key)) {
        const r = await fetch(`${url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            client_id: c.clientId,
            client_secret: c.clientSecret,
            grant_type: 'client_credentials',
            audience,
          }),
        });
        if (!r.ok) throw new Error(`token request failed: ${r.status} ${await r.text()}`);
        tokens.set(key, ((await r.json()) as { access_token: string }).access_token);
      }
      return tokens.get(key)!;
    },
    operatorToken: async (c, audience = DEFAULT_OPERATOR_AUDIENCE) => {
      const r = await fetch(`${operatorIssuerUrl(url)}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: c.clientId,
          client_secret: c.clientSecret,
          audience,
        }).toString(),
      });
      if (!r.ok) throw new Error(`operator token request failed: ${r.status} ${await r.text()}`);
      return ((await r.json()) as { access_token: string }).access_token;
    },
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

export interface RunningOrchestrator {
  apiUrl: string;
  api: FastifyInstance;
  client: Client;
  pool: Pool;
  worker: Worker;
  taskQueue: string;
  activities: Activities;
  /** The keystore the worker and the API use (master key from the options, or a random one per orchestrator). */
  keystore: Keystore;
  /** Outgoing transfers' context, shared by the worker's activities and the API. */
  transfers: TransferContext;
  /** Incoming transfers' settings the API uses. */
  incoming: IncomingConfig;
  /** Reported deposits' settings the API uses (a test may change them between reports). */
  deposits: DepositConfig;
  /** The webhooks' signing secrets the API checks (tests add an endpoint's secret once they have registered it). */
  webhooks: WebhookConfig;
  /** The agent-compatible endpoints without credentials, on their own loopback listener (client/api/agent-server.ts). */
  agentUrl: string;
  agent: FastifyInstance;
  /** One API key per role, created for this orchestrator. */
  apiKeys: Record<Role, string>;
  /** `Authorization` for the role (admin, which may call every route, unless given), plus `extra` headers. */
  headers(role?: Role, extra?: Record<string, string>): Record<string, string>;
  /** The API as the CLI's functions take it, with the role's key. */
  target(role?: Role): ApiTarget;
  close(): Promise<void>;
}

/** The worker (the project's own worker code and activities) and the internal API, talking to the given network. */
export interface OrchestratorOptions {
  /** The API's Client on the worker's NativeConnection, asking for eager starts (what workers/all-in-one.ts does). */
  eagerStart?: boolean;
  pool?: Pool;
  /** Join an existing task queue (a second worker taking over from a stopped one). */
  taskQueue?: string;
  group?: GroupConfig;
  addressBook?: AddressBookConfig;
  /** Replaces the network client built from `network` (tests that need to slow or observe calls). */
  networkClient?: NetworkClient;
  /** The group's network budget (NETWORK_RATE_*), kept in the orchestrator's database; none by default. */
  networkBudget?: NetworkBudgetConfig;
  /** `KEYSTORE_MASTER_KEY` (base64 of 32 bytes); default: a random key for this orchestrator. */
  keystoreMasterKey?: string;
  /** The agent's `KEYS`, imported at start as the worker does. */
  agentKeys?: string;
  /** Settings of outgoing transfers over the defaults (TRANSFER_* variables). */
  transfers?: Partial<TransferConfig>;
  /** Settings of incoming transfers over the defaults (INCOMING_*, SCREENING_*). */
  incoming?: Partial<IncomingConfig>;
  /** Decisions by policy (POLICY_DECISIONS); on by default. */
  policy?: PolicyConfig;
  /** Webhook secrets (NOTIFICATION_WEBHOOK_SECRET(S), ADDRESS_WEBHOOK_SECRETS); none by default. */
  webhooks?: Partial<WebhookConfig>;
  /** How the API authenticates (OPERATOR_AUTH_*); API keys work either way. */
  auth?: OperatorAuthConfig;
  /**
   * The API's rate limits; by default out of reach, since every test calls from 127.0.0.1 and some refuse thousands of
   * credentials on purpose (test/integration/transport.test.ts sets small ones).
   */
  rateLimits?: ApiTransportConfig['rateLimits'];
  /**
   * The process's tracing (lib/tracing startTracing, as OTEL_EXPORTER_OTLP_ENDPOINT starts it): the Client's and the
   * worker's interceptors, the workflows' span sink and the API's request spans. The caller shuts it down.
   */
  tracing?: Tracing;
  /** Pricing's settings (PRICE_*) for the API and the worker; default: the embedded table, no maximum age. */
  pricing?: PricingConfig;
  /** Each subsidiary's jurisdiction (SUBSIDIARY_JURISDICTIONS); default: none, FATF's rules. */
  jurisdictions?: JurisdictionConfig;
  /** Wallet proofs' settings (WALLET_PROOF_*) over the defaults. */
  walletProofs?: Partial<WalletProofConfig>;
  /** Reported deposits' settings (DEPOSIT_*) over the defaults. */
  deposits?: Partial<DepositConfig>;
  /** Where deposit.* and transfer.* callbacks go (CUSTODY_CALLBACK_URL and its secret); default: none. */
  custody?: { url: string; secret: string };
}

const UNREACHED_LIMIT = { max: 1_000_000, windowMs: 60_000 };

export async function startOrchestrator(
  network: NetworkConfig,
  opts: OrchestratorOptions = {},
): Promise<RunningOrchestrator> {
  const env = testEnv();
  const taskQueue = opts.taskQueue ?? `test-${randomSecret()}`;
  const pool = opts.pool ?? createPool(env.databaseUrl, 'orchestrator');
  const masterKey = opts.keystoreMasterKey ?? randomBytes(32).toString('base64');
  let keystore: Keystore;
  try {
    keystore = await openKeystore(pool, {
      masterKey,
      dataDir: '.data',
      agentKeys: opts.agentKeys,
    });
  } catch (e) {
    if (!opts.pool) await pool.end();
    throw e;
  }
  const connection = await Connection.connect({ address: env.temporalAddress });
  const nativeConnection = await NativeConnection.connect({ address: env.temporalAddress });
  const client = new Client({
    connection: opts.eagerStart ? (nativeConnection as never) : connection,
    dataConverter: createDataConverter(env.keyring),
    ...(opts.tracing && { interceptors: opts.tracing.clientInterceptors }),
  });
  const networkClient =
    opts.networkClient ??
    new NetworkClient(network, {
      budget: opts.networkBudget && createRateBudget(networkBudgetStore(pool), opts.networkBudget, network.clientId),
    });
  const incoming: IncomingConfig = { ...loadIncomingConfig({}), ...opts.incoming };
  const webhooks: WebhookConfig = {
    ...opts.webhooks,
    notification: { ...opts.webhooks?.notification },
    address: { ...opts.webhooks?.address },
  };
  const group = opts.group ?? { subsidiaryDids: [] };
  const transfers = createTransferContext({
    pool,
    network: networkClient,
    keystore,
    keyWrapper: new LocalKeyWrapper(Buffer.from(masterKey, 'base64')),
    config: { ...loadTransferConfig({}), custodyCallbacks: opts.custody !== undefined, ...opts.transfers },
    group,
    logger: quietLogger(),
  });
  const reviews = new ReviewCache(pool);
  await reviews.start();
  const activities = createActivities({
    pool,
    network: networkClient,
    logger: quietLogger(),
    addressBook: opts.addressBook ?? loadAddressBookConfig({}),
    keystore,
    transfers,
    ...(opts.policy ? { policy: opts.policy } : {}),
    // The embedded price table (data/prices.json), as a worker without PRICE_* settings.
    pricing: createPricing(opts.pricing ?? loadPricingConfig({})),
    reviews,
    workflowStatus: workflowStatusOf(client),
    temporal: client,
    ...(opts.custody ? { custody: opts.custody } : {}),
  });
  const worker = await createWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    keyring: env.keyring,
    activities,
    workflowBundlePath: env.workflowBundle,
    tracing: opts.tracing,
  });
  const running = worker.run();
  const stopWorker = async () => {
    worker.shutdown();
    await running;
    await reviews.stop();
    await nativeConnection.close();
    await connection.close();
    if (!opts.pool) await pool.end();
  };
  const deposits: DepositConfig = {
    ...loadDepositConfig({}),
    custodyCallbacks: opts.custody !== undefined,
    ...opts.deposits,
  };
  let api: FastifyInstance | undefined;
  let apiUrl: string;
  let agent: FastifyInstance | undefined;
  let agentUrl: string;
  const apiKeys = {} as Record<Role, string>;
  try {
    api = await buildApi({
      temporal: client,
      pool,
      codec: new EncryptionCodec(env.keyring),
      taskQueue,
      logger: quietLogger(),
      corsOrigins: ['http://localhost:8233'],
      keystore,
      group,
      transfers,
      incoming,
      webhooks,
      auth: opts.auth,
      eagerStart: opts.eagerStart,
      rateLimits: opts.rateLimits ?? { webhooks: UNREACHED_LIMIT, authFailures: UNREACHED_LIMIT },
      pricing: createPricing(opts.pricing ?? loadPricingConfig({})),
      jurisdictions: opts.jurisdictions,
      tracing: opts.tracing !== undefined,
      walletProofs: { ...loadWalletProofConfig({}), ...opts.walletProofs },
      deposits,
    });
    apiUrl = await listen(api);
    agent = await buildAgentApi({
      temporal: client,
      taskQueue,
      transfers,
      eagerStart: opts.eagerStart,
      logger: quietLogger(),
    });
    agentUrl = await listen(agent);
    // A test of a dead database starts an orchestrator too: it gets no keys, and headers() says why.
    for (const role of ROLES) {
      apiKeys[role] = await createApiKey(pool, { name: `test-${role}`, role }, systemPrincipal('test-harness')).then(
        (k) => k.key,
        () => '',
      );
    }
  } catch (e) {
    // A worker left polling after a failed start would outlive the test server and flood the log.
    await agent?.close();
    await api?.close();
    await stopWorker();
    throw e;
  }
  return {
    apiUrl,
    api: api!,
    agentUrl,
    agent: agent!,
    client,
    pool,
    worker,
    taskQueue,
    activities,
    keystore,
    transfers,
    incoming,
    deposits,
    webhooks,
    apiKeys,
    headers: (role = 'admin', extra = {}) => {
      if (!apiKeys[role])
        throw new Error('this orchestrator has no API keys: its database was unreachable when it started');
      return { authorization: `Bearer ${apiKeys[role]}`, ...extra };
    },
    target: (role = 'admin') => ({ url: apiUrl, token: apiKeys[role] }),
    close: async () => {
      await agent!.close();
      await api!.close();
      await stopWorker();
    },
  };
}

/** Polls until `check` returns a value, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * A database of a suite's own on the test server (created, empty, by `create()`), for tests whose writes, or refused
 * writes, no other suite of the run may see; `drop()` in afterAll.
 */
export function ownDatabase(label: string): {
  name: string;
  url: string;
  create(): Promise<void>;
  drop(): Promise<void>;
} {
  const url = new URL(testEnv().databaseUrl);
  const name = `${url.pathname.slice(1)}_${label}_${randomBytes(3).toString('hex')}`;
  url.pathname = `/${name}`;
  const serverUrl = testEnv().databaseUrl.slice(0, testEnv().databaseUrl.lastIndexOf('/'));
  return {
    name,
    url: url.toString(),
    create: () => ensureDatabase(url.toString()),
    drop: () => dropDatabase(serverUrl, name),
  };
}

/** Stops a child process the test started and waits until it has exited (nothing when it already has). */
export async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}
