/**
 * The secrets scan at the end of `npm run chaos` (issue #12, item 4): exports every workflow history of the run as
 * stored (payloads encrypted by the codec) and decoded through the codec, takes every log file, a pg_dump of the
 * orchestrator's and the sandbox's schemas and the Temporal server's own storage (the dev server's SQLite file, or a
 * pg_dump of the Postgres-backed server's databases), and searches them for every plaintext personal-data value the
 * run sent or received and every private key (and the keystore master key and codec key) it used, the private keys of
 * the wallets its ownership proofs were signed with included.
 *
 * Expected: 0 everywhere, except the sandbox's schema holding the incoming transfers' personal data: the simulated
 * counterparty sends them in hosted mode, so the network keeps its own copy (the orchestrator's side is what counts).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { Pool } from 'pg';
import { openKeystore } from '../../keys';
import type { DidKeyRecord } from '../../lib/crypto';
import { EncryptionCodec } from '../../lib/temporal/codec';
import { parseCodecKeys } from '../../lib/temporal/codec-keys';

export interface ScanSource {
  name: string;
  bytes: number;
  hits: { outgoingPii: number; incomingPii: number; keys: number };
  /** Whether hits here fail the run (the sandbox's incoming personal data does not). */
  strict: 'all' | 'all-but-incoming';
}

export interface ScanResult {
  sources: ScanSource[];
  needles: { outgoingPii: number; incomingPii: number; keys: number };
  notes: string[];
  failed: boolean;
}

const isPayload = (v: unknown): v is Payload =>
  typeof v === 'object' &&
  v !== null &&
  (v as Payload).data instanceof Uint8Array &&
  typeof (v as Payload).metadata === 'object';

/** Every payload in a history (events' inputs, results, signals, updates, failures' details, memos). */
function payloadsOf(value: unknown, out: Payload[] = []): Payload[] {
  if (isPayload(value)) {
    out.push(value);
    return out;
  }
  if (value instanceof Uint8Array || typeof value !== 'object' || value === null) return out;
  for (const v of Array.isArray(value) ? value : Object.values(value)) payloadsOf(v, out);
  return out;
}

const asText = (value: unknown) =>
  JSON.stringify(value, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v));

