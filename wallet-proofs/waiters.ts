/**
 * Waking the workflows that wait for a wallet's proof (wallet_proof_waiters): once a proof is VERIFIED, each waiter of
 * its (asset, address) is signalled and removed. A waiter decides itself whether the proof is one it can use (its
 * customer's), so every waiter of the wallet is told.
 */
import type { Queryable } from '../db/pool';
import { getProof, proofWaiters, removeProofWaiter } from './store';

/**
 * Wakes and removes the waiters of a VERIFIED proof's wallet; answers how many were woken. `wake` signals one
 * workflow (the caller's Temporal client) and answers false when that workflow no longer runs.
 */
export async function notifyProofWaiters(
  db: Queryable,
  wake: (workflowId: string) => Promise<boolean>,
  proofId: string,
): Promise<{ signalled: number }> {
  const proof = await getProof(db, proofId);
  if (proof?.status !== 'VERIFIED') return { signalled: 0 };
  const wallet = { asset: proof.asset, address: proof.address };
  let signalled = 0;
  for (const workflowId of await proofWaiters(db, wallet)) {
    // A waiter that ended (its deadline passed, or it was terminated) has nothing left to wake: removed all the same.
    if (await wake(workflowId)) signalled++;
    await removeProofWaiter(db, { ...wallet, workflowId });
  }
  return { signalled };
}
