/**
 * Writes the signed checkpoints of the audit chains (audit/checkpoint-signature.ts) while the API runs: one at start, then
 * every interval when the heads changed, and at least once a heartbeat when they did not, so the newest checkpoint's
 * age tells `audit verify` that checkpoints kept being written.
 */
import type { Pool } from 'pg';
import { writeAuditCheckpoint } from './checkpoint-store';
import type { CheckpointKeyring } from './checkpoint-signature';
import type { Logger } from '../lib/logger';

export interface CheckpointSchedule {
  pool: Pool;
  keyring: CheckpointKeyring;
  intervalMs: number;
  heartbeatMs: number;
  logger: Logger;
}

/** Starts writing; the returned function stops and waits for a write under way. */
export async function startAuditCheckpoints(s: CheckpointSchedule): Promise<() => Promise<void>> {
  let running: Promise<unknown> = Promise.resolve();
  const write = (unlessUnchangedFor?: number) => {
    running = writeAuditCheckpoint(s.pool, s.keyring, { unlessUnchangedFor })
      .then((c) => c && s.logger.debug({ checkpoint: c.seq, chains: c.heads.length }, 'audit checkpoint signed'))
      .catch((e: Error) =>
        s.logger.warn(
          { err: { message: e.message } },
          'audit checkpoint could not be written; next try at the next interval',
        ),
      );
    return running;
  };
  // A failure at start is logged, not fatal: the API serves, and the next interval tries again.
  await write(s.heartbeatMs);
  const timer = setInterval(() => void write(s.heartbeatMs), s.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