export async function secretsScan(opts: {
  temporalAddress: string;
  codecKeys: string;
  databaseUrl: string;
  logDir: string;
  outDir: string;
  orch: Pool;
  masterKey: string;
  vaspDids: string[];
  needles: { outgoingPii: string[]; incomingPii: string[] };
  /** The proofs' wallet keys (hex, base64, base64url of each): signatures leave the run, the keys must not. */
  walletKeys: string[];
  /** The Temporal server's storage as text, read when the scan reaches it. */
  temporalStorage: () => { name: string; text: string };
}): Promise<ScanResult> {
  mkdirSync(opts.outDir, { recursive: true });
  const notes: string[] = [];

  // Every private key the keystore holds for the group (active, retired, pending), in the encodings it could leak in.
  const keystore = await openKeystore(opts.orch, { masterKey: opts.masterKey, dataDir: opts.outDir });
  const keyNeedles: string[] = [opts.masterKey, ...parseCodecKeys(opts.codecKeys).keys.values()].flatMap((k) =>
    typeof k === 'string' ? [k] : [k.toString('base64'), k.toString('hex')],
  );
  const { rows } = await opts.orch.query('select * from vasp_keys where vasp_did = any($1)', [opts.vaspDids]);
  // unseal is the keystore's own (private) way to open a sealed key; the scan needs the plaintext to look for it.
  const unseal = (keystore as unknown as { unseal(row: unknown): Promise<DidKeyRecord> }).unseal.bind(keystore);
  for (const row of rows) {
    const record = await unseal(row);
    const hex = record.keys[0].privateKeyHex;
    const seed = Buffer.from(hex.slice(0, 64), 'hex');
    keyNeedles.push(hex.slice(0, 64), seed.toString('base64'), seed.toString('base64url'));
  }
  keyNeedles.push(...opts.walletKeys);
  notes.push(
    `private keys searched: ${rows.length} keys of ${opts.vaspDids.length} VASPs (hex, base64, base64url of each seed), the keystore master key, the codec key, ${opts.walletKeys.length / 3} wallet keys of the ownership proofs (hex, base64, base64url)`,
  );

  // The stored and the decoded history of every workflow of the run.
  const connection = await Connection.connect({ address: opts.temporalAddress });
  const client = new Client({ connection });
  const codec = new EncryptionCodec(parseCodecKeys(opts.codecKeys));
  const stored: string[] = [];
  const decoded: string[] = [];
  let workflows = 0;
  const workflowIds = new Set<string>();
  let payloads = 0;
  for await (const wf of client.workflow.list()) {
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    workflows++;
    workflowIds.add(wf.workflowId);
    stored.push(asText(history));
    const found = payloadsOf(history);
    payloads += found.length;
    const opened = await codec.decode(found).catch(() => found);
    decoded.push(opened.map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('utf8')).join('\n'));
  }
  await connection.close();
  notes.push(`history: ${workflows} workflow runs, ${payloads} payloads`);
  writeFileSync(resolve(opts.outDir, 'history-stored.jsonl'), stored.join('\n'));
  writeFileSync(resolve(opts.outDir, 'history-decoded.txt'), decoded.join('\n'));

  const logs = readdirSync(opts.logDir)
    .filter((f) => f.endsWith('.log'))
    .map((f) => readFileSync(resolve(opts.logDir, f), 'utf8'))
    .join('\n');

  const dump = (schema: string) => {
    const url = new URL(opts.databaseUrl);
    const text = execFileSync('pg_dump', ['--no-owner', '--schema', schema, '--dbname', url.toString()], {
      maxBuffer: 2 ** 31 - 1,
      encoding: 'utf8',
    });
    writeFileSync(resolve(opts.outDir, `${schema}.sql`), text);
    return text;
  };

  const count = (text: string, needles: string[]) =>
    needles.reduce((n, needle) => n + (text.includes(needle) ? 1 : 0), 0);
  const sources: ScanSource[] = [];
  const add = (name: string, text: string, strict: ScanSource['strict'] = 'all') =>
    sources.push({
      name,
      bytes: Buffer.byteLength(text),
      strict,
      hits: {
        outgoingPii: count(text, opts.needles.outgoingPii),
        incomingPii: count(text, opts.needles.incomingPii),
        keys: count(text, keyNeedles),
      },
    });
  add('workflow history as stored', stored.join('\n'));
  add('workflow history decoded by the codec', decoded.join('\n'));
  const storage = opts.temporalStorage();
  add(storage.name, storage.text);
  // A control: the storage is only searched for real if what it stores in the clear (workflow ids) reads as text.
  const idsSeen = [...workflowIds].filter((id) => storage.text.includes(id)).length;
  notes.push(
    `${storage.name}: ${idsSeen} of the ${workflowIds.size} workflow ids found in it as text (the control that the search reads it)`,
  );
  const unreadStorage = workflowIds.size > 0 && idsSeen === 0;
  add('log files (temporal, sandbox, API, worker)', logs);
  add('pg_dump of the orchestrator schema', dump('orchestrator'));
  add("pg_dump of the sandbox schema (the network's side)", dump('sandbox'), 'all-but-incoming');
  const failed =
    unreadStorage ||
    sources.some((s) => s.hits.outgoingPii || s.hits.keys || (s.strict === 'all' && s.hits.incomingPii));
  return {
    sources,
    notes,
    failed,
    needles: {
      outgoingPii: opts.needles.outgoingPii.length,
      incomingPii: opts.needles.incomingPii.length,
      keys: keyNeedles.length,
    },
  };
}
