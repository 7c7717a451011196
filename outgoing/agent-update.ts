import { assertValidBeneficiary, assertValidOriginator } from '../lib/ivms101';
import { txUpdate, type NetworkTransaction } from '../network/transactions';
import type { TransferContext } from './context';
import { encryptRecord, storeEncrypted } from './personal-data';
import { escrowKey, publishedKey } from './plan';
import { transactionInfo, withoutPersonalData } from './transaction';

/**
 * The agent's `tx/update` with its encryption rule: the parties given in plain are encrypted by the side whose keys are
 * held here (the originator first) for itself and the other side (plus the escrow key in hybrid mode), stored, and
 * sent as `pii` merged over the transaction's existing tree. Held keys for neither side: forwarded as they are.
 */
export async function updateThroughAgent(ctx: TransferContext, body: Record<string, unknown> & { id: string }, hybrid: boolean): Promise<NetworkTransaction> {
  const plain: Record<string, unknown> = {};
  if (body.originator !== undefined) {
    assertValidOriginator(body.originator, 'originator');
    plain.originator = body.originator;
  }
  if (body.beneficiary !== undefined) {
    assertValidBeneficiary(body.beneficiary, 'beneficiary');
    plain.beneficiary = body.beneficiary;
  }
  if (Object.keys(plain).length > 0) {
    const current = await transactionInfo(ctx, body.id);
    const originator = (body.originatorVASPdid as string | undefined) ?? current.originatorVASPdid;
    const beneficiary = (body.beneficiaryVASPdid as string | undefined) ?? current.beneficiaryVASPdid;
    const candidates: [string | undefined, string | undefined][] = [[originator, beneficiary], [beneficiary, originator]];
    for (const [self, other] of candidates) {
      if (!self) continue;
      const sender = await ctx.keystore.loadActiveKey(self);
      if (!sender) continue;
      const otherKey = other ? await publishedKey(ctx, other, self === originator ? 'beneficiaryVASPdid' : 'originatorVASPdid') : undefined;
      const recipients = [...(hybrid ? [await escrowKey(ctx, originator!)] : []), ...(otherKey ? [otherKey] : [])];
      const tree = await storeEncrypted(ctx, self, other ?? self, encryptRecord(plain, sender, recipients));
      delete body.originator;
      delete body.beneficiary;
      body.pii = { ...(current.pii ?? {}), ...tree };
      break;
    }
  }
  return withoutPersonalData(await txUpdate(ctx.network, body));
}
