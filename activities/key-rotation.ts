/** The key rotation's activities: the steps in keys/rotation.ts, given the workflow run they run for. */
import type { Keystore } from '../keys';
import {
  activateVaspKey,
  createPendingVaspKey,
  lookupVaspInDirectory,
  publishNewPiiDidKey,
  readPublishedPiiDidKey,
  recordKeyRotationFailure,
  type KeyAuditInput,
  type PendingKey,
  type VaspDirectoryEntry,
} from '../keys/rotation';
import type { NetworkClient } from '../network/client';
import { activityIdempotencyKey, activityRunId } from './context';

export type { KeyAuditInput, PendingKey, VaspDirectoryEntry } from '../keys/rotation';

export function keyRotationActivities(deps: { keystore: Keystore; network: NetworkClient }) {
  const { keystore, network } = deps;
  const run = () => ({ runId: activityRunId(), idempotencyKey: activityIdempotencyKey() });
  return {
    async lookupVaspInDirectory(vaspDid: string): Promise<VaspDirectoryEntry> {
      return lookupVaspInDirectory(network, vaspDid);
    },

    async createPendingVaspKey(input: KeyAuditInput & { requestId: string }): Promise<PendingKey> {
      return createPendingVaspKey(keystore, input, run());
    },

    async publishPiiDidKey(input: { vaspDid: string; did: string }): Promise<void> {
      await publishNewPiiDidKey(network, input);
    },

    async readPublishedPiiDidKey(vaspDid: string): Promise<string | null> {
      return readPublishedPiiDidKey(network, vaspDid);
    },

    async activateVaspKey(
      input: KeyAuditInput & { keyId: string },
    ): Promise<{ keyId: string; did: string; retiredKeyIds: string[] }> {
      return activateVaspKey(keystore, input, run());
    },

    async recordKeyRotationFailure(
      input: KeyAuditInput & { step: string; keyId?: string; error: { type: string; message: string } },
    ): Promise<void> {
      await recordKeyRotationFailure(keystore, input, run());
    },
  };
}
