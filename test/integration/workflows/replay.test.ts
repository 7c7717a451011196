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
describe("replay: recorded histories of every workflow type replay through today's workflow code", () => {
  const histories = loadHistories();
  const workflowTypes = (h: RecordedHistory) =>
    h.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;

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
    const registered = [...source.matchAll(/export \{ ([^}]+) \}/g)].flatMap((m) =>
      m[1]!.split(',').map((s) => s.trim()),
    );
    expect(registered.length).toBeGreaterThan(5);
    expect([...new Set(histories.map(workflowTypes))].sort()).toEqual([...registered].sort());
  });

  /**
   * Fixtures recorded before each patch existed (`npm run record:histories -- --workflows-at=<the commit before the
   * patch> --suffix=.before-<patch> <fixture>`), by patch id: they replay through the patch's old branch, so dropping
   * that branch (or the patch) fails the replay. Every patch needs an entry while it is in the code
   * (docs/workflow-versioning.md: a patch is retired once no open workflow predates it, with its `.before-` fixtures).
   */
  const RECORDED_BEFORE: Record<string, string[]> = {
    'deposit-callbacks-with-url': ['deposit-released-without-callback.before-deposit-callbacks-with-url.json'],
    'deposit-deadline-from-request': [
      'deposit-awaiting-data-released.before-deposit-deadline-from-request.json',
      'deposit-returned-confirmed.before-deposit-deadline-from-request.json',
    ],
    'deposit-custody-callbacks': [
      'deposit-awaiting-data-released.before-deposit-custody-callbacks.json',
      'deposit-awaiting-proof-released.before-deposit-custody-callbacks.json',
    ],
    'deposit-patches-folded': [
      'deposit-awaiting-data-released.before-deposit-patches-folded.json',
      'deposit-awaiting-proof-released.before-deposit-patches-folded.json',
      'deposit-released-without-callback.before-deposit-patches-folded.json',
      'deposit-returned-confirmed.before-deposit-patches-folded.json',
    ],
    'deposit-local-steps': [
      'deposit-awaiting-data-released.before-deposit-local-steps.json',
      'deposit-awaiting-proof-released.before-deposit-local-steps.json',
      'deposit-returned-confirmed.before-deposit-local-steps.json',
    ],
    'incoming-lean-finish': [
      'incoming-transfer-policy-not-ready.before-incoming-lean-finish.json',
      'incoming-transfer-registry-accepted.before-incoming-lean-finish.json',
      'incoming-transfer-review-escalated-declined.before-incoming-lean-finish.json',
      'incoming-transfer-routed-by-person.before-incoming-lean-finish.json',
    ],
    'incoming-lean-views': [
      'incoming-transfer-policy-not-ready.before-incoming-lean-views.json',
      'incoming-transfer-registry-accepted.before-incoming-lean-views.json',
      'incoming-transfer-review-escalated-declined.before-incoming-lean-views.json',
      'incoming-transfer-routed-by-person.before-incoming-lean-views.json',
    ],
    'incoming-lean-upserts': [
      'incoming-transfer-policy-not-ready.before-incoming-lean-upserts.json',
      'incoming-transfer-registry-accepted.before-incoming-lean-upserts.json',
      'incoming-transfer-review-escalated-declined.before-incoming-lean-upserts.json',
      'incoming-transfer-routed-by-person.before-incoming-lean-upserts.json',
    ],
    'incoming-local-screening': [
      'incoming-transfer-policy-not-ready.before-incoming-local-screening.json',
      'incoming-transfer-registry-accepted.before-incoming-local-screening.json',
      'incoming-transfer-review-escalated-declined.before-incoming-local-screening.json',
      'incoming-transfer-routed-by-person.before-incoming-local-screening.json',
    ],
    'outgoing-broadcast-callbacks': [
      'outgoing-transfer-accepted.before-outgoing-broadcast-callbacks.json',
      'outgoing-transfer-policy-held-released.before-outgoing-broadcast-callbacks.json',
    ],
  };

  /** The patch ids each fixture recorded (core's patch markers, decoded with the fixtures' codec). */
  const patchesOf = async ({ history }: RecordedHistory) => {
    const codec = new EncryptionCodec(fixtureKeyring());
    const ids: string[] = [];
    for (const e of history.events ?? []) {
      const marker = e.markerRecordedEventAttributes;
      if (marker?.markerName !== 'core_patch') continue;
      const [payload] = await codec.decode(marker.details!['patch-data']!.payloads! as never);
      ids.push((JSON.parse(Buffer.from(payload!.data!).toString()) as { id: string }).id);
    }
    return ids;
  };

  it('pins every patched() branch: each patch id is recorded after the patch and before it', async () => {
    const dir = join(__dirname, '../../../workflows');
    const patchIds = new Set(
      readdirSync(dir).flatMap((f) =>
        [...readFileSync(join(dir, f), 'utf8').matchAll(/patched\('([^']+)'\)/g)].map((m) => m[1]!),
      ),
    );
    const recorded = new Map<string, string[]>();
    for (const h of histories) recorded.set(h.file, await patchesOf(h));
    const after = new Set([...recorded.values()].flat());
    expect([...patchIds].filter((id) => !after.has(id))).toEqual([]);
    expect(Object.keys(RECORDED_BEFORE).sort()).toEqual([...patchIds].sort());
    for (const [id, files] of Object.entries(RECORDED_BEFORE)) {
      for (const file of files) {
        expect(recorded.has(file)).toBe(true);
        expect(recorded.get(file)).not.toContain(id);
      }
    }
    // A fixture that is no patch's `.before-` history replays today's code only: a leftover of a retired patch is removed.
    const pinned = new Set(Object.values(RECORDED_BEFORE).flat());
    expect(histories.map((h) => h.file).filter((f) => f.includes('.before-') && !pinned.has(f))).toEqual([]);
  });

  it('a deprecated patch keeps no .before- fixture: its old branch is gone, only its marker is still replayed', () => {
    const dir = join(__dirname, '../../../workflows');
    const deprecated = readdirSync(dir).flatMap((f) =>
      [...readFileSync(join(dir, f), 'utf8').matchAll(/deprecatePatch\('([^']+)'\)/g)].map((m) => m[1]!),
    );
    expect(deprecated.filter((id) => id in RECORDED_BEFORE)).toEqual([]);
  });

  it('the fixtures hold no personal data and no key material, even decoded', async () => {
    for (const { history } of histories) await assertNoSecrets(history);
  });
});
