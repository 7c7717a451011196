import { ValidationError } from '../lib/errors';
import { listKeys } from '../db/keystore';
import type { TransferContext } from './context';
import { assertOriginatorAllowed, publishedKey } from './plan';
import { validateOutgoingBody, type OutgoingTransferBody } from './request';

/**
 * Checks a request before anything is stored or started, so bad input answers 400 naming the field and leaves no
 * trace: the body and its IVMS101, the originator (not the gateway, in the group, keys held when required), and the
 * beneficiary VASP when named (it must be in the directory).
 */
export async function checkOutgoingRequest(ctx: TransferContext, body: unknown, opts: { requireOriginatorKey: boolean }): Promise<OutgoingTransferBody> {
  validateOutgoingBody(body);
  assertOriginatorAllowed(ctx.group, body.originatorVASPdid);
  if (opts.requireOriginatorKey) {
    const keys = await listKeys(ctx.pool, body.originatorVASPdid);
    if (!keys.some((k) => k.state === 'active')) {
      throw new ValidationError('originatorVASPdid', 'has no active key in the keystore, so its data cannot be encrypted end to end');
    }
  }
  if (body.beneficiaryVASPdid) await publishedKey(ctx, body.beneficiaryVASPdid);
  return body;
}
