/**
 * Bitcoin message signatures: BIP-137 (the compact "Bitcoin Signed Message" signature) and BIP-322's "simple" form
 * for P2WPKH and P2TR addresses. Key recovery and ECDSA/Schnorr are @noble/curves'; addresses, scripts and the
 * BIP-143/BIP-341 signature hashes of BIP-322's virtual transactions are @scure/btc-signer's.
 */
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { equalBytes } from '@noble/curves/utils.js';
import { concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { base64 } from '@scure/base';
import {
  CompactSize,
  OutScript,
  p2pkh,
  p2sh,
  p2wpkh,
  RawWitness,
  Script,
  SigHash,
  Transaction,
} from '@scure/btc-signer';
import { ValidationError } from '../../lib/errors';
import { decodeBitcoinAddress } from '../addresses';
import type { SignatureCheck } from '../signature';

const dsha256 = (b: Uint8Array) => sha256(sha256(b));

/** Strict standard base64 (padding required); anything else is malformed and names `signature`. */
function base64Bytes(signature: string, what: string): Uint8Array {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(signature))
    throw new ValidationError('signature', `must be base64 (${what})`);
  return base64.decode(signature);
}

/** The hash BIP-137 wallets sign: double SHA-256 of the "Bitcoin Signed Message:\n" prefix and the message. */
export function bitcoinMessageDigest(message: string): Uint8Array {
  const prefix = utf8ToBytes('\x18Bitcoin Signed Message:\n');
  const body = utf8ToBytes(message);
  return dsha256(concatBytes(prefix, CompactSize.encode(BigInt(body.length)), body));
}

/**
 * BIP-137: 65 bytes, a header (27–30 P2PKH uncompressed, 31–34 P2PKH compressed, 35–38 P2SH-P2WPKH, 39–42 P2WPKH,
 * plus the recovery id) and r‖s. The recovered key's address of the same kind as `address` must be `address`; the
 * header's kind is not trusted, since Electrum and others sign segwit addresses with a 31–34 header.
 */
export function verifyBip137(address: string, message: string, signature: string): SignatureCheck {
  const bytes = base64Bytes(signature, 'a 65-byte BIP-137 signature is 88 characters');
  if (bytes.length !== 65) throw new ValidationError('signature', `must be 65 bytes for BIP-137, not ${bytes.length}`);
  const header = bytes[0]!;
  if (header < 27 || header > 42) throw new ValidationError('signature', 'the BIP-137 header byte must be 27 to 42');
  const decoded = decodeBitcoinAddress('address', address);
  if (decoded.type !== 'pkh' && decoded.type !== 'sh' && decoded.type !== 'wpkh')
    throw new ValidationError(
      'scheme',
      `BIP-137 covers P2PKH, P2SH-P2WPKH and P2WPKH addresses; use BIP322 for this one`,
    );
  let sig;
  try {
    sig = secp256k1.Signature.fromBytes(bytes.slice(1), 'compact');
  } catch {
    return { valid: false, reason: 'r or s is out of range for secp256k1' };
  }
  if (sig.hasHighS())
    return { valid: false, reason: 'non-canonical signature (s in the upper half of the curve order)' };
  const compressed = header >= 31;
  let publicKey: Uint8Array;
  try {
    publicKey = sig
      .addRecoveryBit((header - 27) & 3)
      .recoverPublicKey(bitcoinMessageDigest(message))
      .toBytes(compressed);
  } catch {
    return { valid: false, reason: 'no public key recovers from this signature' };
  }
  if (!compressed && decoded.type !== 'pkh')
    return { valid: false, reason: 'an uncompressed-key signature (header 27–30) cannot be for a segwit address' };
  const script =
    decoded.type === 'pkh'
      ? p2pkh(publicKey).script
      : decoded.type === 'wpkh'
        ? p2wpkh(publicKey).script
        : p2sh(p2wpkh(publicKey)).script;
  return equalBytes(script, OutScript.encode(decoded))
    ? { valid: true }
    : { valid: false, reason: 'the signature was made by the key of another address, or over another message' };
}

/** BIP-322's tagged hash of the message. */
export function bip322MessageHash(message: string): Uint8Array {
  const tag = sha256(utf8ToBytes('BIP0322-signed-message'));
  return sha256(concatBytes(tag, tag, utf8ToBytes(message)));
}

