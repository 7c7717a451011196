import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, randomBytes } from '@noble/hashes/utils.js';
import { base64 } from '@scure/base';
import { Address, OutScript, p2tr, p2wpkh, RawWitness } from '@scure/btc-signer';
import { challengeFor, type ChallengeFields } from '../../../wallet-proofs/challenge';
import { verifyOwnershipSignature } from '../../../wallet-proofs/signature';
import {
  bip322MessageHash,
  bip322Transactions,
  bitcoinMessageDigest,
  verifyBip322,
} from '../../../wallet-proofs/signature/bitcoin';
import { thrownValidationError as thrown } from '../../harness/thrown';

const fieldsFor = (address: string): ChallengeFields => ({
  nonce: bytesToHex(randomBytes(32)),
  address,
  asset: 'BTC',
  customerRef: 'cust-7f3a',
  vaspDid: 'did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH',
  expiresAt: '2026-11-28T14:00:00.000Z',
});
const messageOf = (fields: ChallengeFields, scheme: 'BIP137' | 'BIP322') =>
  (challengeFor(scheme, fields) as { message: string }).message;

/** BIP-137 by hand: header 39 + recovery for P2WPKH, r‖s. */
function signBip137(message: string, secretKey: Uint8Array, header: number): string {
  const sig = secp256k1.Signature.fromBytes(
    secp256k1.sign(bitcoinMessageDigest(message), secretKey, { prehash: false, format: 'recovered' }),
    'recovered',
  );
  return base64.encode(new Uint8Array([header + sig.recovery!, ...sig.toBytes('compact')]));
}

/** BIP-322 simple, signed by @scure/btc-signer's own transaction signer. */
function signBip322(script: Uint8Array, message: string, secretKey: Uint8Array, tapInternalKey?: Uint8Array): string {
  const { toSign } = bip322Transactions(script, message);
  if (tapInternalKey) toSign.updateInput(0, { tapInternalKey });
  toSign.signIdx(secretKey, 0);
  toSign.finalizeIdx(0);
  return base64.encode(RawWitness.encode(toSign.getInput(0).finalScriptWitness!));
}

describe('Bitcoin ownership signatures', () => {
  const secretKey = secp256k1.utils.randomSecretKey();
  const publicKey = secp256k1.getPublicKey(secretKey, true);
  const wpkh = p2wpkh(publicKey);
  const other = p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true)).address!;

  it.each([
    ['BIP137', (f: ChallengeFields) => signBip137(messageOf(f, 'BIP137'), secretKey, 39)],
    ['BIP322', (f: ChallengeFields) => signBip322(wpkh.script, messageOf(f, 'BIP322'), secretKey)],
  ] as const)('%s P2WPKH: valid; invalid for another address, nonce or expiry; malformed throws', (scheme, sign) => {
    const fields = fieldsFor(wpkh.address!);
    const signature = sign(fields);
    expect(verifyOwnershipSignature(scheme, fields, signature)).toEqual({ valid: true });
    for (const changed of [
      { address: other },
      { nonce: bytesToHex(randomBytes(32)) },
      { expiresAt: '2026-11-28T15:00:00.000Z' },
    ]) {
      const check = verifyOwnershipSignature(scheme, { ...fields, ...changed }, signature);
      expect(check).toEqual({ valid: false, reason: expect.any(String) });
    }
    for (const bad of ['not base64!', signature.slice(0, 12), 'AAAA']) {
      expect(thrown(() => verifyOwnershipSignature(scheme, fields, bad)).details.field).toBe('signature');
    }
    const eth = { ...fields, address: '0x2c7536e3605d9c16a7a3d7b1898e529396a65c23' };
    expect(thrown(() => verifyOwnershipSignature(scheme, eth, signature)).details.field).toBe('address');
    expect(thrown(() => verifyOwnershipSignature('EIP191', fields, signature)).details.field).toBe('scheme');
  });

  it('BIP-137 with a compressed P2PKH header (as Electrum signs segwit) is valid for the P2WPKH address', () => {
    const fields = fieldsFor(wpkh.address!);
    expect(verifyOwnershipSignature('BIP137', fields, signBip137(messageOf(fields, 'BIP137'), secretKey, 31))).toEqual({
      valid: true,
    });
  });

  it('BIP-322 P2TR key path: valid, and invalid for another address', () => {
    const xOnly = publicKey.slice(1);
    const tr = p2tr(xOnly);
    const fields = fieldsFor(tr.address!);
    const signature = signBip322(tr.script, messageOf(fields, 'BIP322'), secretKey, xOnly);
    expect(verifyOwnershipSignature('BIP322', fields, signature)).toEqual({ valid: true });
    const otherTr = p2tr(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true).slice(1)).address!;
    expect(verifyOwnershipSignature('BIP322', { ...fields, address: otherTr }, signature)).toMatchObject({
      valid: false,
    });
  });

  it('BIP-322 published vectors: message hashes, to_spend ids and the "Hello World" P2WPKH signature', () => {
    expect(bytesToHex(bip322MessageHash(''))).toBe('c90c269c4f8fcbe6880f72a721ddfbf1914268a794cbb21cfafee13770ae19f1');
    expect(bytesToHex(bip322MessageHash('Hello World'))).toBe(
      'f0eb03b1a75ac6d9847f55c624a99169b5dccba2a31f5b23bea77ba270de0a7a',
    );
    const address = 'bc1q9vza2e8x573nczrlzms0wvx3gsqjx7vavgkx0l';
    const script = OutScript.encode(Address().decode(address));
    expect(bip322Transactions(script, '').toSpend.id).toBe(
      'c5680aa69bb8d860bf82d4e9cd3504b55dde018de765a91bb566283c545a99a7',
    );
    expect(bip322Transactions(script, 'Hello World').toSpend.id).toBe(
      'b79d196740ad5217771c1098fc4a4b51e0535c32236c71f1ea4d61a2d603352b',
    );
    const helloWorld =
      'AkcwRAIgZRfIY3p7/DoVTty6YZbWS71bc5Vct9p9Fia83eRmw2QCICK/ENGfwLtptFluMGs2KsqoNSk89pO7F29zJLUx9a/sASECx/EgAxlkQpQ9hYjgGu6EBCPMVPwVIVJqO4XCsMvViHI=';
    expect(verifyBip322(address, 'Hello World', helloWorld)).toEqual({ valid: true });
    expect(verifyBip322(address, 'Hello World!', helloWorld)).toMatchObject({ valid: false });
  });
});
