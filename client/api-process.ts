import { createPricing } from '../pricing';
import type { Client } from '@temporalio/client';
import type { PlatformConfig } from '../config';
import type { Logger } from '../lib/logger';
import { createLogger } from '../lib/logger';
import { EncryptionCodec } from '../lib/temporal/codec';
import { loadCodecKeyring } from '../lib/temporal/codec-keys';
import { assertReachable, DEFAULT_DATABASE_URL } from '../db/database-url';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';
import { openTransferContext } from '../outgoing/context';
import { assertRetentionOutlastsTransfers } from '../retention/config';
import { NetworkClient } from '../network/client';
import { createRateBudget } from '../network/rate-budget';
import { networkBudgetStore } from '../network/budget-store';
import { openKeystore } from '../keys';
import { ensureAddressBookSchedules } from './address-book-schedules';
import { buildApi } from './api/server';
import { buildAgentApi } from './api/agent-server';
import { isLoopbackHost } from '../lib/loopback';
import { apiHttpsOptions } from '../lib/api-transport';
import { assertKeysConfigured } from '../config/development-keys';
import { agentListenerHosts } from './api/agent-host-guard';
import { ensureKeyRotationSchedules } from './key-rotation-schedules';
import { ensureRetentionSchedule } from './retention-schedule';
import { ensureCounterpartyReviewSchedule } from './counterparties/sync';
import { ensureIncomingSweepSchedule } from './incoming-sweep-schedule';
import { createTemporalClient } from './temporal';
import { startAuditCheckpoints } from '../audit/checkpoints';
import { loadCheckpointKeyring } from '../audit/checkpoint-signature';
import { startApiMetrics } from './metrics';
import { startTracing, type Tracing } from '../lib/tracing';

