import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_DATABASE } from '../db/database-url';

/** What `npm start` keeps outside its data directory, named for it so that two clones on one machine never share it. */
export interface InstallationNames {
  /** The orchestrator's database (the sandbox's is this name with `_sandbox`). */
  database: string;
  /** The Temporal server's databases in cluster mode (and `_visibility`). */
  temporalDatabase: string;
}

/**
 * The names of this data directory's installation, kept in `<dataDir>/installation.json` from its first start: its
 * databases hold workflows encrypted with the development codec key, and transfers whose histories live in the dev
 * server's file, both of which stay in the data directory. A data directory that predates the file (it has a demo
 * group) keeps the names it has always used.
 */
export function installationNames(dataDir: string): InstallationNames {
  const file = resolve(dataDir, 'installation.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as InstallationNames;
  const legacy = existsSync(resolve(dataDir, 'demo.json'));
  const suffix = legacy ? '' : `_${randomBytes(4).toString('hex')}`;
  const names: InstallationNames = {
    database: `${DEFAULT_DATABASE}${suffix}`,
    temporalDatabase: `${DEFAULT_DATABASE}${suffix}_temporal`,
  };
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${JSON.stringify(names, null, 2)}\n`, { mode: 0o600 });
  return names;
}
