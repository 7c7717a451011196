import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { executable, goBinary, goInstall, toolCacheDir } from './go-install';

/**
 * Finds the Temporal CLI (which contains the dev server), or builds it once. Order: `TEMPORAL_CLI_PATH`, then `PATH`,
 * then a cache outside the repo (so a fresh clone, `rm -rf node_modules` or CI reuse it), else
 * `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` into that cache. v1.5.1 is the newest tag that can be
 * go-installed; the SDK's own download of the binary cannot work offline.
 */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';

export function cacheDir(): string {
  return toolCacheDir(`temporal-cli-${TEMPORAL_CLI_VERSION}`);
}

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

/** Finds the CLI or builds it into the cache (a few minutes, once per machine), printing progress to stderr. */
export async function ensureTemporalCli(
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<string> {
  const found = findTemporalCli();
  if (found) return found;
  if (!goBinary()) {
    throw new Error(
      'The Temporal CLI is not installed and Go is not available to build it. Install Go 1.23 or newer ' +
        '(https://go.dev/doc/install, or `apt-get install golang-go`), or install the Temporal CLI yourself and set ' +
        'TEMPORAL_CLI_PATH to it.',
    );
  }
  return goInstall({
    module: TEMPORAL_CLI_MODULE,
    version: TEMPORAL_CLI_VERSION,
    dir: cacheDir(),
    binary: 'temporal',
    label: 'the Temporal CLI',
    log,
  });
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
