import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { EncryptionCodec } from '../../lib/temporal/codec';
import { formatCodecKey, parseCodecKeys } from '../../lib/temporal/codec-keys';
import { payloadsIn } from '../harness/history';

/** Recorded histories, one JSON file per workflow run, named by its workflow id (and run number in a chain). */
export const HISTORIES_DIR = join(__dirname, '..', 'fixtures', 'histories');

/**
 * The codec key the fixtures were recorded with. It is public on purpose, derived from a fixed phrase: the histories
 * must replay on any clone, so their payloads are encrypted exactly as in production (the replay worker decodes them
 * through the same codec) but with a key that protects nothing. What keeps them clean is the recording: synthetic
 * demo data only, and `assertNoSecrets` over every decoded payload.
 */
export const FIXTURE_CODEC_KEYS = formatCodecKey(
  'replay-fixtures',
  createHash('sha256').update('travel-rule-orchestrator replay fixtures').digest(),
);
export const fixtureKeyring = () => parseCodecKeys(FIXTURE_CODEC_KEYS);

/**
 * Strings of the personal data the recording sends (test/fixtures/pii-sdk's IVMS101 for outgoing transfers, the
 * sandbox's simulated originators for incoming ones), and the spellings of key material: none may be in a history.
 */
export const FORBIDDEN_IN_HISTORY = [
  'Baggins',
  'Gamgee',
  'Hobbiton',
  '1968-09-22',
  'AABBCCDDEEFF0011223344',
  '1981-03-12',
  'Example City',
  'privateKeyHex',
  'sealed_private_key',
  '"d":"',
];

const History = temporal.api.history.v1.History;

/**
 * A history as JSON: protobufjs's own object form (int64 as strings, enums by name, bytes in base64), not the SDK's
 * historyToJSON/historyFromJSON. Those fail here ("type must be a Type"): npm installs @temporalio/common and
 * @temporalio/proto each with its own copy of protobufjs 8 (grpc-js keeps protobufjs 7 at the top), and the JSON
 * extension of one copy does not accept the other's types.
 */
export const historyToFixture = (history: temporal.api.history.v1.IHistory): unknown =>
  History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String });
export const historyFromFixture = (json: unknown): temporal.api.history.v1.History =>
  History.fromObject(json as Record<string, unknown>);

export interface RecordedHistory extends HistoryAndWorkflowId {
  file: string;
  history: temporal.api.history.v1.IHistory;
}

/** Every recorded history, ready for Worker.runReplayHistories. */
export function loadHistories(): RecordedHistory[] {
  return readdirSync(HISTORIES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({
      file,
      workflowId: file.replace(/\.json$/, ''),
      history: historyFromFixture(JSON.parse(readFileSync(join(HISTORIES_DIR, file), 'utf8'))),
    }));
}

/** Decodes every payload of a history with the fixture key and throws if any holds personal data or key material. */
export async function assertNoSecrets(history: unknown, extra: string[] = []): Promise<void> {
  const payloads = payloadsIn(history) as Payload[];
  const decoded = await new EncryptionCodec(fixtureKeyring()).decode(payloads);
  const plain = Buffer.concat(decoded.map((p) => Buffer.from(p.data ?? new Uint8Array())));
  // Memos, search attributes and headers are not encrypted: they are checked as they are.
  const raw = Buffer.concat(payloads.map((p) => Buffer.from(p.data ?? new Uint8Array())));
  for (const secret of [...FORBIDDEN_IN_HISTORY, ...extra]) {
    if (plain.includes(Buffer.from(secret)) || raw.includes(Buffer.from(secret)))
      throw new Error(`a history holds "${secret.slice(0, 12)}…"`);
  }
}
