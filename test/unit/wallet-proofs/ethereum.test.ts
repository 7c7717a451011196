import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes, randomBytes } from '@noble/hashes/utils.js';
import { challengeFor, type ChallengeFields, type Eip712TypedData } from '../../../wallet-proofs/challenge';
import { verifyOwnershipSignature } from '../../../wallet-proofs/signature';
import {
  eip191Digest,
  eip712Digest,
  ethereumAddressOf,
  parseEthereumSignature,
  recoverEthereumAddress,
} from '../../../wallet-proofs/signature/ethereum';
import { toChecksumAddress } from '../../../wallet-proofs/addresses';
import { thrownValidationError as thrown } from '../../harness/thrown';

function wallet() {
  const secretKey = secp256k1.utils.randomSecretKey();
  return { secretKey, address: toChecksumAddress(ethereumAddressOf(secp256k1.getPublicKey(secretKey, false))) };
}

/** r‖s‖v with v = 27 + recovery, as wallets return it. */
function sign(digest: Uint8Array, secretKey: Uint8Array): string {
  const sig = secp256k1.Signature.fromBytes(
    secp256k1.sign(digest, secretKey, { prehash: false, format: 'recovered' }),
    'recovered',
  );
  return `0x${bytesToHex(sig.toBytes('compact'))}${(27 + sig.recovery!).toString(16)}`;
}

function fieldsFor(address: string, over: Partial<ChallengeFields> = {}): ChallengeFields {
  return {
    nonce: bytesToHex(randomBytes(32)),
    address,
    asset: 'ETH',
    customerRef: 'cust-7f3a',
    vaspDid: 'did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH',
    expiresAt: '2026-11-28T14:00:00.000Z',
    ...over,
  };
}

const signEip191 = (fields: ChallengeFields, secretKey: Uint8Array) =>
  sign(eip191Digest((challengeFor('EIP191', fields) as { message: string }).message), secretKey);
const signEip712 = (fields: ChallengeFields, secretKey: Uint8Array) =>
  sign(eip712Digest((challengeFor('EIP712', fields) as { typedData: Eip712TypedData }).typedData), secretKey);

