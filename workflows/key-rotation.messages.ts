/**
 * The key rotation's inputs, results, query and update, defined once: the workflow sets the handlers, the API and the
 * CLI call them. Everything here is public data (ids, DIDs, did:keys); no private key is ever an input or a result.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { Principal } from '../lib/principal';

export type KeyRotationStep =
  'verifying-vasp' | 'creating-key' | 'publishing' | 'confirming-publication' | 'activating' | 'completed' | 'failed';

export interface KeyRotationInput {
  vaspDid: string;
  /** Why the key is rotated (audited), e.g. "suspected compromise" or "scheduled rotation". */
  reason: string;
  /** Who asked: the authenticated caller's stable id (lib/principal.ts auditActor), or `schedule`. */
  requestedBy: string;
  /** The authenticated caller who asked through the API (absent for schedules): recorded in every audit row of the rotation. */
  principal?: Principal;
  /** How long to wait for the directory to show the published key before giving up; default 10 minutes. */
  publicationTimeoutMs?: number;
}

export interface KeyRotationStatus {
  vaspDid: string;
  step: KeyRotationStep;
  /** One sentence for an operator: what is happening now, or what went wrong and what state the keys are in. */
  status: string;
  reason: string;
  requestedBy: string;
  newKeyId?: string;
  newDid?: string;
  previousKeyId?: string;
  previousDid?: string;
  /** How many times the directory has been read back after publishing. */
  publicationChecks: number;
  error?: { type: string; message: string };
}

export interface KeyRotationResult {
  vaspDid: string;
  keyId: string;
  did: string;
  retiredKeyIds: string[];
  rotatedAt: string;
}

export interface ScheduledKeyRotationResult {
  outcome: 'rotated' | 'skipped';
  workflowId: string;
  result?: KeyRotationResult;
}

export const keyRotationStatusQuery = defineQuery<KeyRotationStatus>('keyRotationStatus');

/**
 * Sent with the start (update-with-start): completes once the network's directory has confirmed the VASP, or fails
 * with the network's error, so the API can answer 404 for an unknown VASP instead of accepting a doomed rotation.
 */
export const keyRotationAcceptedUpdate = defineUpdate<KeyRotationStatus>('keyRotationAccepted');
