import { userInfo } from 'node:os';
import type { Command } from 'commander';
import type { Pool } from 'pg';
import { listApiKeys, revokeApiKey } from '../../auth/api-key-store';
import { cliPrincipal, ROLES } from '../../lib/principal';
import { createApiKey } from '../api/auth/api-keys';
import { withCliPool } from './database';

/**
 * `tro api-keys …`: API keys of services, straight in the orchestrator's database (DATABASE_URL), so the first admin
 * key can be made before any credential exists. Whoever runs them is audited as `cli:<OS user>`.
 */
export function registerApiKeyCommands(program: Command, opts: { pool?: Pool } = {}): void {
  const apiKeys = program.command('api-keys').description('API keys of the services that call the internal API');
  const withPool = <T>(fn: (pool: Pool) => Promise<T>) => withCliPool(opts.pool, fn);
  const cli = () => cliPrincipal(userInfo().username);

  apiKeys
    .command('create')
    .description('create a key; it is printed once and only its hash is stored')
    .requiredOption('--role <role>', `the key's role: ${ROLES.join(', ')}`)
    .requiredOption('--name <name>', 'what the key is for, e.g. core-banking')
    .action(async (o: { role: string; name: string }) => {
      const { key, info } = await withPool((pool) => createApiKey(pool, o, cli()));
      process.stdout.write(
        `${key}\n\nAPI key ${info.prefix} (${info.name}, role ${info.role}, id ${info.id}).\n` +
          'Store it now: it is not shown again. Send it as "Authorization: Bearer <key>".\n',
      );
    });

  apiKeys
    .command('list')
    .description('keys with their prefix, role and last use (never their secrets)')
    .option('--all', 'include revoked keys')
    .option('--json', 'print JSON')
    .action(async (o: { all?: boolean; json?: boolean }) => {
      const keys = await withPool((pool) => listApiKeys(pool, { includeRevoked: !!o.all }));
      if (o.json) return void process.stdout.write(`${JSON.stringify(keys, null, 2)}\n`);
      for (const k of keys) {
        const state = k.revokedAt ? `revoked ${k.revokedAt}` : `last used ${k.lastUsedAt ?? 'never'}`;
        const by =
          k.createdByName && k.createdByName !== k.createdBy ? `${k.createdByName} (${k.createdBy})` : k.createdBy;
        process.stdout.write(
          `${k.prefix}  ${k.role.padEnd(10)} ${k.name.padEnd(24)} created ${k.createdAt} by ${by}, ${state}\n`,
        );
      }
    });

  apiKeys
    .command('revoke')
    .description('revoke a key by its prefix (tro_…) or id; it stops working at the next request')
    .argument('<key>', 'the prefix or the id')
    .action(async (key: string) => {
      const info = await withPool((pool) => revokeApiKey(pool, key, cli()));
      process.stdout.write(`revoked ${info.prefix} (${info.name}) at ${info.revokedAt}\n`);
    });
}
