import type { Command } from 'commander';
import { api, apiOptions, apiTarget } from './api-client';

/** `tro console …`: upkeep of what the compliance console reads. */
export function registerConsoleCommands(program: Command): void {
  const console = program.command('console').description('the compliance console and its lists');

  apiOptions(
    console
      .command('rebuild-transfer-list')
      .description(
        'rebuild the transfer list from the network (GET /tx/list for every VASP of the group) and the running workflows; rows already newer stay (operator role)',
      ),
  ).action(async (opts: { api?: string; token?: string }) => {
    const r = await api<{ listed: number; fromNetwork: number; fromWorkflows: number }>(
      apiTarget(opts),
      'POST',
      '/v1/transfers/list/rebuild',
    );
    process.stdout.write(
      `${r.listed} transactions listed by the network; ${r.fromNetwork} rows written from the network's record, ${r.fromWorkflows} from running workflows\n`,
    );
  });
}
