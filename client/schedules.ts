import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptions,
} from '@temporalio/client';
import { ValueError } from '@temporalio/common';

/** What ensuring a schedule did; 'recreated': the existing one could not be decoded and was replaced. */
export type ScheduleOutcome = 'created' | 'updated' | 'recreated' | 'deleted' | 'absent';

/**
 * Creates a Temporal Schedule, or brings an existing one up to date, so every start of the API converges on the same
 * schedules without duplicating them. Overlapping runs are skipped unless the spec says otherwise. An existing schedule
 * whose action cannot be decoded (encrypted with a codec key this installation does not hold, say a development key
 * of another clone on the same Temporal) is deleted and created again from configuration, rather than stopping the
 * API's start: its definition is configuration, so nothing is lost.
 */
export async function ensureSchedule(client: Client, options: ScheduleOptions): Promise<ScheduleOutcome> {
  const withDefaults: ScheduleOptions = {
    ...options,
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour', ...options.policies },
  };
  try {
    await client.schedule.create(withDefaults);
    return 'created';
  } catch (e) {
    if (!(e instanceof ScheduleAlreadyRunning)) throw e;
    const handle = client.schedule.getHandle(options.scheduleId);
    try {
      await handle.update((previous) => ({
        ...previous,
        spec: withDefaults.spec,
        action: withDefaults.action as never,
        policies: { ...previous.policies, ...withDefaults.policies },
        state: { ...previous.state, paused: previous.state.paused },
      }));
      return 'updated';
    } catch (undecodable) {
      if (!(undecodable instanceof ValueError)) throw undecodable;
      await handle.delete();
      await client.schedule.create(withDefaults);
      return 'recreated';
    }
  }
}

/** Deletes a schedule that configuration turned off; one that is already gone is fine. */
export async function removeSchedule(client: Client, scheduleId: string): Promise<'deleted' | 'absent'> {
  try {
    await client.schedule.getHandle(scheduleId).delete();
    return 'deleted';
  } catch (e) {
    if (!(e instanceof ScheduleNotFoundError)) throw e;
    return 'absent';
  }
}
