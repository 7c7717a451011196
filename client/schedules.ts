import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';

/**
 * Creates a Temporal Schedule, or brings an existing one up to date, so every start of the API converges on the same
 * schedules without duplicating them. Overlapping runs are skipped unless the spec says otherwise.
 */
export async function ensureSchedule(client: Client, options: ScheduleOptions): Promise<'created' | 'updated'> {
  const withDefaults: ScheduleOptions = {
    ...options,
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour', ...options.policies },
  };
  try {
    await client.schedule.create(withDefaults);
    return 'created';
  } catch (e) {
    if (!(e instanceof ScheduleAlreadyRunning)) throw e;
    await client.schedule.getHandle(options.scheduleId).update((previous) => ({
      ...previous,
      spec: withDefaults.spec,
      action: withDefaults.action as never,
      policies: { ...previous.policies, ...withDefaults.policies },
      state: { ...previous.state, paused: previous.state.paused },
    }));
    return 'updated';
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
