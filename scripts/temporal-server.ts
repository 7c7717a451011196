import { join } from 'node:path';
import { executable, goInstall, goModuleDir, toolCacheDir } from './go-install';

/**
 * The Temporal server, its SQL schema tool and the Temporal UI server for `npm run start:cluster` and the cluster test
 * suite, built once per machine with `go install` into the same cache as the CLI (the server takes about 8 minutes on
 * 2 cores). The versions are those docker-compose.yml runs; the UI server's is the one the CLI v1.5.1 embeds.
 */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';
export const TEMPORAL_UI_SERVER_VERSION = 'v2.42.1';
export const TEMPORAL_UI_SERVER_MODULE = 'github.com/temporalio/ui-server/v2';

export interface TemporalServerBinaries {
  server: string;
  sqlTool: string;
  /** The server module's source in Go's module cache: schema/postgresql/v12/… */
  moduleDir: string;
}

const serverDir = () => toolCacheDir(`temporal-server-${TEMPORAL_SERVER_VERSION}`);
const uiDir = () => toolCacheDir(`temporal-ui-server-${TEMPORAL_UI_SERVER_VERSION}`);
const defaultLog = (line: string) => process.stderr.write(`${line}\n`);

/** The server and `temporal-sql-tool` (installed as `sql`), built when missing. */
export async function ensureTemporalServer(log: (line: string) => void = defaultLog): Promise<TemporalServerBinaries> {
  const dir = serverDir();
  const server = join(dir, 'server');
  const sqlTool = join(dir, 'sql');
  // One after the other: each build alone keeps both cores busy.
  if (!executable(server)) {
    await goInstall({
      module: `${TEMPORAL_SERVER_MODULE}/cmd/server`,
      version: TEMPORAL_SERVER_VERSION,
      dir,
      binary: 'server',
      label: 'the Temporal server',
      log,
    });
  }
  if (!executable(sqlTool)) {
    await goInstall({
      module: `${TEMPORAL_SERVER_MODULE}/cmd/tools/sql`,
      version: TEMPORAL_SERVER_VERSION,
      dir,
      binary: 'sql',
      label: 'temporal-sql-tool',
      log,
    });
  }
  return { server, sqlTool, moduleDir: goModuleDir(TEMPORAL_SERVER_MODULE, TEMPORAL_SERVER_VERSION) };
}

/** The Temporal UI server (the web UI with its codec endpoint setting), built when missing. */
export async function ensureTemporalUiServer(log: (line: string) => void = defaultLog): Promise<string> {
  const path = join(uiDir(), 'server');
  if (executable(path)) return path;
  return goInstall({
    module: `${TEMPORAL_UI_SERVER_MODULE}/cmd/server`,
    version: TEMPORAL_UI_SERVER_VERSION,
    dir: uiDir(),
    binary: 'server',
    label: 'the Temporal UI server',
    log,
  });
}

if (require.main === module) {
  ensureTemporalServer().then(
    (b) => process.stdout.write(`${b.server}\n${b.sqlTool}\n`),
    (e: Error) => {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    },
  );
}
