/**
 * Activities of the key rotation: the keystore side (create, activate, audit) and the network side (publish the new
 * did:key as `pii_didkey`, read the directory back). Inputs and results carry key ids and public did:keys only, so no
 * private key ever reaches workflow history, not even encrypted by the codec.
 */
import type { Keystore } from '../keys';
import { activityRunId } from '../lib/temporal/heartbeat';
import { recordRotationFinished, recordRotationStarted } from '../keys/rotation-store';
import { listKeys } from '../keys';
import type { NetworkClient } from '../network/client';
import { publishPiiDidKey, vaspProfile } from '../network/directory';
import type { Principal } from '../lib/principal';
import type { AuditContext } from '../keys/types';

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

const auditOf = (input: KeyAuditInput): AuditContext => ({
  actor: input.actor, reason: input.reason, workflowId: input.workflowId, ...(input.principal ? { principal: input.principal } : {}),
});

/** The rotation an activity runs for, as the console's list of rotations names it. */
const rotationOf = (input: KeyAuditInput) => ({
  workflowId: input.workflowId,
  runId: activityRunId() ?? 'outside-a-workflow',
  vaspDid: input.vaspDid,
  requestedBy: input.actor,
  reason: input.reason,
});

export function keyRotationActivities(deps: { keystore: Keystore; network: NetworkClient }) {
  const { keystore, network } = deps;

  const publishedDid = (entry: { pii_didkey?: unknown }) => (typeof entry.pii_didkey === 'string' ? entry.pii_didkey : null);

  return {
    /** The VASP's directory entry; a NotFoundError (the network's 404) when the network does not know it. */
    async lookupVaspInDirectory(vaspDid: string): Promise<VaspDirectoryEntry> {
      const entry = await vaspProfile(network, vaspDid);
      return { did: entry.did, name: entry.name ?? '', piiDidKey: publishedDid(entry) };
    },

    /** A new key pair in state pending; retried calls of the same rotation return the same key. */
    async createPendingVaspKey(input: KeyAuditInput & { requestId: string }): Promise<PendingKey> {
      const key = await keystore.createPendingKey(input.vaspDid, input.requestId, auditOf(input));
      const active = (await listKeys(keystore.pool, input.vaspDid)).find((k) => k.state === 'active');
      await recordRotationStarted(keystore.pool, rotationOf(input), { keyId: key.id, did: key.did, previousDid: active?.did });
      return { keyId: key.id, did: key.did, ...(active ? { previousKeyId: active.id, previousDid: active.did } : {}) };
    },

    /** `POST /tf/vasps/update` with the new did:key as the VASP's `pii_didkey`. */
    async publishPiiDidKey(input: { vaspDid: string; did: string }): Promise<void> {
      await publishPiiDidKey(network, input.vaspDid, input.did);
    },

    /** What the directory shows as the VASP's `pii_didkey` right now (null when none). */
    async readPublishedPiiDidKey(vaspDid: string): Promise<string | null> {
      return publishedDid(await vaspProfile(network, vaspDid));
    },

    /** The pending key becomes active and the previous one retired, in one transaction. */
    async activateVaspKey(input: KeyAuditInput & { keyId: string }): Promise<{ keyId: string; did: string; retiredKeyIds: string[] }> {
      const { active, retired } = await keystore.activateKey(input.vaspDid, input.keyId, auditOf(input));
      await recordRotationFinished(keystore.pool, rotationOf(input), { status: 'completed' });
      return { keyId: active.id, did: active.did, retiredKeyIds: retired.map((k) => k.id) };
    },

    /** Audits a rotation that stopped: which step, which error. Keys are left as they are. */
    async recordKeyRotationFailure(input: KeyAuditInput & { step: string; keyId?: string; error: { type: string; message: string } }): Promise<void> {
      await keystore.recordAudit(auditOf(input), 'key.rotation.failed', input.vaspDid, {
        step: input.step, ...(input.keyId ? { keyId: input.keyId } : {}), error: input.error,
      });
      await recordRotationFinished(keystore.pool, rotationOf(input), { status: 'failed', step: input.step, error: input.error });
    },
  };
}
