import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { createDidKeyRecord } from '../../lib/crypto';
import { api, apiOptions, apiTarget } from './api-client';

/**
 * `tro keys …`: the network CLI's `keys:create` (prints a new JsonDIDKey, stores nothing), and the group's keys through
 * the internal API: list, rotate (optionally following the workflow), import a key record made earlier.
 */
export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description("the VASPs' did:key encryption keys");

  keys
    .command('create')
    .description(
      'print a new Ed25519 key record (JsonDIDKey); publish its did as pii_didkey, keep privateKeyHex secret',
    )
    .action(() => {
      process.stdout.write(`${JSON.stringify(createDidKeyRecord(), null, 2)}\n`);
    });

  apiOptions(
    keys
      .command('list')
      .description("a VASP's keys and their states (public parts only)")
      .argument('<vaspDID>', 'the VASP'),
  )
    .option('--json', 'print the API answer as JSON')
    .action(async (vaspDid: string, opts: { api?: string; token?: string; json?: boolean }) => {
      const r = await api<{ keys: { id: string; did: string; state: string; createdAt: string }[] }>(
        apiTarget(opts),
        'GET',
        `/v1/vasps/${encodeURIComponent(vaspDid)}/keys`,
      );
      if (opts.json) return void process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      for (const k of r.keys) process.stdout.write(`${k.state.padEnd(9)} ${k.id} ${k.did} ${k.createdAt}\n`);
    });

  apiOptions(
    keys
      .command('rotate')
      .description(
        "rotate a VASP's key: new key, published as pii_didkey, confirmed in the directory, then active (audited under the credential's name)",
      )
      .argument('<vaspDID>', 'the VASP (the gateway or a subsidiary of the group)')
      .requiredOption('--reason <text>', 'why, for the audit log (e.g. "suspected compromise")')
      .option('--follow', 'wait until the rotation ends and print its outcome'),
  ).action(async (vaspDid: string, opts: { reason: string; follow?: boolean; api?: string; token?: string }) => {
    const path = `/v1/vasps/${encodeURIComponent(vaspDid)}/keys`;
    const target = apiTarget(opts);
    const started = await api<{ workflowId: string; status: string }>(target, 'POST', `${path}/rotate`, {
      reason: opts.reason,
    });
    process.stdout.write(`started ${started.workflowId}: ${started.status}\n`);
    if (!opts.follow) return;
    for (;;) {
      const r = await api<{ workflowStatus: string; step?: string; status?: string }>(
        target,
        'GET',
        `${path}/rotation`,
      );
      if (r.workflowStatus !== 'RUNNING' && r.step !== undefined) {
        process.stdout.write(`${r.workflowStatus}: ${r.status}\n`);
        if (r.workflowStatus !== 'COMPLETED') process.exitCode = 1;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  });

  apiOptions(
    keys
      .command('import')
      .description(
        'import a key record (the output of `keys create` or /didkey/new) for a VASP of the group (admin role)',
      )
      .argument('<vaspDID>', 'the VASP')
      .requiredOption('--file <path>', 'the JsonDIDKey file')
      .requiredOption('--reason <text>', 'why, for the audit log'),
  ).action(async (vaspDid: string, opts: { file: string; reason: string; api?: string; token?: string }) => {
    let key: unknown;
    try {
      key = JSON.parse(readFileSync(opts.file, 'utf8'));
    } catch {
      throw new Error(`${opts.file} is not a readable JSON file`);
    }
    const r = await api<{ outcome: string; key: { id: string; did: string; state: string } }>(
      apiTarget(opts),
      'POST',
      `/v1/vasps/${encodeURIComponent(vaspDid)}/keys/import`,
      { reason: opts.reason, key },
    );
    process.stdout.write(`${r.outcome}: ${r.key.id} ${r.key.did} (${r.key.state})\n`);
  });
}
