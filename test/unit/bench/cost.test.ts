import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { addCosts, countHistory, sample, summarize } from '../../../bench/cost';
import { HISTORIES_DIR, historyFromFixture } from '../../replay/fixtures';

const fixture = (name: string) =>
  historyFromFixture(JSON.parse(readFileSync(join(HISTORIES_DIR, `${name}.json`), 'utf8')));

describe("bench/cost: a workflow's cost counted from its history", () => {
  it('counts a recorded outgoing transfer held by policy and released, as counted by hand from its events', () => {
    // The fixture's 43 events: 6 workflow tasks scheduled and started, 5 completed (the last was in flight when it was
    // recorded); 7 markers, of which 6 core_local_activity and 1 core_patch; 1 activity; 3 timers started (2
    // cancelled); 3 signals; 1 update accepted and completed; 5 search attribute upserts; no closing event.
    const cost = countHistory(fixture('outgoing-transfer-policy-held-released'));
    expect(cost).toEqual({
      runs: 1,
      workflowTasks: 5,
      failedWorkflowTasks: 0,
      activations: 6 + 6,
      activities: 1,
      localActivities: 6,
      timers: 3,
      signals: 3,
      updates: 1,
      children: 0,
      events: 43,
      // 29 payloads, their protobuf size computed apart from the code under test (a script sizing each metadata entry
      // and the data field from the fixture's JSON).
      payloads: 29,
      payloadBytes: 13360,
      plainBytes: 0,
      open: 1,
      // Summed from the events' timestamps by a script apart from the code under test: each WorkflowTaskStarted less
      // its scheduled event, each WorkflowTaskCompleted less its started event (to a microsecond: the sums are of
      // epoch milliseconds in doubles); no closing event, so no life.
      taskWaitMs: expect.closeTo(18.271327, 3),
      taskRunMs: expect.closeTo(246.488914, 3),
      lifeMs: NaN,
    });
  });

  it('counts a closed run, and one that continued as new as closed', () => {
    const accepted = countHistory(fixture('outgoing-transfer-accepted'));
    expect(accepted).toMatchObject({
      workflowTasks: 3,
      activities: 1,
      localActivities: 3,
      timers: 2,
      signals: 0,
      events: 24,
      open: 0,
    });
    // Its times, summed the same way apart from the code; start to close from the first event to the completion.
    expect(accepted.taskWaitMs).toBeCloseTo(24.767787, 3);
    expect(accepted.taskRunMs).toBeCloseTo(367.858194, 3);
    expect(accepted.lifeMs).toBeCloseTo(1126.713734, 3);
    // 41 events: started, 7 workflow tasks (scheduled, started, completed), 6 activities (the same), continued as new.
    const first = countHistory(fixture('address-book-first-sync.1'));
    expect(first).toMatchObject({ workflowTasks: 7, activities: 6, localActivities: 0, events: 41, open: 0 });
    // A chain's runs add up.
    const chain = addCosts(first, countHistory(fixture('address-book-first-sync.2')));
    expect(chain.runs).toBe(2);
    expect(chain.events).toBe(first.events + countHistory(fixture('address-book-first-sync.2')).events);
  });

  it('sizes a payload as its protobuf encoding: each metadata entry and the data, with their tags and lengths', () => {
    const { History } = temporal.api.history.v1;
    const history = History.fromObject({
      events: [
        {
          eventId: 1,
          workflowExecutionStartedEventAttributes: {
            input: { payloads: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"hi"') }] },
          },
        },
      ],
    });
    // metadata entry: 1 tag + 1 length + (1 + 1 + 8 "encoding") + (1 + 1 + 10 "json/plain") = 24; data: 1 + 1 + 4 = 6.
    expect(countHistory(history)).toMatchObject({ events: 1, payloads: 1, payloadBytes: 30, workflowTasks: 0 });
  });

  it('summarizes mean, p50 and max, and samples evenly', () => {
    const a = countHistory(fixture('connectivity-check'));
    const b = countHistory(fixture('outgoing-transfer-accepted'));
    const s = summarize('t', [a, a, b]);
    expect(s.workflows).toBe(3);
    expect(s.mean.events).toBeCloseTo((2 * a.events + b.events) / 3);
    expect(s.p50.events).toBe(a.events);
    expect(s.max.events).toBe(Math.max(a.events, b.events));
    expect(sample([1, 2, 3], 50)).toEqual([1, 2, 3]);
    expect(
      sample(
        Array.from({ length: 100 }, (_, i) => i),
        4,
      ),
    ).toEqual([0, 25, 50, 75]);
  });
});
