/**
 * The API's side of a wallet proof's workflow: a signature, an observed deposit or a review, each an update its
 * workflow validates (workflows/wallet-proof.ts); the answer is the proof as stored once the update is done.
 */
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { auditActor, type Principal } from '../../lib/principal';
import { workflowIds } from '../../lib/temporal/workflow-ids';
import { assertAddressForAsset } from '../../wallet-proofs/addresses';
import { proofOrNotFound } from '../../wallet-proofs/proofs';
import type { WalletProof } from '../../wallet-proofs/types';
import {
  depositObservedUpdate,
  reviewProofUpdate,
  submitSignatureUpdate,
  type DepositObserved,
} from '../../workflows/wallet-proof.messages';
import { executePersonUpdate } from '../person-update';

interface Deps {
  temporal: Client;
  pool: Pool;
}

async function update<A>(deps: Deps, id: string, def: unknown, arg: A): Promise<WalletProof> {
  await executePersonUpdate(temporalHandle(deps, id), def as never, arg as never, {
    closed: (status) => `proof ${id} is no longer pending (its workflow is ${status})`,
    notFound: `no wallet proof ${id}`,
  });
  return proofOrNotFound(deps.pool, id);
}

const temporalHandle = (deps: Deps, id: string) => deps.temporal.workflow.getHandle(workflowIds.walletProof(id));

export const submitSignature = (deps: Deps, id: string, signature: string) =>
  update(deps, id, submitSignatureUpdate, { signature });

/**
 * A deposit the custody system saw; its sender must be an address of the proof's chain (400 naming `from`). Its
 * receipt time goes with it: the workflow judges the deadline by it.
 */
export async function depositObserved(deps: Deps, id: string, deposit: DepositObserved): Promise<WalletProof> {
  const proof = await proofOrNotFound(deps.pool, id);
  assertAddressForAsset('from', proof.asset, deposit.from);
  const { txHash, from, amount } = deposit;
  return update(deps, id, depositObservedUpdate, { txHash, from, amount, receivedAt: new Date().toISOString() });
}

/** A compliance officer's decision, in the principal's name. */
export const reviewProof = (
  deps: Deps,
  id: string,
  input: { decision: 'approve' | 'reject'; reason: string },
  principal: Principal,
) => update(deps, id, reviewProofUpdate, { ...input, actor: auditActor(principal), principal });
