import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

/**
 * Finds the Temporal CLI (which contains the dev server), or builds it once. Order: `TEMPORAL_CLI_PATH`, then `PATH`,
 * then a cache outside the repo (so a fresh clone, `rm -rf node_modules` or CI reuse it), else
 * `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` into that cache. v1.5.1 is the newest tag that can be
 * go-installed; the SDK's own download of the binary cannot work offline.
 */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';

export function cacheDir(): string {
  const base = process.env.TEMPORAL_CLI_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'travel-rule-orchestrator');
  return join(base, `temporal-cli-${TEMPORAL_CLI_VERSION}`);
}

const executable = (p: string) => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The CLI's path if one is already available, without building anything. */
export function findTemporalCli(): string | undefined {
  const configured = process.env.TEMPORAL_CLI_PATH;
  if (configured) {
    if (!executable(configured)) throw new Error(`TEMPORAL_CLI_PATH=${configured} is not an executable file`);
    return configured;
  }
  for (const dir of (process.env.PATH || '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, 'temporal');
    if (executable(candidate) && answersAsServer(candidate)) return candidate;
  }
  const cached = join(cacheDir(), 'temporal');
  return executable(cached) ? cached : undefined;
}

/** A `temporal` on PATH might be something else entirely; only accept one that has the dev server. */
function answersAsServer(path: string): boolean {
  const r = spawnSync(path, ['server', 'start-dev', '--help'], { stdio: 'ignore', timeout: 10_000 });
  return r.status === 0;
}

function goBinary(): string | undefined {
  for (const candidate of ['go', '/usr/local/go/bin/go', join(homedir(), 'go', 'bin', 'go')]) {
    const r = spawnSync(candidate, ['version'], { stdio: 'ignore' });
    if (r.status === 0) return candidate;
  }
  return undefined;
}

/** Finds the CLI or builds it into the cache (a few minutes, once per machine), printing progress to stderr. */
export async function ensureTemporalCli(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<string> {
  const found = findTemporalCli();
  if (found) return found;
  const go = goBinary();
  if (!go) {
    throw new Error(
      'The Temporal CLI is not installed and Go is not available to build it. Install Go 1.23 or newer ' +
        '(https://go.dev/doc/install, or `apt-get install golang-go`), or install the Temporal CLI yourself and set ' +
        'TEMPORAL_CLI_PATH to it.',
    );
  }
  const dir = cacheDir();
  mkdirSync(dir, { recursive: true });
  log(`Building the Temporal CLI ${TEMPORAL_CLI_VERSION} into ${dir} (once per machine; takes a few minutes)…`);
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(go, ['install', `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`], {
      env: { ...process.env, GOBIN: dir, GOFLAGS: `${process.env.GOFLAGS ?? ''} -buildvcs=false`.trim() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let downloaded = 0;
    const tick = setInterval(() => log(`  …still building (${Math.round((Date.now() - started) / 1000)} s, ${downloaded} modules fetched)`), 20_000);
    let tail = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      downloaded += (text.match(/go: downloading/g) ?? []).length;
      tail = (tail + text).slice(-4000);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(tick);
      if (code === 0) resolve();
      else reject(new Error(`go install ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION} failed (exit ${code}):\n${tail}`));
    });
  });
  const built = join(dir, 'temporal');
  if (!existsSync(built)) throw new Error(`go install finished but ${built} is missing`);
  log(`Temporal CLI built in ${Math.round((Date.now() - started) / 1000)} s: ${built}`);
  return built;
}

if (require.main === module) {
  ensureTemporalCli().then(
    (path) => process.stdout.write(`${path}\n`),
    (e: Error) => {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    },
  );
}
