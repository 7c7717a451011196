import { loadConfig } from '../lib/config';
import { createLogger } from '../lib/logger';
import { runMain } from '../lib/run-main';
import { EncryptionCodec } from '../lib/temporal/codec';
import { loadCodecKeyring } from '../lib/temporal/codec-keys';
import { assertReachable, DEFAULT_DATABASE_URL } from '../db/database-url';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';
import { loadTransferConfig } from '../outgoing/config';
import { openTransferContext } from '../outgoing/context';
import { assertRetentionOutlastsTransfers } from '../lib/retention/config';
import { NetworkClient } from '../network/client';
import { openKeystore } from '../db/keystore';
import { ensureAddressBookSchedules } from './address-book-schedules';
import { buildApi } from './api/server';
import { ensureKeyRotationSchedules } from './key-rotation-schedules';
import { ensureRetentionSchedule } from './retention-schedule';
import { ensureIncomingSweepSchedule } from './incoming-sweep-schedule';
import { loadIncomingConfig } from '../incoming/config';
import { createTemporalClient } from './temporal';

runMain('api', async (log) => {
  const config = loadConfig();
  assertRetentionOutlastsTransfers(config.retention, loadTransferConfig().answerDeadlineMs);
  const keyring = loadCodecKeyring(config.codecKeys, config.dataDir);
  const databaseUrl = config.databaseUrl ?? DEFAULT_DATABASE_URL;
  await assertReachable(databaseUrl);
  await migrate(databaseUrl, 'orchestrator');
  const pool = createPool(databaseUrl, 'orchestrator');
  const keystore = await openKeystore(pool, { masterKey: config.keystoreMasterKey, dataDir: config.dataDir, agentKeys: config.agentKeys, log });
  const temporal = await createTemporalClient(config, keyring);
  log.info({ schedules: await ensureKeyRotationSchedules(temporal, config) }, 'key-rotation schedules ensured');
  log.info({ schedules: await ensureAddressBookSchedules(temporal, config) }, 'address-book schedules ensured');
  log.info({ schedule: await ensureRetentionSchedule(temporal, config) }, 'retention schedule ensured');
  log.info({ schedule: await ensureIncomingSweepSchedule(temporal, { group: config.group, taskQueue: config.temporal.taskQueue }, loadIncomingConfig()) }, 'incoming sweep schedule ensured');
  const app = await buildApi({
    temporal,
    pool,
    codec: new EncryptionCodec(keyring),
    taskQueue: config.temporal.taskQueue,
    logger: createLogger('api', config.logLevel),
    corsOrigins: [config.uiOrigin, config.uiOrigin.replace('localhost', '127.0.0.1')],
    transfers: openTransferContext({
      pool, network: config.network && new NetworkClient(config.network), keystore, masterKey: config.keystoreMasterKey,
      dataDir: config.dataDir, group: config.group, logger: createLogger('transfers', config.logLevel), config: loadTransferConfig(),
    }),
    keystore,
    console: { temporalUiUrl: config.uiOrigin, namespace: config.temporal.namespace },
  });
  await app.listen({ host: config.host, port: config.apiPort });
  log.info(`internal API listening on ${config.publicApiUrl} (docs at ${config.publicApiUrl}/docs)`);
  return async () => {
    await app.close();
    await temporal.connection.close();
    await pool.end();
  };
});
