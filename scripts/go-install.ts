import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Go-built tools (the Temporal CLI, server, SQL tool and UI server) are built once per machine with `go install` into
 * a cache outside the repo, so a fresh clone, `rm -rf node_modules` or CI reuse them.
 */
export function toolCacheDir(name: string): string {
  const base =
    process.env.TEMPORAL_CLI_CACHE ||
    join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'travel-rule-orchestrator');
  return join(base, name);
}

export const executable = (p: string) => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

export function goBinary(): string | undefined {
  for (const candidate of ['go', '/usr/local/go/bin/go', join(homedir(), 'go', 'bin', 'go')]) {
    const r = spawnSync(candidate, ['version'], { stdio: 'ignore' });
    if (r.status === 0) return candidate;
  }
  return undefined;
}

export function requireGo(what: string): string {
  const go = goBinary();
  if (!go) {
    throw new Error(
      `${what} is not built and Go is not available to build it. Install Go 1.23 or newer ` +
        '(https://go.dev/doc/install, or `apt-get install golang-go`).',
    );
  }
  return go;
}

/** `go install <module>@<version>` into `dir`, printing progress every 20 s; `binary` is the file it must produce. */
export async function goInstall(opts: {
  module: string;
  version: string;
  dir: string;
  binary: string;
  label: string;
  log: (line: string) => void;
}): Promise<string> {
  const go = requireGo(opts.label);
  mkdirSync(opts.dir, { recursive: true });
  opts.log(`Building ${opts.label} ${opts.version} into ${opts.dir} (once per machine; takes a few minutes)…`);
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(go, ['install', `${opts.module}@${opts.version}`], {
      env: { ...process.env, GOBIN: opts.dir, GOFLAGS: `${process.env.GOFLAGS ?? ''} -buildvcs=false`.trim() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let downloaded = 0;
    const tick = setInterval(
      () =>
        opts.log(
          `  …still building ${opts.label} (${Math.round((Date.now() - started) / 1000)} s, ${downloaded} modules fetched)`,
        ),
      20_000,
    );
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
      else reject(new Error(`go install ${opts.module}@${opts.version} failed (exit ${code}):\n${tail}`));
    });
  });
  const built = join(opts.dir, opts.binary);
  if (!existsSync(built)) throw new Error(`go install finished but ${built} is missing`);
  opts.log(`${opts.label} built in ${Math.round((Date.now() - started) / 1000)} s: ${built}`);
  return built;
}

/** Where a module's source is in Go's module cache (downloaded if missing): the Temporal server's schemas and configs. */
export function goModuleDir(module: string, version: string): string {
  const go = requireGo(`${module}@${version}`);
  const r = spawnSync(go, ['mod', 'download', '-json', `${module}@${version}`], { encoding: 'utf8', cwd: homedir() });
  const answer = JSON.parse(r.stdout || '{}') as { Dir?: string; Error?: string };
  if (r.status !== 0 || !answer.Dir)
    throw new Error(`go mod download ${module}@${version} failed: ${answer.Error ?? r.stderr}`);
  return answer.Dir;
}