/** BIP-322's virtual transactions: to_spend pays the address; to_sign spends it to OP_RETURN. */
export function bip322Transactions(
  scriptPubKey: Uint8Array,
  message: string,
): { toSpend: Transaction; toSign: Transaction } {
  const toSpend = new Transaction({ version: 0, allowUnknownInputs: true, allowUnknownOutputs: true });
  // The output first: an input with a final scriptSig counts as signed, and a signed transaction takes no new output.
  toSpend.addOutput({ script: scriptPubKey, amount: 0n });
  toSpend.addInput({
    txid: new Uint8Array(32),
    index: 0xffffffff,
    sequence: 0,
    finalScriptSig: Script.encode(['OP_0', bip322MessageHash(message)]),
  });
  const toSign = new Transaction({ version: 0, allowUnknownOutputs: true });
  toSign.addInput({ txid: toSpend.id, index: 0, sequence: 0, witnessUtxo: { script: scriptPubKey, amount: 0n } });
  toSign.addOutput({ script: Script.encode(['RETURN']), amount: 0n });
  return { toSpend, toSign };
}

/**
 * BIP-322 "simple": the base64 of to_sign's witness stack. P2WPKH: [DER signature + SIGHASH_ALL, compressed key],
 * the key hashing to the address and the signature over the BIP-143 hash. P2TR (key path): [Schnorr signature], over
 * the BIP-341 hash, by the address's output key.
 */
export function verifyBip322(address: string, message: string, signature: string): SignatureCheck {
  const bytes = base64Bytes(signature, 'a BIP-322 simple signature is a base64 witness stack');
  let witness: Uint8Array[];
  try {
    witness = RawWitness.decode(bytes);
  } catch {
    throw new ValidationError('signature', 'must be a BIP-322 simple signature: a base64-encoded witness stack');
  }
  const decoded = decodeBitcoinAddress('address', address);
  const script = OutScript.encode(decoded);
  if (decoded.type === 'wpkh') {
    const [sigWithType, publicKey] = witness;
    if (witness.length !== 2 || !sigWithType || !publicKey || publicKey.length !== 33)
      return { valid: false, reason: 'a P2WPKH witness must hold a signature and a compressed public key' };
    if (!equalBytes(ripemd160(sha256(publicKey)), decoded.hash))
      return { valid: false, reason: 'the signature was made by the key of another address' };
    if (sigWithType[sigWithType.length - 1] !== SigHash.ALL)
      return { valid: false, reason: 'the signature must use SIGHASH_ALL' };
    let sig;
    try {
      sig = secp256k1.Signature.fromBytes(sigWithType.slice(0, -1), 'der');
    } catch {
      return { valid: false, reason: 'the witness signature is not a DER-encoded ECDSA signature' };
    }
    if (sig.hasHighS())
      return { valid: false, reason: 'non-canonical signature (s in the upper half of the curve order)' };
    const { toSign } = bip322Transactions(script, message);
    const sighash = toSign.preimageWitnessV0(0, p2pkh(publicKey).script, SigHash.ALL, 0n);
    return secp256k1.verify(sig.toBytes('compact'), sighash, publicKey, { prehash: false })
      ? { valid: true }
      : { valid: false, reason: 'the signature is not over this message' };
  }
  if (decoded.type === 'tr') {
    const [sig] = witness;
    if (witness.length !== 1 || !sig || (sig.length !== 64 && sig.length !== 65))
      return { valid: false, reason: 'a P2TR key-path witness must hold one 64- or 65-byte Schnorr signature' };
    const hashType = sig.length === 65 ? sig[64]! : SigHash.DEFAULT;
    if (hashType !== SigHash.DEFAULT && hashType !== SigHash.ALL)
      return { valid: false, reason: 'the signature must use SIGHASH_DEFAULT or SIGHASH_ALL' };
    const { toSign } = bip322Transactions(script, message);
    const sighash = toSign.preimageWitnessV1(0, [script], hashType, [0n]);
    return schnorr.verify(sig.slice(0, 64), sighash, decoded.pubkey)
      ? { valid: true }
      : { valid: false, reason: 'the signature was made by the key of another address, or over another message' };
  }
  throw new ValidationError(
    'scheme',
    'BIP-322 simple signatures cover P2WPKH and P2TR addresses; use BIP137 for this one',
  );
}
