import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT_CONTEXT, createContextKey, type Context } from '@opentelemetry/api';
import { asyncLocalStorage as activityStorage } from '@temporalio/activity';
import { ActivityContextManager } from '../../../lib/tracing/activity-context';
import { currentActivity } from '../../../activities/context';

const KEY = createContextKey('test');
const tagged = (tag: string): Context => ROOT_CONTEXT.setValue(KEY, tag);
const tagOf = (c: Context) => c.getValue(KEY);

/** Runs `fn` as Temporal runs an activity: inside its AsyncLocalStorage, with the activity's Context as the store. */
const asActivity = <T>(fn: (activity: object) => Promise<T>): Promise<T> => {
  const activity = {};
  return activityStorage.run(activity as never, () => fn(activity));
};

describe('ActivityContextManager: trace contexts in a worker without an AsyncLocalStorage of their own', () => {
  const manager = new ActivityContextManager(currentActivity);

  it('is the root context outside activities and `with`', async () => {
    expect(manager.active()).toBe(ROOT_CONTEXT);
    await asActivity(async () => expect(manager.active()).toBe(ROOT_CONTEXT));
  });

  it("keeps an activity's context through its awaits, apart from another activity's, and drops it at its end", async () => {
    const seen: unknown[] = [];
    const run = (tag: string, ms: number) =>
      asActivity((activity) =>
        manager.runActivity(activity, tagged(tag), async () => {
          seen.push(`${tag} start ${String(tagOf(manager.active()))}`);
          await sleep(ms);
          seen.push(`${tag} after ${String(tagOf(manager.active()))}`);
          await Promise.resolve();
          return tagOf(manager.active());
        }),
      );
    // Interleaved: b starts while a waits, and ends first.
    await expect(Promise.all([run('a', 30), run('b', 5)])).resolves.toEqual(['a', 'b']);
    expect(seen).toEqual(['a start a', 'b start b', 'b after b', 'a after a']);
    await asActivity(async (activity) => {
      await manager.runActivity(activity, tagged('c'), async () => undefined);
      // The same activity after runActivity returned: nothing is left behind.
      expect(manager.active()).toBe(ROOT_CONTEXT);
    });
  });

  it("`with` covers the synchronous call, then the activity's context is back", async () => {
    await asActivity((activity) =>
      manager.runActivity(activity, tagged('activity'), async () => {
        const inner = manager.with(tagged('inner'), async () => {
          const sync = tagOf(manager.active());
          await Promise.resolve();
          return [sync, tagOf(manager.active())];
        });
        expect(tagOf(manager.active())).toBe('activity');
        await expect(inner).resolves.toEqual(['inner', 'activity']);
        // Nested: the innermost wins, and each returns to the one around it.
        manager.with(tagged('outer'), () => {
          manager.with(tagged('innermost'), () => expect(tagOf(manager.active())).toBe('innermost'));
          expect(tagOf(manager.active())).toBe('outer');
        });
        // A throw still pops.
        expect(() =>
          manager.with(tagged('thrown'), () => {
            throw new Error('x');
          }),
        ).toThrow('x');
        expect(tagOf(manager.active())).toBe('activity');
      }),
    );
  });

  it('binds a function to a context, with its receiver and arguments, and leaves other values alone', () => {
    const bound = manager.bind(tagged('bound'), function (this: { n: number }, by: number) {
      return [tagOf(manager.active()), this.n + by];
    });
    expect(bound.call({ n: 1 }, 2)).toEqual(['bound', 3]);
    expect(manager.active()).toBe(ROOT_CONTEXT);
    const value = { not: 'a function' };
    expect(manager.bind(tagged('x'), value)).toBe(value);
  });
});
