import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  executeChild,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  sleep,
  TemporalFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { activityCause } from './failures';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import { VaspDid } from '../lib/temporal/search-attributes';
import { workflowIds } from '../lib/temporal/workflow-ids';
import {
  keyRotationAcceptedUpdate,
  keyRotationStatusQuery,
  type KeyRotationInput,
  type KeyRotationResult,
  type KeyRotationStatus,
  type KeyRotationStep,
  type ScheduledKeyRotationResult,
} from './key-rotation.messages';

/** Keystore steps and directory reads (scheduled activities, not local ones): quick, retried a few times on transient failures. */
const quick = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * Publication: retried with backoff while the network is unavailable (5xx, 429 and the rate budget's lockouts,
 * unreachable) for up to 10 minutes, the default time the directory is given to show the key; a refusal (4xx) is not
 * retried, since the same request would be refused again.
 */
const network = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const DEFAULT_PUBLICATION_TIMEOUT_MS = 10 * 60_000;
const MAX_CHECK_INTERVAL_MS = 30_000;

const STEP_TEXT: Record<Exclude<KeyRotationStep, 'completed' | 'failed'>, string> = {
  'verifying-vasp': 'Checking that the network directory knows the VASP',
  'creating-key': 'Creating a new key pair in the keystore (state pending)',
  publishing: "Publishing the new did:key as the VASP's pii_didkey (POST /tf/vasps/update)",
  'confirming-publication': 'Waiting for the directory to show the new pii_didkey',
  activating: 'Making the new key active and retiring the previous one',
};

/** The same steps as the object of "Failed while …". */
const FAILED_WHILE: Record<Exclude<KeyRotationStep, 'completed' | 'failed'>, string> = {
  'verifying-vasp': 'checking the VASP in the network directory',
  'creating-key': 'creating the new key',
  publishing: 'publishing the new key as pii_didkey',
  'confirming-publication': 'waiting for the directory to show the new key',
  activating: 'activating the new key',
};

/** The network's error as the activity reported it (type and message), or the failure itself. */
function networkError(e: TemporalFailure): ApplicationFailure {
  const cause = activityCause(e) as Error;
  if (cause instanceof ApplicationFailure) {
    return ApplicationFailure.create({
      type: cause.type ?? 'KeyRotationError',
      message: cause.message,
      details: cause.details ?? [],
      nonRetryable: true,
    });
  }
  return ApplicationFailure.create({ type: 'KeyRotationError', message: cause.message, nonRetryable: true });
}

/**
 * Rotates one VASP's key: a new pending key in the keystore, published as `pii_didkey`, read back from the directory
 * until it shows (bounded, with backoff), then activated while the previous key is retired (one transaction). If any
 * step fails for good, the previous key stays active, a created key stays pending, and the workflow fails with the
 * network's error. The workflow id is per VASP (workflowIds.keyRotation), so two rotations of one VASP never overlap.
 */
