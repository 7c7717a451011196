/**
 * The steps of a key rotation (workflows/key-rotation.ts): the keystore side (create, activate, audit) and the network
 * side (publish the new did:key as `pii_didkey`, read the directory back). Inputs and results carry key ids and public
 * did:keys only, so no private key ever reaches workflow history, not even encrypted by the codec.
 */
import type { Principal } from '../lib/principal';
import type { NetworkClient } from '../network/client';
import { publishPiiDidKey, vaspProfile } from '../network/directory';
import { recordRotationFinished, recordRotationStarted } from './rotation-store';
import { listKeys, type Keystore } from './store';
import type { AuditContext } from './types';

export interface VaspDirectoryEntry {
  did: string;
  name: string;
  /** The currently published did:key, or null when the VASP has none. */
  piiDidKey: string | null;
}

export interface PendingKey {
  keyId: string;
  did: string;
  /** The key that is active now and will be retired, if any. */
  previousKeyId?: string;
  previousDid?: string;
}

export interface KeyAuditInput {
  vaspDid: string;
  /** Why: the operator's reason, or "scheduled rotation". */
  reason: string;
  /** Who asked: the caller's stable id (lib/principal.ts auditActor), or `schedule`. */
  actor: string;
  /** The authenticated caller, when the rotation was asked for through the API. */
  principal?: Principal;
  workflowId: string;
}

/** Which execution of the rotation's workflow a step runs for, as the console's list of rotations names it. */
export interface RotationRun {
  /** The workflow's run id; absent outside a workflow. */
  runId?: string;
  /** Names the step across retries, so a retried audit finds the row its earlier attempt wrote. */
  idempotencyKey?: string;
}

const auditOf = (input: KeyAuditInput): AuditContext => ({
  actor: input.actor,
  reason: input.reason,
  workflowId: input.workflowId,
  ...(input.principal ? { principal: input.principal } : {}),
});

const rotationOf = (input: KeyAuditInput, run: RotationRun) => ({
  workflowId: input.workflowId,
  runId: run.runId ?? 'outside-a-workflow',
  vaspDid: input.vaspDid,
  requestedBy: input.actor,
  reason: input.reason,
});

const publishedDid = (entry: { pii_didkey?: unknown }) =>
  typeof entry.pii_didkey === 'string' ? entry.pii_didkey : null;

/** The VASP's directory entry; a NotFoundError (the network's 404) when the network does not know it. */
export async function lookupVaspInDirectory(network: NetworkClient, vaspDid: string): Promise<VaspDirectoryEntry> {
  const entry = await vaspProfile(network, vaspDid);
  return { did: entry.did, name: entry.name ?? '', piiDidKey: publishedDid(entry) };
}

/** What the directory shows as the VASP's `pii_didkey` right now (null when none). */
export async function readPublishedPiiDidKey(network: NetworkClient, vaspDid: string): Promise<string | null> {
  return publishedDid(await vaspProfile(network, vaspDid));
}

/** `POST /tf/vasps/update` with the new did:key as the VASP's `pii_didkey`. */
export async function publishNewPiiDidKey(
  network: NetworkClient,
  input: { vaspDid: string; did: string },
): Promise<void> {
  await publishPiiDidKey(network, input.vaspDid, input.did);
}

/** A new key pair in state pending, and the rotation in the console's list; a retry of the same rotation returns the same key. */
export async function createPendingVaspKey(
  keystore: Keystore,
  input: KeyAuditInput & { requestId: string },
  run: RotationRun,
): Promise<PendingKey> {
  const key = await keystore.createPendingKey(input.vaspDid, input.requestId, auditOf(input));
  const active = (await listKeys(keystore.pool, input.vaspDid)).find((k) => k.state === 'active');
  await recordRotationStarted(keystore.pool, rotationOf(input, run), {
    keyId: key.id,
    did: key.did,
    previousDid: active?.did,
  });
  return { keyId: key.id, did: key.did, ...(active ? { previousKeyId: active.id, previousDid: active.did } : {}) };
}

/** The pending key becomes active and the previous one retired, in one transaction; the rotation is listed as completed. */
export async function activateVaspKey(
  keystore: Keystore,
  input: KeyAuditInput & { keyId: string },
  run: RotationRun,
): Promise<{ keyId: string; did: string; retiredKeyIds: string[] }> {
  const { active, retired } = await keystore.activateKey(input.vaspDid, input.keyId, auditOf(input));
  await recordRotationFinished(keystore.pool, rotationOf(input, run), { status: 'completed' });
  return { keyId: active.id, did: active.did, retiredKeyIds: retired.map((k) => k.id) };
}

/** Audits a rotation that stopped: which step, which error. Keys are left as they are. */
export async function recordKeyRotationFailure(
  keystore: Keystore,
  input: KeyAuditInput & { step: string; keyId?: string; error: { type: string; message: string } },
  run: RotationRun,
): Promise<void> {
  await keystore.recordAudit(
    auditOf(input),
    'key.rotation.failed',
    input.vaspDid,
    {
      step: input.step,
      ...(input.keyId ? { keyId: input.keyId } : {}),
      error: input.error,
    },
    run.idempotencyKey,
  );
  await recordRotationFinished(keystore.pool, rotationOf(input, run), {
    status: 'failed',
    step: input.step,
    error: input.error,
  });
}
