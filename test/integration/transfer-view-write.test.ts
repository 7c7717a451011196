/**
 * The list write of a step that goes on without it (the outgoing send step, both directions' last step): the entry is
 * written, and when the database refuses it the step is told `false` with a warning naming the transfer, instead of
 * failing. In a database of its own, migrated; the refused write goes through a pool already closed.
 */
import type { Pool } from 'pg';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import type { Logger } from '../../lib/logger';
import { getTransferView, writeTransferViewOrLog } from '../../transfer-view/store';
import type { TransferViewUpdate } from '../../transfer-view/types';
import { ownDatabase } from '../harness/platform';

describe('writeTransferViewOrLog', () => {
  const db = ownDatabase('view_write');
  let pool: Pool;
  const warnings: unknown[][] = [];
  const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
  const entry: TransferViewUpdate = {
    workflowId: 'incoming-tx-view-write',
    direction: 'incoming',
    id: 'tx-view-write',
    status: 'ACCEPTED',
    phase: 'completed',
    final: true,
    needsReview: false,
    needsRouting: false,
    escalated: false,
    createdAt: '2026-11-30T10:00:00.000Z',
    version: 12,
  };

  beforeAll(async () => {
    await db.create();
    await migrate(db.url, 'orchestrator');
    pool = createPool(db.url, 'orchestrator');
  });
  afterAll(async () => {
    await pool?.end();
    await db.drop();
  });

  it('writes the entry and answers true', async () => {
    expect(await writeTransferViewOrLog(pool, logger, entry)).toBe(true);
    expect(await getTransferView(pool, entry.workflowId)).toMatchObject({ status: 'ACCEPTED', final: true });
    expect(warnings).toEqual([]);
  });

  it('answers false with a warning naming the transfer when the write fails, and does not throw', async () => {
    const closed = createPool(db.url, 'orchestrator');
    await closed.end();
    expect(await writeTransferViewOrLog(closed, logger, { ...entry, version: 13 })).toBe(false);
    expect(warnings).toEqual([
      [{ id: 'tx-view-write', error: expect.any(String) }, 'the console transfer list could not be updated'],
    ]);
  });
});
