import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

/**
 * OpenTelemetry's context in a worker process, without an AsyncLocalStorage of its own.
 *
 * OpenTelemetry's usual manager (AsyncLocalStorageContextManager) adds a store that Node copies onto every promise the
 * process makes: about 1,300 per transfer in a worker, and a measurable share of what tracing costs it. What a worker
 * traces happens inside activities, and each activity already runs in Temporal's own AsyncLocalStorage. So an
 * activity's trace context is kept beside its Temporal Context (`runActivity`) and found again through Temporal's store
 * (`currentActivity`, activities/context.ts) after any await; `with` covers the synchronous call it wraps, as OpenTelemetry's StackContextManager does in browsers.
 * That is enough for the Temporal Client's interceptors in the worker, which read the context before their first
 * await. A process that serves API requests (the API, all-in-one) keeps the AsyncLocalStorage manager: a request's
 * span must survive its handler's awaits.
 */
export class ActivityContextManager implements ContextManager {
  /** The trace context of each running activity, by the Temporal Context its AsyncLocalStorage holds. */
  private readonly activities = new WeakMap<object, Context>();
  /** The contexts of the `with` calls on the stack, innermost last. */
  private readonly stack: Context[] = [];

  /** `currentActivity`: the running activity's Temporal Context, undefined outside activities. */
  constructor(private readonly currentActivity: () => object | undefined) {}

  active(): Context {
    const top = this.stack[this.stack.length - 1];
    if (top) return top;
    const activity = this.currentActivity();
    return (activity && this.activities.get(activity)) ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    this.stack.push(context);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.stack.pop();
    }
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as (...args: unknown[]) => unknown;
    const with_ = this.with.bind(this);
    return function (this: unknown, ...args: unknown[]) {
      return with_(context, fn, this, ...args);
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.stack.length = 0;
    return this;
  }

  /**
   * Runs `fn`, the activity `activity` (its Temporal Context) through the interceptors after the caller's, with
   * `context` active in it until it settles, through its awaits.
   */
  async runActivity<T>(activity: object, context: Context, fn: () => Promise<T>): Promise<T> {
    this.activities.set(activity, context);
    try {
      return await this.with(context, fn);
    } finally {
      this.activities.delete(activity);
    }
  }
}