export async function keyRotation(input: KeyRotationInput): Promise<KeyRotationResult> {
  const { vaspDid } = input;
  const info = workflowInfo();
  if (info.typedSearchAttributes.get(VaspDid) !== vaspDid) upsertSearchAttributes([{ key: VaspDid, value: vaspDid }]);

  const state: KeyRotationStatus = {
    vaspDid,
    step: 'verifying-vasp',
    status: STEP_TEXT['verifying-vasp'],
    reason: input.reason,
    requestedBy: input.requestedBy,
    publicationChecks: 0,
  };
  /** Settles the accepted-update: undefined while the VASP is being checked. */
  let accepted: { ok: true } | { ok: false; failure: ApplicationFailure } | undefined;
  setHandler(keyRotationStatusQuery, () => state);
  setHandler(keyRotationAcceptedUpdate, async () => {
    await condition(() => accepted !== undefined);
    if (accepted && !accepted.ok) throw accepted.failure;
    return state;
  });
  const enter = (step: Exclude<KeyRotationStep, 'completed' | 'failed'>, detail?: string) => {
    state.step = step;
    state.status = detail ? `${STEP_TEXT[step]}: ${detail}` : STEP_TEXT[step];
  };
  const audit = {
    vaspDid,
    reason: input.reason,
    actor: input.requestedBy,
    workflowId: info.workflowId,
    ...(input.principal ? { principal: input.principal } : {}),
  };

  try {
    await quick.lookupVaspInDirectory(vaspDid);
    accepted = { ok: true };

    enter('creating-key');
    const pending = await quick.createPendingVaspKey({ ...audit, requestId: `${info.workflowId}/${info.runId}` });
    Object.assign(state, {
      newKeyId: pending.keyId,
      newDid: pending.did,
      previousKeyId: pending.previousKeyId,
      previousDid: pending.previousDid,
    });

    enter('publishing', pending.did);
    await network.publishPiiDidKey({ vaspDid, did: pending.did });

    enter('confirming-publication');
    await awaitPublication(input, state, pending.did, (detail) => enter('confirming-publication', detail));

    enter('activating');
    const activated = await quick.activateVaspKey({ ...audit, keyId: pending.keyId });
    state.step = 'completed';
    state.status =
      `Rotated: ${activated.did} is active` +
      (pending.previousDid ? `; ${pending.previousDid} is retired and kept for decrypting older data` : '');
    await condition(allHandlersFinished);
    return {
      vaspDid,
      keyId: activated.keyId,
      did: activated.did,
      retiredKeyIds: activated.retiredKeyIds,
      rotatedAt: new Date(Date.now()).toISOString(),
    };
  } catch (e) {
    if (!(e instanceof TemporalFailure)) throw e; // a bug: fail the workflow task so a fixed worker can replay it
    const { failure, failedStep, error } = markFailed(state, e);
    accepted ??= { ok: false, failure };
    try {
      await quick.recordKeyRotationFailure({ ...audit, step: failedStep, keyId: state.newKeyId, error });
    } catch {
      // The audit row is best effort here: the failure itself is in the workflow's history.
    }
    await condition(allHandlersFinished);
    throw failure;
  }
}

/** The rotation's state after a step failed for good, and the failure the workflow ends with. */
function markFailed(
  state: KeyRotationStatus,
  e: TemporalFailure,
): { failure: ApplicationFailure; failedStep: KeyRotationStep; error: { type: string; message: string } } {
  const failure = e instanceof ApplicationFailure && e.type === 'PublicationNotVisibleError' ? e : networkError(e);
  const failedStep = state.step;
  const error = { type: failure.type ?? 'KeyRotationError', message: failure.message };
  state.error = error;
  state.step = 'failed';
  state.status =
    `Failed while ${FAILED_WHILE[failedStep as keyof typeof FAILED_WHILE] ?? failedStep}: ${failure.message}. ` +
    (state.newKeyId
      ? `The previous key stays active; the new key ${state.newDid} stays pending.`
      : 'No key was changed.');
  return { failure, failedStep, error };
}

/** Reads the directory back until it shows the new key (bounded, with backoff); fails the rotation when it never does. */
async function awaitPublication(
  input: KeyRotationInput,
  state: KeyRotationStatus,
  did: string,
  checking: (detail: string) => void,
): Promise<void> {
  const { vaspDid } = input;
  const deadline = Date.now() + (input.publicationTimeoutMs ?? DEFAULT_PUBLICATION_TIMEOUT_MS);
  for (let check = 1; ; check++) {
    state.publicationChecks = check;
    const shown = await quick.readPublishedPiiDidKey(vaspDid);
    if (shown === did) return;
    const seen = shown ? 'another key' : 'no key';
    if (Date.now() >= deadline) {
      throw ApplicationFailure.create({
        type: 'PublicationNotVisibleError',
        message: `the directory still shows ${seen} as pii_didkey of ${vaspDid} after ${check} checks; the new key ${did} stays pending`,
        nonRetryable: true,
      });
    }
    checking(`check ${check} showed ${seen}; checking again`);
    await sleep(Math.min(1000 * 2 ** (check - 1), MAX_CHECK_INTERVAL_MS));
  }
}

/**
 * What a VASP's schedule starts: the rotation under its per-VASP id, so a scheduled rotation and one requested through
 * the API never run at once. When one is already running, this run is skipped rather than failed.
 */
export async function scheduledKeyRotation(input: { vaspDid: string }): Promise<ScheduledKeyRotationResult> {
  const workflowId = workflowIds.keyRotation(input.vaspDid);
  try {
    const result = await executeChild(keyRotation, {
      workflowId,
      args: [{ vaspDid: input.vaspDid, reason: 'scheduled rotation', requestedBy: 'schedule' }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: [{ key: VaspDid, value: input.vaspDid }],
    });
    return { outcome: 'rotated', workflowId, result };
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) return { outcome: 'skipped', workflowId };
    throw e;
  }
}
