import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitTransfer, tailLines } from '../../../bench/tail';
import { HISTORIES_DIR, historyFromFixture } from '../../replay/fixtures';

const FIXTURE = 'incoming-transfer-registry-accepted';
const json = JSON.parse(readFileSync(join(HISTORIES_DIR, `${FIXTURE}.json`), 'utf8'));

// The fixture's times read from its JSON, apart from the code under test (which reads the decoded history): the
// WorkflowExecutionStarted event and the first two WorkflowTaskStarted, in ms since the epoch.
type JsonEvent = { eventType: string; eventTime: { seconds: string; nanos?: number } };
const msOf = (e: JsonEvent) => Number(e.eventTime.seconds) * 1000 + (e.eventTime.nanos ?? 0) / 1e6;
const events = json.events as JsonEvent[];
const started = msOf(events.find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED')!);
const [firstPickup, secondPickup] = events
  .filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_STARTED')
  .map(msOf) as [number, number];

describe('bench/tail: where an incoming transfer’s time went, from its history', () => {
  const history = historyFromFixture(json);

  it('splits webhook → confirmed at the workflow’s start and its first task’s pickup', () => {
    const received = started - 20;
    // Between the first task's pickup and the second's: the confirmation came in the first task.
    const inFirstTask = (secondPickup - firstPickup) / 2;
    const confirmed = firstPickup + inFirstTask;
    const split = splitTransfer({ id: 't', workflowId: 'w', received, confirmed }, history);
    expect(split.total).toBeCloseTo(confirmed - received, 6);
    expect(split.toStart).toBeCloseTo(20, 3);
    expect(split.toPickup).toBeCloseTo(firstPickup - started, 3);
    expect(split.toConfirm).toBeCloseTo(inFirstTask, 3);
    expect(split.toStart + split.toPickup + split.toConfirm).toBeCloseTo(split.total, 3);
    expect(split).toMatchObject({ tasksBefore: 1, failedBefore: 0 });
  });

  it('counts the tasks started before a confirmation that came later', () => {
    const split = splitTransfer({ id: 't', workflowId: 'w', received: started, confirmed: secondPickup + 1 }, history);
    expect(split.tasksBefore).toBe(2);
    expect(split.toConfirm).toBeCloseTo(secondPickup + 1 - firstPickup, 3);
  });

  it('gives NaN parts for a history without the events', () => {
    const split = splitTransfer({ id: 't', workflowId: 'w', received: 0, confirmed: 10 }, { events: [] });
    expect(split.total).toBe(10);
    expect(split.toStart).toBeNaN();
    expect(split.tasksBefore).toBe(0);
  });

  it('labels the median line apart from the slow ones', () => {
    const s = {
      id: 't',
      received: Date.UTC(2026, 10, 30, 6, 30, 1, 250),
      total: 250,
      toStart: 20,
      toPickup: 30,
      toConfirm: 200,
      tasksBefore: 1,
      failedBefore: 0,
    };
    const lines = tailLines({ slowest: [s], median: { ...s, tasksBefore: 2, failedBefore: 1 } });
    expect(lines[0]).toContain('#1 slow   250 ms = received→started    20');
    expect(lines[1]).toMatch(/^ {4}median +250 ms .*\(2 tasks, 1 failed; received 06:30:01\.250\)$/);
  });
});
