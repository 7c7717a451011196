import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { ensureSchedule } from '../../client/schedules';
import { parseCodecKeys } from '../../lib/temporal/codec-keys';
import { createDataConverter } from '../../lib/temporal/data-converter';
import { testEnv } from '../harness/platform';

/**
 * One Temporal, two installations with codec keys of their own (two clones on one machine, say): a schedule the first
 * wrote cannot be decoded by the second, whose start must still bring its schedules up.
 */
describe('schedules that cannot be decoded', () => {
  let connection: Connection;
  const clientWith = (keyId: string) =>
    new Client({
      connection,
      dataConverter: createDataConverter(parseCodecKeys(`${keyId}:${randomBytes(32).toString('base64')}`)),
    });
  beforeAll(async () => {
    connection = await Connection.connect({ address: testEnv().temporalAddress });
  });
  afterAll(async () => connection?.close());

  it('are deleted and created again from configuration, instead of failing the start', async () => {
    const scheduleId = `undecodable-${randomBytes(4).toString('hex')}`;
    const options = (args: unknown[]) => ({
      scheduleId,
      spec: { intervals: [{ every: '1 day' }] },
      action: { type: 'startWorkflow' as const, workflowType: 'retention', taskQueue: `q-${scheduleId}`, args },
    });
    const first = clientWith('first');
    const second = clientWith('second');
    expect(await ensureSchedule(first, options([{ installation: 'first' }]))).toBe('created');
    expect(await ensureSchedule(first, options([{ installation: 'first', again: true }]))).toBe('updated');
    // The first installation's key is not the second's: before, this threw the codec's "not configured" error.
    expect(await ensureSchedule(second, options([{ installation: 'second' }]))).toBe('recreated');
    const described = await second.schedule.getHandle(scheduleId).describe();
    expect(described.action.type === 'startWorkflow' && described.action.args).toEqual([{ installation: 'second' }]);
    expect(await ensureSchedule(second, options([{ installation: 'second' }]))).toBe('updated');
    await second.schedule.getHandle(scheduleId).delete();
  });
});
