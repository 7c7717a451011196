/**
 * The blockchain transaction of an outgoing transfer, added once the custody system broadcast it (`PATCH
 * /v1/transfers/:id`, issue 23 item 5): checked against the asset's chain, passed on to the network with tx/update
 * (audited like every update, client/api/tx-updates.ts) and kept with the transfer. Set once: another hash is refused. Only a transfer the network knows, and that was not refused, may carry one.
 */
import type { Client } from '@temporalio/client';
import type { FastifyRequest } from 'fastify';
import { AuditUnavailableError, ConflictError, isAppError, ValidationError } from '../../lib/errors';
import type { Principal } from '../../lib/principal';
import { isFinalTransferStatus } from '../../outgoing/status';
import type { TransferContext } from '../../outgoing/context';
import type { TransferState } from '../../outgoing/types';
import { assertTxHash, chainOfAsset } from '../../wallet-proofs/addresses';
import { auditedTxUpdate, refusedByNetwork } from '../api/tx-updates';
import { transferState } from './start-outgoing';

/** An asset on a chain this code has no hash rule for: what the network's own field takes, without spaces. */
const OTHER_CHAIN_HASH = /^[0-9A-Za-z]{16,128}$/;

export async function addTxHash(
  deps: { temporal: Client; transfers: TransferContext },
  request: FastifyRequest,
  input: { id: string; txHash: string; principal: Principal },
): Promise<TransferState & { txHash: string }> {
  const state = await transferState(deps, input.id);
  const chain = chainOfAsset(state.asset);
  if (chain) assertTxHash('txHash', chain, input.txHash);
  else if (!OTHER_CHAIN_HASH.test(input.txHash))
    throw new ValidationError('txHash', 'must be 16 to 128 letters and digits');
  if (!state.transactionId)
    throw new ConflictError(
      `transfer ${input.id} has no transaction at the network yet (status ${state.status}): it must not be broadcast before it is sent`,
      { field: 'id', status: state.status },
    );
  if (isFinalTransferStatus(state.status) && state.status !== 'ACCEPTED')
    throw new ConflictError(`transfer ${input.id} ended ${state.status}: its funds must not be broadcast`, {
      field: 'id',
      status: state.status,
    });
  // Claimed first, so the hash the transfer keeps is the one sent: a request with another hash is refused before it
  // reaches the network. The same hash again is sent again (the update is idempotent there), so a caller whose answer
  // was lost may repeat it.
  const held = await deps.transfers.store.setTxHash(input.id, input.txHash);
  if (held !== input.txHash)
    throw new ConflictError(`transfer ${input.id} already has the txHash ${held}`, { field: 'txHash' });
  try {
    await auditedTxUpdate(deps.transfers, request, {
      principal: input.principal,
      listener: 'api',
      body: { id: state.transactionId, txHash: input.txHash },
      hybrid: false,
    });
  } catch (e) {
    // Refused for good (here or by the network): the claim goes, so the right hash can be given. An unknown outcome
    // (the network unreachable) keeps it, to be repeated.
    const notMade = e instanceof AuditUnavailableError || (isAppError(e) && e.httpStatus < 500) || refusedByNetwork(e);
    if (notMade) await deps.transfers.store.clearTxHash(input.id, input.txHash);
    throw e;
  }
  return { ...state, txHash: input.txHash };
}