describe.each([
  ['EIP191', signEip191],
  ['EIP712', signEip712],
] as const)('%s ownership signature', (scheme, signWith) => {
  const { secretKey, address } = wallet();
  const fields = fieldsFor(address);
  const signature = signWith(fields, secretKey);

  it('is valid for the signing key’s address, in any letter case, with v as 27/28 or 0/1', () => {
    expect(verifyOwnershipSignature(scheme, fields, signature)).toEqual({ valid: true });
    expect(verifyOwnershipSignature(scheme, { ...fields, address: address.toLowerCase() }, signature)).toEqual({
      valid: true,
    });
    const v01 = `${signature.slice(0, 130)}0${Number.parseInt(signature.slice(130), 16) - 27}`;
    expect(verifyOwnershipSignature(scheme, fields, v01)).toEqual({ valid: true });
  });

  it('is invalid, with a reason, for another address, a changed nonce, expiry, customer or asset', () => {
    const other = wallet().address;
    for (const changed of [
      { address: other },
      { nonce: bytesToHex(randomBytes(32)) },
      { expiresAt: '2026-11-28T15:00:00.000Z' },
      { customerRef: 'cust-other' },
      { asset: 'USDC-ERC20' },
    ]) {
      const check = verifyOwnershipSignature(scheme, { ...fields, ...changed }, signature);
      expect(check).toEqual({ valid: false, reason: expect.stringMatching(/another address/) });
    }
  });

  it('refuses the high-s mirror of a valid signature (same key, same content)', () => {
    const compact = hexToBytes(signature.slice(2, 130));
    const sig = secp256k1.Signature.fromBytes(compact, 'compact');
    const n = secp256k1.Point.CURVE().n;
    const mirrored = new secp256k1.Signature(sig.r, n - sig.s);
    const v = Number.parseInt(signature.slice(130), 16) === 27 ? '1c' : '1b';
    const check = verifyOwnershipSignature(scheme, fields, `0x${bytesToHex(mirrored.toBytes('compact'))}${v}`);
    expect(check).toEqual({ valid: false, reason: expect.stringMatching(/non-canonical/) });
  });

  it('throws a ValidationError naming signature for a malformed one', () => {
    for (const bad of [signature.slice(0, -2), `${signature}00`, `0x${'zz'.repeat(65)}`, 'not a signature', '']) {
      expect(thrown(() => verifyOwnershipSignature(scheme, fields, bad)).details.field).toBe('signature');
    }
    const badV = `${signature.slice(0, 130)}1d`;
    expect(thrown(() => verifyOwnershipSignature(scheme, fields, badV)).details).toMatchObject({
      field: 'signature',
      rule: expect.stringMatching(/27, 28, 0 or 1/),
    });
  });

  it('throws naming address for a Bitcoin address or a wrong EIP-55 checksum, scheme for a Bitcoin scheme', () => {
    const btc = { ...fields, address: 'bc1q9vza2e8x573nczrlzms0wvx3gsqjx7vavgkx0l' };
    expect(thrown(() => verifyOwnershipSignature(scheme, btc, signature)).details.field).toBe('address');
    const flipped = address.replace(/[a-f]/, (c) => c.toUpperCase());
    expect(
      thrown(() => verifyOwnershipSignature(scheme, { ...fields, address: flipped }, signature)).details,
    ).toMatchObject({ field: 'address', rule: expect.stringMatching(/EIP-55/) });
    expect(thrown(() => verifyOwnershipSignature('BIP322', fields, signature)).details.field).toBe('scheme');
  });

  it('throws naming the field for a malformed nonce, expiry or a field with a newline', () => {
    expect(thrown(() => verifyOwnershipSignature(scheme, { ...fields, nonce: 'abc' }, signature)).details.field).toBe(
      'nonce',
    );
    expect(
      thrown(() => verifyOwnershipSignature(scheme, { ...fields, expiresAt: 'tomorrow' }, signature)).details.field,
    ).toBe('expiresAt');
    expect(
      thrown(() => verifyOwnershipSignature(scheme, { ...fields, customerRef: 'a\nNonce: 00' }, signature)).details
        .field,
    ).toBe('customerRef');
  });
});

describe('published vectors', () => {
  it('EIP-191: web3.js accounts.sign("Some data") recovers its address', () => {
    const digest = eip191Digest('Some data');
    expect(bytesToHex(digest)).toBe('1da44b586eb0729ff70a73c326926f6ed5a25f5b056e7f47fbc6e58d86871655');
    const sig =
      '0xb91467e570a6466aa9e9876cbcd013baba02900b8979d43fe208a4a4f339f5fd6007e74cd82e037b800186422fc2da167c747ef045e5d18a5f5d4300f8e1a0291c';
    expect(recoverEthereumAddress(digest, parseEthereumSignature(sig))).toEqual({
      address: '0x2c7536e3605d9c16a7a3d7b1898e529396a65c23',
    });
  });

  it('EIP-712: the specification’s "Mail" example gives its digest and recovers its signer', () => {
    const typedData: Eip712TypedData = {
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
        Person: [
          { name: 'name', type: 'string' },
          { name: 'wallet', type: 'address' },
        ],
        Mail: [
          { name: 'from', type: 'Person' },
          { name: 'to', type: 'Person' },
          { name: 'contents', type: 'string' },
        ],
      },
      primaryType: 'Mail',
      domain: {
        name: 'Ether Mail',
        version: '1',
        chainId: 1,
        verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
      },
      message: {
        from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
        to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
        contents: 'Hello, Bob!',
      },
    };
    const digest = eip712Digest(typedData);
    expect(bytesToHex(digest)).toBe('be609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2');
    const sig =
      '0x4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b915621c';
    expect(recoverEthereumAddress(digest, parseEthereumSignature(sig))).toEqual({
      address: '0xcd2a3d9f938e13cd947ec05abc7fe734df8dd826',
    });
  });
});
