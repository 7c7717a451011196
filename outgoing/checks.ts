import { ValidationError } from '../lib/errors';
import { listKeys } from '../keys';
import type { TransferContext } from './context';
import { assertOriginatorAllowed, planTransfer, type TransferPlan } from './plan';
import { validateOutgoingBody, type OutgoingRequest, type OutgoingTransferBody } from './request';

/**
 * Checks a request before anything is stored or started, so bad input answers 400 naming the field and leaves no
 * trace: the body and its IVMS101, the originator (not the gateway, in the group, keys held when the source requires
 * them), and the beneficiary VASP (named, or the destination address's owner; it must be in the directory). The plan
 * this decides goes to the workflow with the request, so the worker neither validates nor asks the directory again.
 */
export async function checkOutgoingRequest(
  ctx: TransferContext,
  body: unknown,
  opts: { source: OutgoingRequest['source']; hybrid: boolean },
): Promise<{ body: OutgoingTransferBody; plan: TransferPlan }> {
  validateOutgoingBody(body);
  // The keystore's list, not the key: the API decides whether the data can be encrypted, the worker unseals the key.
  assertOriginatorAllowed(ctx.group, body.originatorVASPdid);
  const held = (await listKeys(ctx.pool, body.originatorVASPdid)).some((k) => k.state === 'active');
  if (!held && opts.source === 'api') {
    throw new ValidationError(
      'originatorVASPdid',
      'has no active key in the keystore, so its data cannot be encrypted end to end',
    );
  }
  // A directory or personal-data service that cannot answer fails the request (retryable, nothing stored), as before.
  const plan = await planTransfer(ctx, { body, source: opts.source, hybrid: opts.hybrid }, held);
  return { body, plan };
}
