import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { EncryptionCodec } from '../../../lib/temporal/codec';
import { createDataConverter } from '../../../lib/temporal/data-converter';
import { assertNoSecrets, fixtureKeyring, loadHistories, type RecordedHistory } from '../../replay/fixtures';
import { testEnv } from '../../harness/platform';

/**
 * Replays the recorded histories (test/fixtures/histories/, written by `npm run record:histories` against the real
 * stack) through today's workflow code, in the worker's own bundle and data converter: a change that would break a
 * running workflow (a reordered activity, a new timer, a removed patch) fails here with a nondeterminism error.
 * No server is needed; the integration project only lends its workflow bundle.
 */
describe('replay: recorded histories of every workflow type replay through today\'s workflow code', () => {
  const histories = loadHistories();
  const workflowTypes = (h: RecordedHistory) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;

  it('replays every recorded history without a nondeterminism error', async () => {
    expect(histories.length).toBeGreaterThan(0);
    const options = {
      workflowBundle: { codePath: testEnv().workflowBundle },
      dataConverter: createDataConverter(fixtureKeyring(), { refuseUnencrypted: true }),
    };
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories(options, histories)) {
      replayed += 1;
      if (result.error) failures.push(`${result.workflowId}: ${(result.error as Error).message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(histories.length);
  });

  it('covers every workflow the worker registers', () => {
    const source = readFileSync(join(__dirname, '../../../workflows/index.ts'), 'utf8');
    const registered = [...source.matchAll(/export \{ ([^}]+) \}/g)].flatMap((m) => m[1]!.split(',').map((s) => s.trim()));
    expect(registered.length).toBeGreaterThan(5);
    expect([...new Set(histories.map(workflowTypes))].sort()).toEqual([...registered].sort());
  });

  it('pins every patched() branch: each patch id is in a recorded history, so removing the patch fails the replay', async () => {
    const dir = join(__dirname, '../../../workflows');
    const patchIds = new Set(readdirSync(dir).flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/patched\('([^']+)'\)/g)].map((m) => m[1]!)));
    expect(patchIds.size).toBeGreaterThan(0);
    const codec = new EncryptionCodec(fixtureKeyring());
    const recorded = new Set<string>();
    for (const { history } of histories) {
      for (const e of history.events ?? []) {
        const marker = e.markerRecordedEventAttributes;
        if (marker?.markerName !== 'core_patch') continue;
        const [payload] = await codec.decode(marker.details!['patch-data']!.payloads! as never);
        recorded.add((JSON.parse(Buffer.from(payload!.data!).toString()) as { id: string }).id);
      }
    }
    expect([...patchIds].filter((id) => !recorded.has(id))).toEqual([]);
  });

  it('the fixtures hold no personal data and no key material, even decoded', async () => {
    for (const { history } of histories) await assertNoSecrets(history);
  });
});
