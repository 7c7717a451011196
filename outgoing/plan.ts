/**
 * Planning an outgoing transfer: who can read its personal data (the mode and the keys it is encrypted to), from the
 * request, the directory and whether the originator's keys are held here. Reads only public information; private
 * keys stay in the keystore.
 */
import type { GroupConfig } from '../lib/group';
import { remoteDidKey } from '../lib/crypto';
import { ForbiddenError, NotFoundError, ValidationError } from '../lib/errors';
import { addressOwner, vaspProfile, type VaspProfile } from '../network/directory';
import { escrowDidKey } from '../network/pii';
import { activeKey, cached, type TransferContext } from './context';
import { assetLabel, type OutgoingRequest, type OutgoingTransferBody } from './request';

/**
 * How the personal data is protected:
 * - `end-to-end`: originator and beneficiary keys;
 * - `hybrid`: end-to-end plus the originator's service-managed (escrow) key, for the network's screening;
 * - `escrow`: the beneficiary has no key; encrypted to its escrow key (pseudo end-to-end);
 * - `originator-only`: the beneficiary has no key; only the originator can read (the agent's rule);
 * - `hosted`: the originator's keys are not held here; the data goes to the network unencrypted, as the agent does.
 */
export type PiiMode = 'end-to-end' | 'hybrid' | 'escrow' | 'originator-only' | 'hosted';

export interface TransferPlan {
  originatorVaspDid: string;
  beneficiaryVaspDid?: string;
  /** How the beneficiary VASP was found: given by the caller, by the destination address's owner, or not at all. */
  beneficiaryResolvedBy: 'request' | 'address' | 'none';
  mode: PiiMode;
  /** did:keys the data is encrypted to besides the originator's own (in order). */
  recipients: string[];
}

/** Refuses what can never become a transfer: the gateway as originator, a VASP outside the group. */
export function assertOriginatorAllowed(group: GroupConfig, originatorVaspDid: string): void {
  if (group.gatewayDid && originatorVaspDid === group.gatewayDid) {
    throw new ValidationError(
      'originatorVASPdid',
      'is the gateway VASP; outgoing transfers from a gateway are not allowed, the originator must be one of its subsidiaries',
    );
  }
  if (group.subsidiaryDids.length > 0 && !group.subsidiaryDids.includes(originatorVaspDid)) {
    throw new ValidationError('originatorVASPdid', 'is not a subsidiary of this group (SUBSIDIARY_VASP_DIDS)');
  }
}

/**
 * The VASP's published `pii_didkey`, or undefined when it has none (or publishes something that is not an Ed25519
 * did:key, which no one could encrypt to). An unknown VASP is a ValidationError naming `field`.
 */
export async function publishedKey(
  ctx: TransferContext,
  vaspDid: string,
  field = 'beneficiaryVASPdid',
): Promise<string | undefined> {
  return cached(ctx, `pii_didkey|${vaspDid}`, async () => {
    let profile: VaspProfile;
    try {
      profile = await vaspProfile(ctx.network, vaspDid);
    } catch (e) {
      if (e instanceof NotFoundError) throw new ValidationError(field, 'is not a VASP in the network directory');
      throw e;
    }
    const key = profile.pii_didkey;
    if (typeof key !== 'string' || key === '') return undefined;
    try {
      remoteDidKey(key, field);
      return key;
    } catch {
      ctx.logger.warn(
        { vaspDid },
        'published pii_didkey is not a usable Ed25519 did:key; treating the VASP as keyless',
      );
      return undefined;
    }
  });
}

/** The VASP's escrow did:key at the personal-data service (`GET {pii}/get-escrow-didkey?vaspDID=`). */
export async function escrowKey(ctx: TransferContext, vaspDid: string): Promise<string> {
  const did = await cached(ctx, `escrow|${vaspDid}`, () => escrowDidKey(ctx.network, vaspDid));
  if (!did) throw new NotFoundError(`the personal-data service has no escrow key for ${vaspDid}`);
  remoteDidKey(did, 'escrow did');
  return did;
}

/** The destination address's owner as the network knows it, if it knows one. */
async function ownerOfAddress(ctx: TransferContext, body: OutgoingTransferBody): Promise<string | undefined> {
  try {
    return await addressOwner(ctx.network, {
      address: body.transactionBlockchainInfo.destination,
      vaspDid: body.originatorVASPdid,
      asset: assetLabel(body.transactionAsset),
    });
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

/**
 * Decides who can read the data. Reads only public information and whether the originator's key is held here
 * (`originatorKeyHeld` when the caller already knows it, as the API does from the keystore's list, without unsealing).
 */
export async function planTransfer(
  ctx: TransferContext,
  request: OutgoingRequest,
  originatorKeyHeld?: boolean,
): Promise<TransferPlan> {
  const { body } = request;
  assertOriginatorAllowed(ctx.group, body.originatorVASPdid);
  const originatorKey = originatorKeyHeld ?? (await activeKey(ctx, body.originatorVASPdid)) !== undefined;
  let beneficiaryVaspDid = body.beneficiaryVASPdid;
  let beneficiaryResolvedBy: TransferPlan['beneficiaryResolvedBy'] = beneficiaryVaspDid ? 'request' : 'none';
  if (!beneficiaryVaspDid) {
    beneficiaryVaspDid = await ownerOfAddress(ctx, body);
    if (beneficiaryVaspDid) beneficiaryResolvedBy = 'address';
  }
  const base = { originatorVaspDid: body.originatorVASPdid, beneficiaryVaspDid, beneficiaryResolvedBy };
  // Check the beneficiary exists even when nothing is encrypted for it: a transfer to an unknown VASP is refused.
  const beneficiaryKey = beneficiaryVaspDid ? await publishedKey(ctx, beneficiaryVaspDid) : undefined;
  if (!originatorKey) {
    if (request.source === 'api') {
      throw new ValidationError(
        'originatorVASPdid',
        'has no active key in the keystore, so its data cannot be encrypted end to end',
      );
    }
    return { ...base, mode: 'hosted', recipients: [] };
  }
  if (request.hybrid) {
    const escrow = await escrowKey(ctx, body.originatorVASPdid);
    return { ...base, mode: 'hybrid', recipients: beneficiaryKey ? [escrow, beneficiaryKey] : [escrow] };
  }
  if (beneficiaryKey) return { ...base, mode: 'end-to-end', recipients: [beneficiaryKey] };
  if (ctx.config.noKeyMode === 'escrow' && beneficiaryVaspDid) {
    // The beneficiary's escrow key when the service shows it to us; it may show a VASP's escrow key only to that
    // VASP's users, and then the originator's escrow key serves the same purpose: the service can decrypt for both
    // parties' web UI.
    let escrow: string;
    try {
      escrow = await escrowKey(ctx, beneficiaryVaspDid);
    } catch (e) {
      if (!(e instanceof ForbiddenError) && !(e instanceof NotFoundError)) throw e;
      escrow = await escrowKey(ctx, body.originatorVASPdid);
    }
    return { ...base, mode: 'escrow', recipients: [escrow] };
  }
  return { ...base, mode: 'originator-only', recipients: [] };
}
