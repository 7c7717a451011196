import { cpuSeconds, threadCpu, threadCpuBetween, threadCpuOf } from '../../../bench/cpu';

describe('bench/cpu: a process’s CPU, and its threads by kind', () => {
  it('tells a worker’s threads apart by name and by when they started', () => {
    // A worker process as /proc listed it: main, V8's and libuv's threads, the SDK's Rust threads, the workflow
    // thread, and V8's profiler thread under --cpu-prof.
    const threads = [
      { tid: 100, name: 'node', seconds: 6.4 },
      { tid: 102, name: 'node', seconds: 0.75 },
      { tid: 103, name: 'node', seconds: 0.8 },
      { tid: 108, name: 'v8:ProfEvntProc', seconds: 0.5 },
      { tid: 121, name: 'tokio-runtime-w', seconds: 0.37 },
      { tid: 122, name: 'tokio-runtime-w', seconds: 0.37 },
      { tid: 127, name: 'node', seconds: 2.48 },
      { tid: 130, name: 'temporal-real-s', seconds: 0 },
      { tid: 131, name: 'workflow-proces', seconds: 0.24 },
    ];
    const cpu = threadCpuOf(100, threads);
    expect(cpu.main).toBeCloseTo(6.4, 9);
    expect(cpu.helpers).toBeCloseTo(2.05, 9);
    expect(cpu.workflow).toBeCloseTo(2.48, 9);
    expect(cpu.temporalCore).toBeCloseTo(0.98, 9);
  });

  it('reads a live process’s threads: the busy main thread grows, and the kinds add up to the process', () => {
    const [before, processBefore] = [threadCpu(process.pid), cpuSeconds(process.pid)!];
    const start = process.cpuUsage();
    let x = 0;
    // 200 ms of this thread's CPU, however loaded the machine is.
    while (process.cpuUsage(start).user < 200_000) x += Math.sqrt(x + 1);
    const [after, processAfter] = [threadCpu(process.pid), cpuSeconds(process.pid)!];
    const spent = threadCpuBetween(before, after)!;
    expect(spent.main).toBeGreaterThanOrEqual(0.15);
    // Over the same interval the process's own figure and its threads' sum agree, to a few ticks of 10 ms.
    const threads = spent.main + spent.helpers + spent.workflow + spent.temporalCore;
    expect(Math.abs(processAfter - processBefore - threads)).toBeLessThanOrEqual(0.05);
    expect(x).toBeGreaterThan(0);
  });

  it('reads nothing for a process that is not there, and no difference without both readings', () => {
    expect(threadCpu(2 ** 22 + 1)).toBeUndefined();
    expect(cpuSeconds(2 ** 22 + 1)).toBeUndefined();
    const one = { main: 1, helpers: 1, workflow: 1, temporalCore: 1 };
    expect(threadCpuBetween(undefined, one)).toBeUndefined();
    expect(threadCpuBetween(one, undefined)).toBeUndefined();
  });
});
