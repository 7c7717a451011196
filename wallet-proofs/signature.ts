/**
 * Verifies an ownership-proof signature over the challenge rebuilt from its fields. Pure: no clock, no store; the
 * caller decides about expiry and nonce reuse, and records the result.
 */
import { ValidationError } from '../lib/errors';
import { assertAddressForAsset, chainOfAssetOrThrow, schemesFor } from './addresses';
import { challengeFor, normalizedFields, type ChallengeFields, type SignatureScheme } from './challenge';
import { verifyBip137, verifyBip322 } from './signature/bitcoin';
import { eip191Digest, eip712Digest, verifyEthereumSignature } from './signature/ethereum';

export type SignatureCheck = { valid: true } | { valid: false; reason: string };

/**
 * Verifies the signature over challengeFor(scheme, fields) made by the key of fields.address. Throws ValidationError
 * naming `signature` for a malformed signature (wrong length, not hex/base64), never for a wrong one; naming
 * `address` for an address not of the asset's chain, `scheme` for a scheme that chain's wallets do not use.
 */
export function verifyOwnershipSignature(
  scheme: SignatureScheme,
  fields: ChallengeFields,
  signature: string,
): SignatureCheck {
  const chain = chainOfAssetOrThrow('asset', fields.asset);
  if (!schemesFor(chain).includes(scheme))
    throw new ValidationError('scheme', `must be one of ${schemesFor(chain).join(', ')} for an asset on ${chain}`);
  // Before normalizing, which would put a mistyped EIP-55 spelling right.
  assertAddressForAsset('address', fields.asset, fields.address);
  const f = normalizedFields(fields);
  if (typeof signature !== 'string' || signature.length === 0 || signature.length > 4096)
    throw new ValidationError('signature', 'must be a non-empty string of at most 4096 characters');
  const challenge = challengeFor(scheme, f);
  switch (scheme) {
    case 'EIP191':
      return verifyEthereumSignature(eip191Digest((challenge as { message: string }).message), signature, f.address);
    case 'EIP712':
      return verifyEthereumSignature(eip712Digest((challenge as { typedData: never }).typedData), signature, f.address);
    case 'BIP137':
      return verifyBip137(f.address, (challenge as { message: string }).message, signature);
    case 'BIP322':
      return verifyBip322(f.address, (challenge as { message: string }).message, signature);
  }
}