/**
 * The API process's work (client/main.ts): migrations, schedules, the internal API and the agent endpoints. `shared`
 * is the all-in-one process's Client on its worker's NativeConnection (workers/all-in-one.ts): the API then asks for eager
 * workflow starts, and leaves the connection (and the process's tracing) to its owner. Without it the API connects by
 * itself, and traces when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
export async function startApi(
  config: PlatformConfig,
  log: Logger,
  shared?: { temporal: Client; tracing?: Tracing },
): Promise<() => Promise<void>> {
  // Before anything else: an API off loopback without TLS (its own, or a proxy's in front) does not start at all.
  const https = apiHttpsOptions(config.host, config.transport);
  // Likewise the agent listener: HTTPS off loopback (auth/config.ts refused it there without the TLS files), plain
  // HTTP on loopback, where the programs written for the agent call it.
  const agentHttps = apiHttpsOptions(config.agent.host, {
    rateLimits: config.transport.rateLimits,
    ...(config.agent.tls && { tls: config.agent.tls }),
  });
  const tlsAtProxy = !https && config.transport.tlsTerminatedByProxy === true;
  // Off loopback, no development key is made up for it: the codec, keystore and audit checkpoint keys must be set.
  assertKeysConfigured(config);
  assertRetentionOutlastsTransfers(config.retention, config.transfers.answerDeadlineMs);
  const keyring = loadCodecKeyring(config.codecKeys, config.dataDir);
  const tracing = shared
    ? shared.tracing
    : startTracing({
        otlpEndpoint: config.observability.otlpEndpoint,
        sampler: config.observability.tracesSampler,
        process: 'api',
      });
  if (tracing && !shared) log.info(`traces exported over OTLP/HTTP to ${config.observability.otlpEndpoint}`);
  const databaseUrl = config.databaseUrl ?? DEFAULT_DATABASE_URL;
  await assertReachable(databaseUrl);
  await migrate(databaseUrl, 'orchestrator');
  const pool = createPool(databaseUrl, 'orchestrator');
  const stopCheckpoints = await startAuditCheckpoints({
    pool,
    keyring: loadCheckpointKeyring(config.audit.checkpointKeys, config.dataDir),
    intervalMs: config.audit.checkpointIntervalMs,
    heartbeatMs: config.audit.checkpointHeartbeatMs,
    logger: createLogger('audit', config.logLevel),
  });
  const keystore = await openKeystore(pool, {
    masterKey: config.keystoreMasterKey,
    dataDir: config.dataDir,
    agentKeys: config.agentKeys,
    log,
  });
  const temporal = shared?.temporal ?? (await createTemporalClient(config, keyring, tracing));
  log.info({ schedules: await ensureKeyRotationSchedules(temporal, config) }, 'key-rotation schedules ensured');
  log.info({ schedules: await ensureAddressBookSchedules(temporal, config) }, 'address-book schedules ensured');
  log.info({ schedule: await ensureRetentionSchedule(temporal, config) }, 'retention schedule ensured');
  log.info(
    { schedule: await ensureCounterpartyReviewSchedule(temporal, config) },
    'counterparty review schedule ensured',
  );
  log.info(
    {
      schedule: await ensureIncomingSweepSchedule(
        temporal,
        { group: config.group, taskQueue: config.temporal.taskQueue },
        config.incoming,
      ),
    },
    'incoming sweep schedule ensured',
  );
  const transfers = openTransferContext({
    pool,
    keystore,
    network:
      config.network &&
      new NetworkClient(config.network, {
        budget: createRateBudget(networkBudgetStore(pool), config.networkBudget, config.network.clientId),
      }),
    masterKey: config.keystoreMasterKey,
    dataDir: config.dataDir,
    group: config.group,
    logger: createLogger('transfers', config.logLevel),
    config: config.transfers,
  });
  const app = await buildApi({
    temporal,
    pool,
    codec: new EncryptionCodec(keyring),
    taskQueue: config.temporal.taskQueue,
    logger: createLogger('api', config.logLevel),
    corsOrigins: [config.uiOrigin, config.uiOrigin.replace('localhost', '127.0.0.1')],
    auth: config.auth,
    group: config.group,
    incoming: config.incoming,
    webhooks: config.webhooks,
    transfers,
    eagerStart: shared !== undefined,
    keystore,
    console: { temporalUiUrl: config.uiOrigin, namespace: config.temporal.namespace },
    https,
    rateLimits: config.transport.rateLimits,
    trustProxy: config.transport.trustProxy,
    requireForwardedHttps: config.transport.tlsTerminatedByProxy === true,
    pricing: createPricing(config.pricing),
    jurisdictions: config.jurisdictions,
    walletProofs: config.walletProofs,
    deposits: config.deposits,
    tracing: tracing !== undefined,
  });
  await app.listen({ host: config.host, port: config.apiPort });
  const metrics = await startApiMetrics(config, pool, (m) => log.warn(m));
  if (metrics) log.info(`metrics at http://${config.observability.metricsHost}:${metrics.port}/metrics`);
  if (tlsAtProxy) {
    log.warn(
      { trustProxy: config.transport.trustProxy },
      `the API listens on ${config.host}:${config.apiPort} in plain HTTP (TLS_TERMINATED_BY_PROXY=1): TLS is expected at the proxy in TRUST_PROXY; requests it does not forward with X-Forwarded-Proto: https are refused, /healthz excepted`,
    );
  }
  log.info(
    {
      oidcIssuer: config.auth.oidc?.issuer ?? null,
      apiKeys: true,
      tls: https ? 'TLS 1.2+' : tlsAtProxy ? 'at the proxy (TLS_TERMINATED_BY_PROXY)' : 'none (loopback)',
    },
    `internal API listening on ${config.publicApiUrl} (docs at ${config.publicApiUrl}/docs); every route but /healthz and the webhooks needs a credential`,
  );
  let agent: Awaited<ReturnType<typeof buildAgentApi>> | undefined;
  if (config.agent.port !== undefined) {
    if (!isLoopbackHost(config.agent.host)) {
      log.warn(
        `the agent endpoints listen on ${config.agent.host}:${config.agent.port} over HTTPS WITHOUT authentication (AGENT_ALLOW_REMOTE=1): whoever reaches that address can send transfers and read decrypted personal data`,
      );
    }
    agent = await buildAgentApi(
      {
        temporal,
        taskQueue: config.temporal.taskQueue,
        transfers,
        eagerStart: shared !== undefined,
        logger: createLogger('agent', config.logLevel),
      },
      { https: agentHttps, hosts: agentListenerHosts(config.agent) },
    );
    await agent.listen({ host: config.agent.host, port: config.agent.port });
    log.info(
      `agent endpoints (/didkey/new, /tx/*, no Authorization header) listening on ${agentHttps ? 'https' : 'http'}://${config.agent.host}:${config.agent.port}`,
    );
  }
  return async () => {
    await agent?.close();
    await app.close();
    await metrics?.close();
    await stopCheckpoints();
    if (!shared) await temporal.connection.close();
    await pool.end();
    if (!shared) await tracing?.shutdown();
  };
}
