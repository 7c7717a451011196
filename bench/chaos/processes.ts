/**
 * The stack of `npm run chaos` as separate processes that can be SIGKILLed and started again with the same command:
 * the Temporal server (the dev server on a file in the run's directory, or the server on PostgreSQL: either way its
 * state survives a restart; bench/chaos/temporal.ts), the sandbox, the internal API and the worker. Each appends to
 * `<dataDir>/logs/<name>.log`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { entryArgs } from '../launch';

const root = resolve(__dirname, '..', '..');
// `node --import tsx`, not the tsx CLI: the CLI runs the script in a child process, which a SIGKILL of the CLI
// would leave running.
export const tsxArgs = (entry: string) => [process.execPath, ...entryArgs(entry, 'source', root)];

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not become ready within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

export const httpOk = (url: string) => async () => (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok;

export const temporalReady = (address: string) => async () => {
  const c = await Connection.connect({ address, connectTimeout: '1s' });
  try {
    await c.workflowService.getSystemInfo({});
    return true;
  } finally {
    await c.close();
  }
};

/** One process of the stack: started, killed and started again with the same command and environment. */
export class Proc {
  private child?: ChildProcess;
  private log: WriteStream;
  restarts = 0;

  constructor(
    readonly name: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
    logDir: string,
    private readonly ready: () => Promise<boolean>,
  ) {
    this.log = createWriteStream(resolve(logDir, `${name}.log`), { flags: 'a' });
  }

  get pid(): number | undefined {
    return this.child?.exitCode === null ? this.child.pid : undefined;
  }

  async start(): Promise<void> {
    const child = spawn(this.args[0]!, this.args.slice(1), {
      cwd: root,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    this.child = child;
    await waitFor(this.name, this.ready);
  }

  /** Kills the process (SIGKILL unless told) and waits until it is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await gone;
    clearTimeout(t);
  }

  async restart(pauseMs = 0, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.kill(signal);
    this.log.write(`\n--- chaos: ${this.name} killed (${signal}), restarting after ${pauseMs} ms ---\n`);
    await sleep(pauseMs);
    this.restarts++;
    await this.start();
  }

  async stop(): Promise<void> {
    await this.kill('SIGTERM');
    this.log.end();
  }
}
