import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitTransfer, tailLines } from '../../../bench/tail';
import { HISTORIES_DIR, historyFromFixture } from '../../replay/fixtures';

const fixture = (name: string) =>
  historyFromFixture(JSON.parse(readFileSync(join(HISTORIES_DIR, `${name}.json`), 'utf8')));

// The registry-accepted fixture's times, read from its JSON apart from the code under test (seconds since the epoch):
// WorkflowExecutionStarted 1796009546.562725337, the first WorkflowTaskStarted 1796009546.579311228, the second
// 1796009547.130840248.
const started = 1796009546562.725337;
const firstPickup = 1796009546579.311228;
const secondPickup = 1796009547130.840248;

describe('bench/tail: where an incoming transfer’s time went, from its history', () => {
  const history = fixture('incoming-transfer-registry-accepted');

  it('splits webhook → confirmed at the workflow’s start and its first task’s pickup', () => {
    const received = started - 20;
    const confirmed = firstPickup + 300;
    const split = splitTransfer({ id: 't', workflowId: 'w', received, confirmed }, history);
    expect(split.total).toBeCloseTo(confirmed - received, 6);
    expect(split.toStart).toBeCloseTo(20, 3);
    expect(split.toPickup).toBeCloseTo(firstPickup - started, 3);
    expect(split.toConfirm).toBeCloseTo(300, 3);
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
    const lines = tailLines([s, { ...s, tasksBefore: 2, failedBefore: 1 }], 1);
    expect(lines[0]).toContain('#1 slow   250 ms = received→started    20');
    expect(lines[1]).toMatch(/^ {4}median +250 ms .*\(2 tasks, 1 failed; received 06:30:01\.250\)$/);
  });
});
