import { randomBytes } from 'node:crypto';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { keyRotation } from '../../../workflows/key-rotation';
import {
  keyRotationAcceptedUpdate,
  keyRotationStatusQuery,
  type KeyRotationInput,
} from '../../../workflows/key-rotation.messages';
import { callsOf, stubWorker, timersOf, workflowTestEnvironment, type Stubs } from '../../harness/workflow-env';

/**
 * The key rotation's failure paths, with stubbed activities: whatever step fails, the new key is never activated, the
 * failure is audited with the step and the error, the status says which key stays active, and the workflow fails
 * with the network's error.
 */
describe('key rotation workflow: failure paths', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await workflowTestEnvironment();
  });
  afterAll(() => env?.teardown());

  const vaspDid = 'did:ethr:0x6666666666666666666666666666666666666666';
  const newDid = 'did:key:z6MkNewKeyNewKeyNewKeyNewKeyNewKeyNewKeyNewKey';
  const oldDid = 'did:key:z6MkOldKeyOldKeyOldKeyOldKeyOldKeyOldKeyOldKey';
  const input = (over: Partial<KeyRotationInput> = {}): KeyRotationInput => ({
    vaspDid,
    reason: 'suspected compromise',
    requestedBy: 'Ada Admin',
    ...over,
  });

  /** A directory that knows the VASP and a keystore that creates the key; the publication is up to each test. */
  const keystore = (over: Stubs = {}): Stubs => ({
    lookupVaspInDirectory: async () => ({ did: vaspDid, name: 'Subsidiary A', piiDidKey: oldDid }),
    createPendingVaspKey: async () => ({
      keyId: 'key-new',
      did: newDid,
      previousKeyId: 'key-old',
      previousDid: oldDid,
    }),
    publishPiiDidKey: async () => undefined,
    readPublishedPiiDidKey: async () => newDid,
    activateVaspKey: async () => ({ keyId: 'key-new', did: newDid, retiredKeyIds: ['key-old'] }),
    recordKeyRotationFailure: async () => undefined,
    ...over,
  });

  const run = async (stubs: Stubs, args: KeyRotationInput) => {
    const { worker, taskQueue, calls } = await stubWorker(env, stubs);
    const workflowId = `key-rotation-test-${randomBytes(4).toString('hex')}`;
    return worker.runUntil(async () => {
      const handle = await env.client.workflow.start(keyRotation, { taskQueue, workflowId, args: [args] });
      const accepted = await handle.executeUpdate(keyRotationAcceptedUpdate).then(
        (s) => s,
        (e: Error) => e,
      );
      const failure = await handle.result().then(
        () => undefined,
        (e: Error) => e,
      );
      const status = await handle.query(keyRotationStatusQuery);
      return { accepted, failure, status, calls, workflowId, events: (await handle.fetchHistory()).events ?? [] };
    });
  };

  it('a publication the network cannot take yet (5xx, 429, a lockout) is tried again, for up to 10 minutes, not a number of times', async () => {
    let attempts = 0;
    const { failure, status, events } = await run(
      keystore({
        publishPiiDidKey: async () => {
          attempts++;
          if (attempts <= 2) throw ApplicationFailure.retryable('service unavailable', 'UpstreamUnavailableError');
          return undefined;
        },
      }),
      input(),
    );
    expect(failure).toBeUndefined();
    expect(status).toMatchObject({ step: 'completed' });
    expect(attempts).toBe(3);
    // Bounded by time: no attempt limit, the whole publication within 10 minutes.
    const scheduled = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'publishPiiDidKey',
    )!.activityTaskScheduledEventAttributes!;
    expect(Number(scheduled.scheduleToCloseTimeout?.seconds)).toBe(600);
    expect(scheduled.retryPolicy?.maximumAttempts ?? 0).toBe(0);
  });

  it('a refused publication leaves the previous key active and the new one pending, audited with the step', async () => {
    const refused = async () => {
      throw ApplicationFailure.create({
        type: 'ValidationError',
        message: 'pii_didkey: the network refused the value',
        nonRetryable: true,
      });
    };
    const { accepted, failure, status, calls, workflowId } = await run(
      keystore({ publishPiiDidKey: refused }),
      input(),
    );

    // Accepted (the VASP exists), then failed with the network's error type and message.
    expect(accepted).toMatchObject({ vaspDid });
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({
      type: 'ValidationError',
      message: 'pii_didkey: the network refused the value',
      nonRetryable: true,
    });

    expect(callsOf(calls, 'publishPiiDidKey').map((c) => c.args)).toEqual([[{ vaspDid, did: newDid }]]);
    expect(callsOf(calls, 'readPublishedPiiDidKey')).toHaveLength(0);
    expect(callsOf(calls, 'activateVaspKey')).toHaveLength(0);
    expect(callsOf(calls, 'recordKeyRotationFailure').map((c) => c.args[0])).toEqual([
      {
        vaspDid,
        reason: 'suspected compromise',
        actor: 'Ada Admin',
        workflowId,
        step: 'publishing',
        keyId: 'key-new',
        error: { type: 'ValidationError', message: 'pii_didkey: the network refused the value' },
      },
    ]);
    expect(status).toMatchObject({
      step: 'failed',
      newKeyId: 'key-new',
      previousKeyId: 'key-old',
      error: { type: 'ValidationError' },
    });
    expect(status.status).toBe(
      `Failed while publishing the new key as pii_didkey: pii_didkey: the network refused the value. The previous key stays active; the new key ${newDid} stays pending.`,
    );
  });

  it('a publication the directory never shows is checked with growing waits until the timeout, then fails', async () => {
    // Between the second check (1 s) and the third (3 s), with room for a busy machine.
    const TIMEOUT_MS = 2900;
    const { failure, status, calls, events } = await run(
      keystore({ readPublishedPiiDidKey: async () => oldDid }),
      input({ publicationTimeoutMs: TIMEOUT_MS }),
    );

    // Checks at 0 s, 1 s and 3 s: the waits double (1 s, 2 s), and the check after the timeout is the last one.
    const timers = timersOf(events);
    expect(timers.map((t) => t.durationMs)).toEqual([1000, 2000]);
    for (const t of timers) expect(t.firedAt! - t.startedAt).toBeGreaterThanOrEqual(t.durationMs - 5);
    const checks = callsOf(calls, 'readPublishedPiiDidKey');
    expect(checks.map((c) => c.args)).toEqual([[vaspDid], [vaspDid], [vaspDid]]);
    expect(checks[2]!.at - checks[0]!.at).toBeGreaterThanOrEqual(3000 - 50);

    const cause = (failure as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toMatchObject({ type: 'PublicationNotVisibleError', nonRetryable: true });
    expect(cause.message).toBe(
      `the directory still shows another key as pii_didkey of ${vaspDid} after 3 checks; the new key ${newDid} stays pending`,
    );
    expect(callsOf(calls, 'activateVaspKey')).toHaveLength(0);
    expect(callsOf(calls, 'recordKeyRotationFailure').map((c) => c.args[0])).toEqual([
      expect.objectContaining({
        step: 'confirming-publication',
        keyId: 'key-new',
        error: { type: 'PublicationNotVisibleError', message: cause.message },
      }),
    ]);
    expect(status).toMatchObject({ step: 'failed', publicationChecks: 3 });
  });

  it('a VASP the directory does not know is refused through the accepted-update, and no key is created', async () => {
    const unknown = async () => {
      throw ApplicationFailure.create({
        type: 'NotFoundError',
        message: `vasp ${vaspDid} not found`,
        nonRetryable: true,
      });
    };
    const { accepted, failure, status, calls } = await run(keystore({ lookupVaspInDirectory: unknown }), input());
    expect(accepted).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((accepted as WorkflowUpdateFailedError).cause).toMatchObject({
      type: 'NotFoundError',
      message: `vasp ${vaspDid} not found`,
    });
    expect(((failure as WorkflowFailedError).cause as ApplicationFailure).type).toBe('NotFoundError');
    expect(callsOf(calls, 'createPendingVaspKey')).toHaveLength(0);
    const audited = callsOf(calls, 'recordKeyRotationFailure').map((c) => c.args[0]);
    expect(audited).toEqual([
      expect.objectContaining({
        step: 'verifying-vasp',
        error: { type: 'NotFoundError', message: `vasp ${vaspDid} not found` },
      }),
    ]);
    expect(audited[0]).not.toHaveProperty('keyId');
    expect(status.status).toBe(
      `Failed while checking the VASP in the network directory: vasp ${vaspDid} not found. No key was changed.`,
    );
  });
});
