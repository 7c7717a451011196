import { ValidationError } from '../lib/errors';
import { assertValidBeneficiary, assertValidOriginator } from '../lib/ivms101';
import { txUpdate, type NetworkTransaction } from '../network/transactions';
import type { TransferContext } from './context';
import { encryptRecord, storeEncrypted } from './personal-data';
import { escrowKey, publishedKey } from './plan';
import { transactionInfo, withoutPersonalData } from './transaction';

const TRANSACTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An update names the network's fields, a few at a time: more, or other names, are not an update of a transaction. */
const MAX_FIELDS = 50;
const FIELD_NAME = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * What can be checked of an agent `tx/update` before anything is sent: the transaction id's form, the plain parties'
 * IVMS101, and the names of the fields it changes (every key but `id`, sorted), which the audit log records.
 */
export function checkAgentUpdate(body: Record<string, unknown> & { id: string }): string[] {
  if (!TRANSACTION_ID.test(body.id)) throw new ValidationError('id', 'must be a transaction id (UUID)');
  const fields = Object.keys(body)
    .filter((k) => k !== 'id')
    .sort();
  if (fields.length > MAX_FIELDS)
    throw new ValidationError('body', `names ${fields.length} fields; an update changes at most ${MAX_FIELDS}`);
  const odd = fields.find((k) => !FIELD_NAME.test(k));
  if (odd !== undefined)
    throw new ValidationError(
      'body',
      `field names are 1 to 100 letters, digits, _ or -, not ${JSON.stringify(odd.slice(0, 40))}`,
    );
  if (body.originator !== undefined) assertValidOriginator(body.originator, 'originator');
  if (body.beneficiary !== undefined) assertValidBeneficiary(body.beneficiary, 'beneficiary');
  return fields;
}

/**
 * The agent's `tx/update` with its encryption rule: the parties given in plain are encrypted by the side whose keys are
 * held here (the originator first) for itself and the other side (plus the escrow key in hybrid mode), stored at the
 * personal-data service, and sent as `pii` merged over the transaction's existing tree. Held keys for neither side:
 * forwarded as they are. Answers the body to send; nothing of the transaction has changed yet.
 */
export async function prepareAgentUpdate(
  ctx: TransferContext,
  body: Record<string, unknown> & { id: string },
  hybrid: boolean,
): Promise<Record<string, unknown> & { id: string }> {
  checkAgentUpdate(body);
  const out = { ...body };
  const plain: Record<string, unknown> = {};
  if (body.originator !== undefined) plain.originator = body.originator;
  if (body.beneficiary !== undefined) plain.beneficiary = body.beneficiary;
  if (Object.keys(plain).length === 0) return out;
  const current = await transactionInfo(ctx, body.id);
  const originator = (body.originatorVASPdid as string | undefined) ?? current.originatorVASPdid;
  const beneficiary = (body.beneficiaryVASPdid as string | undefined) ?? current.beneficiaryVASPdid;
  const candidates: [string | undefined, string | undefined][] = [
    [originator, beneficiary],
    [beneficiary, originator],
  ];
  for (const [self, other] of candidates) {
    if (!self) continue;
    const sender = await ctx.keystore.loadActiveKey(self);
    if (!sender) continue;
    const otherKey = other
      ? await publishedKey(ctx, other, self === originator ? 'beneficiaryVASPdid' : 'originatorVASPdid')
      : undefined;
    const recipients = [...(hybrid ? [await escrowKey(ctx, originator!)] : []), ...(otherKey ? [otherKey] : [])];
    const tree = await storeEncrypted(ctx, self, other ?? self, encryptRecord(plain, sender, recipients));
    delete out.originator;
    delete out.beneficiary;
    out.pii = { ...(current.pii ?? {}), ...tree };
    break;
  }
  return out;
}

/** Sends a prepared update; the answer without personal data, as the agent gives it. */
export async function sendAgentUpdate(
  ctx: TransferContext,
  body: Record<string, unknown> & { id: string },
): Promise<NetworkTransaction> {
  return withoutPersonalData(await txUpdate(ctx.network, body));
}
