/**
 * Bench only, never in production: runs `vm.Script#runInContext` without its `timeout` option, to measure what Node's
 * per-call watchdog costs the worker. The Temporal SDK enters the workflow sandbox with `timeout`
 * (isolateExecutionTimeout, 5 s: its guard against a workflow that never yields), and Node makes each such call start
 * and join a thread of its own (nodejs/node#47739). Loaded with NODE_OPTIONS=--require=… in the worker process, whose
 * workflow thread inherits it (bench:transfers' `variant` path, docs/benchmarks.md).
 */
const vm = require('node:vm');
const { isMainThread } = require('node:worker_threads');

const runInContext = vm.Script.prototype.runInContext;
let announced = false;
vm.Script.prototype.runInContext = function (context, options) {
  if (options && options.timeout !== undefined) {
    if (!announced) {
      announced = true;
      process.stderr.write(
        `bench: vm.Script#runInContext without its watchdog (${isMainThread ? 'main' : 'worker'} thread)\n`,
      );
    }
    const { timeout: _, ...rest } = options;
    return runInContext.call(this, context, rest);
  }
  return runInContext.call(this, context, options);
};
