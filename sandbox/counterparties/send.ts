/**
 * A simulated counterparty sends a transfer as a real VASP would: its plain IVMS101 is encrypted end to end to the
 * beneficiary VASP's published key and its own, stored in the personal-data service, and the transaction created with
 * the CIDs under that VASP's first user. Used by `POST /sandbox/simulate/transfers` (sandbox/nested-routing) and by a
 * simulated originator completing a notified deposit (simulator.ts).
 */
import type { Pool } from 'pg';
import { encryptIvms101, unflattenIvms101 } from '../../lib/ivms101';
import { ValidationError } from '../../lib/errors';
import { recordFromPrivateKeyHex } from '../../keys/types';
import { Access } from '../auth/access';
import { firstUserOf } from '../auth/store';
import { notSimulated } from '../auth/test-routes';
import { simpleVasp } from '../directory/profiles';
import { vaspSimulated } from '../directory/store';
import { badRequest } from '../errors';
import { putEntries } from '../pii-store/store';
import type { Transaction, TransactionService } from '../transactions';
import { readSim } from './store';

const DID = /^did:[a-zA-Z0-9]*:.+$/;

/** `body`: a TransactionCreateRequest whose `originator` and `beneficiary` are plain IVMS101. */
export async function sendAsSimulated(
  pool: Pool,
  transactions: TransactionService,
  body: Record<string, unknown>,
): Promise<Transaction> {
  const from = body.originatorVASPdid;
  const to = body.beneficiaryVASPdid;
  if (typeof from !== 'string' || !DID.test(from))
    throw badRequest('ValidationError', 'originatorVASPdid: is required (a simulated counterparty VASP)');
  if (typeof to !== 'string' || !DID.test(to)) throw badRequest('ValidationError', 'beneficiaryVASPdid: is required');
  if ((await vaspSimulated(pool, from)) === false) throw notSimulated('originatorVASPdid', from);
  const sim = await readSim(pool, from);
  if (!sim)
    throw badRequest(
      'ValidationError',
      `originatorVASPdid: ${from} is not a simulated counterparty (PUT /sandbox/counterparties/${from} first)`,
    );
  const user = await firstUserOf(pool, from);
  if (!user) throw badRequest('ValidationError', `originatorVASPdid: ${from} has no user to act as`);
  const sender = recordFromPrivateKeyHex(sim.private_key_hex, sim.did_key, 'simulation key');
  const recipientKey = (await simpleVasp(pool, to, ['pii_didkey']))?.pii_didkey;
  const record = Object.fromEntries(
    ['originator', 'beneficiary'].filter((k) => body[k] !== undefined).map((k) => [k, body[k]]),
  );
  // Without a published key the sender encrypts for itself only, as the agent does.
  let entries: ReturnType<typeof encryptIvms101>;
  try {
    entries = encryptIvms101(record, sender, typeof recipientKey === 'string' && recipientKey ? [recipientKey] : []);
  } catch (e) {
    // Plain IVMS101 that does not validate is the caller's mistake, named by its field.
    if (e instanceof ValidationError) throw badRequest('ValidationError', e.message);
    throw e;
  }
  const stored = await putEntries(pool, from, to, entries);
  const { originator: _o, beneficiary: _b, ...rest } = body;
  return transactions.create(await Access.load(pool, user), { ...rest, pii: unflattenIvms101(stored) });
}
