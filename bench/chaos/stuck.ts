/**
 * What a workflow still running at the end of the chaos run's watch is waiting for: its pending activities with their
 * attempt, last heartbeat and last failure (decoded with the run's codec). Printed when quiescence is not reached, so a
 * run that fails there (in CI, whose data dir is gone afterwards) says where the work stopped.
 */
import { Client, Connection } from '@temporalio/client';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { parseCodecKeys } from '../../lib/temporal/codec-keys';
import { createDataConverter } from '../../lib/temporal/data-converter';

export async function describeStuck(
  temporalAddress: string,
  codecKeys: string,
  workflowIds: string[],
): Promise<string[]> {
  const lines: string[] = [];
  const connection = await Connection.connect({ address: temporalAddress, connectTimeout: '5s' });
  try {
    const dataConverter = createDataConverter(parseCodecKeys(codecKeys));
    const client = new Client({ connection, dataConverter });
    for (const id of workflowIds) {
      try {
        const d = await client.workflow.getHandle(id).describe();
        lines.push(`  ${id}: ${d.status.name}, ${d.historyLength} events`);
        for (const a of d.raw.pendingActivities ?? []) {
          const failure = await decodeOptionalFailureToOptionalError(
            client.options.loadedDataConverter,
            a.lastFailure ?? undefined,
          );
          const heartbeat = a.lastHeartbeatTime?.seconds
            ? new Date(Number(a.lastHeartbeatTime.seconds) * 1000)
            : undefined;
          lines.push(
            `    activity ${a.activityType?.name} (${a.activityId}): state ${a.state}, attempt ${a.attempt}` +
              `${heartbeat ? `, last heartbeat ${heartbeat.toISOString()}` : ''}` +
              `${failure ? `, last failure: ${failure.message.slice(0, 400)}${failure.cause ? ` (cause: ${String((failure.cause as Error).message).slice(0, 300)})` : ''}` : ''}`,
          );
        }
        if (!d.raw.pendingActivities?.length)
          lines.push('    no pending activity (waiting on a timer, a signal or a child)');
      } catch (e) {
        lines.push(`  ${id}: cannot describe (${(e as Error).message.split('\n')[0]})`);
      }
    }
  } finally {
    await connection.close();
  }
  return lines;
}
