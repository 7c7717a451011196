import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { cliPrincipal } from '../../lib/principal';
import { loadConfig } from '../../config';
import { loadedLists, screenAddress, screenName } from '../../screening/store';
import { loadSdnList } from '../../screening/load-sdn';
import { withCliPool } from './database';

/**
 * Sanctions lists for incoming-transfer screening. These commands talk to the orchestrator's database directly
 * (DATABASE_URL): loading a list is an operator's maintenance task, not a network operation.
 */
export function registerScreeningCommands(program: Command): void {
  const screening = program.command('screening').description('sanctions lists used to screen incoming transfers');
  screening
    .command('load-sdn <sdnCsv>')
    .description("replace a list with a file in OFAC's SDN CSV format (sdn.csv), in one transaction")
    .option('--alt <altCsv>', "alternate names in OFAC's alt.csv format")
    .option('--list <name>', 'name of the list', 'OFAC-SDN')
    .action(async (sdnCsv: string, opts: { alt?: string; list: string }) => {
      const by = cliPrincipal(userInfo().username);
      const result = await withCliPool(undefined, (pool) =>
        loadSdnList(pool, { list: opts.list, sdnPath: sdnCsv, altPath: opts.alt, by }),
      );
      process.stdout.write(
        `${result.list}: ${result.entries} entries, ${result.aliases} aliases, ${result.addresses} digital-currency addresses\n`,
      );
    });

  screening
    .command('lists')
    .description('the loaded lists')
    .action(async () => {
      for (const l of await withCliPool(undefined, loadedLists))
        process.stdout.write(`${l.name}\t${l.entries} entries\tloaded ${l.loadedAt}\n`);
    });

  screening
    .command('check')
    .description('screen a name or an address as the incoming workflow would (for tuning SCREENING_NAME_THRESHOLD)')
    .option('--name <name>')
    .option('--address <address>')
    .option('--threshold <n>', 'similarity from 0 to 1 (default: SCREENING_NAME_THRESHOLD, 0.85)', (v) => Number(v))
    .action(async (opts: { name?: string; address?: string; threshold?: number }) => {
      if (!opts.name && !opts.address) throw new Error('give --name or --address');
      const threshold = opts.threshold ?? loadConfig().incoming.screeningThreshold;
      const hits = await withCliPool(undefined, async (pool) => [
        ...(opts.name ? await screenName(pool, opts.name, threshold) : []),
        ...(opts.address ? await screenAddress(pool, opts.address) : []),
      ]);
      process.stdout.write(hits.length ? `${JSON.stringify(hits, null, 2)}\n` : 'no hit\n');
    });
}
