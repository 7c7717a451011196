import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { dropDatabase } from '../../db/database-url';
import { initTemporalCluster } from '../../scripts/cluster/temporal-cluster';
import { prepareRunCluster } from '../../scripts/cluster/run-server';
import { prepareRun, setupLog, type RunKeys } from './global-setup';
import { teardownRun } from './global-teardown';

/**
 * The cluster suite's Temporal: the real server on PostgreSQL, exactly as `npm run start:cluster` prepares it (its own
 * databases for this run, dropped at the end), on free ports (scripts/cluster/run-server.ts, shared with `npm run chaos
 * -- --cluster`). The server runs detached with its pid in a state file, so a test can restart it
 * (`restartTemporalServer`) and the teardown stops whichever process runs then.
 */
interface ClusterState {
  /** The process that ran the set-up (jest's main process, or a benchmark). */
  owner: number;
  command: string[];
  databases: string[];
  pid: number;
  log: string;
  address: string;
}

export const CLUSTER_RUN: RunKeys = { envPrefix: 'TEST_CLUSTER_', globalKey: '__clusterTestRun' };

const stateFile = () => {
  const path = process.env.TEST_CLUSTER_STATE;
  if (!path) throw new Error('TEST_CLUSTER_STATE is unset: run the cluster suite through jest (npm test)');
  return path;
};
const readState = (): ClusterState => JSON.parse(readFileSync(stateFile(), 'utf8')) as ClusterState;

function spawnServer(command: string[], log: string): number {
  const out = openSync(log, 'a');
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', out, out], detached: true });
  child.unref();
  return child.pid!;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function stopServer(pid: number): Promise<void> {
  if (!alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 20_000;
  while (alive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function waitForFrontend(address: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const c = await Connection.connect({ address, connectTimeout: '1s' });
      try {
        await c.workflowService.getSystemInfo({});
        return;
      } finally {
        await c.close();
      }
    } catch (e) {
      if (Date.now() > deadline)
        throw new Error(
          `the Temporal server at ${address} did not come back within ${timeoutMs / 1000} s: ${(e as Error).message}`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Stops the run's Temporal server (SIGTERM) and starts it again on the same databases and ports. */
export async function restartTemporalServer(): Promise<void> {
  const state = readState();
  await stopServer(state.pid);
  const pid = spawnServer(state.command, state.log);
  writeFileSync(stateFile(), JSON.stringify({ ...state, pid }));
  await waitForFrontend(state.address);
}

/**
 * A run killed before its teardown (jest or a benchmark stopped with SIGKILL) leaves its detached server running and
 * its databases behind: stop and drop those of runs whose owner process is gone.
 */
async function removeAbandonedRuns(serverUrl: string): Promise<void> {
  for (const entry of readdirSync(tmpdir()).filter((e) => e.startsWith('tro-cluster-'))) {
    const dir = join(tmpdir(), entry);
    let state: ClusterState;
    try {
      state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as ClusterState;
    } catch {
      continue;
    }
    if (!state.owner || alive(state.owner)) continue;
    // Only the server this run started: a pid may have been reused since.
    const cmdline = (() => {
      try {
        return readFileSync(`/proc/${state.pid}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    })();
    if (cmdline.includes(dir)) await stopServer(state.pid);
    await Promise.all(state.databases.map((d) => dropDatabase(serverUrl, d)));
    rmSync(dir, { recursive: true, force: true });
    setupLog(`removed an abandoned cluster run (${state.databases.join(', ')})`);
  }
}

/** jest globalSetup of the `cluster` project. */
export default async function clusterGlobalSetup(): Promise<void> {
  await prepareRun(CLUSTER_RUN, async (server) => {
    await removeAbandonedRuns(server.serverUrl);
    const rootDir = mkdtempSync(join(tmpdir(), 'tro-cluster-'));
    const run = await prepareRunCluster({
      serverUrl: server.serverUrl,
      rootDir,
      database: `tro_test_temporal_${Date.now()}_${process.pid}`,
      log: setupLog,
    });
    const { address, command, databases } = run;
    const log = join(rootDir, 'server.log');
    const state: ClusterState = {
      owner: process.pid,
      command,
      databases,
      pid: spawnServer(command, log),
      log,
      address,
    };
    const pid = state.pid;
    process.env.TEST_CLUSTER_STATE = join(rootDir, 'state.json');
    writeFileSync(process.env.TEST_CLUSTER_STATE, JSON.stringify(state));
    const teardown = async () => {
      await stopServer(readState().pid);
      await run.dropDatabases();
      rmSync(rootDir, { recursive: true, force: true });
    };
    try {
      await initTemporalCluster(address, 'default', { timeoutMs: 60_000, isStopped: () => !alive(pid) });
    } catch (e) {
      setupLog(`the Temporal server did not start; its log:\n${readFileSync(log, 'utf8').slice(-3000)}`);
      await teardown();
      throw e;
    }
    setupLog(`Temporal server on PostgreSQL at ${address} (databases ${databases.join(', ')})`);
    return { address, teardown };
  });
}

/** The running server's pid (it changes with each restart). */
export const clusterServerPid = (): number => readState().pid;

/** The server's two databases. */
export const clusterDatabaseNames = (): string[] => readState().databases;

/** jest globalTeardown of the `cluster` project. */
export const clusterGlobalTeardown = () => teardownRun(CLUSTER_RUN);

/** jest setupFiles of the `cluster` project: the harness (platform.ts) reads TEST_*, so point those at the cluster. */
export function useClusterRun(): void {
  for (const name of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'WORKFLOW_BUNDLE', 'CODEC_KEYS']) {
    process.env[`TEST_${name}`] = process.env[`TEST_CLUSTER_${name}`];
  }
}
