/**
 * Self-hosted wallets made by the tests and the chaos run to prove ownership with real signatures: a generated
 * secp256k1 key, its Ethereum address, and personal_sign (EIP-191). The key stays in the process (the chaos run's
 * secrets scan looks for it everywhere else).
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';

export interface EthereumWallet {
  /** Lower-case hex, as a wallet may give it (the proofs store keeps EIP-55). */
  address: string;
  secretKey: Uint8Array;
  /** personal_sign (EIP-191): r‖s‖v over keccak256("\x19Ethereum Signed Message:\n" + length + message). */
  personalSign(message: string): string;
}

export function ethereumWallet(): EthereumWallet {
  const secretKey = secp256k1.utils.randomSecretKey();
  const publicKey = secp256k1.getPublicKey(secretKey, false);
  const address = `0x${bytesToHex(keccak_256(publicKey.slice(1)).slice(-20))}`;
  const personalSign = (message: string) => {
    const body = utf8ToBytes(message);
    const digest = keccak_256(concatBytes(utf8ToBytes(`\x19Ethereum Signed Message:\n${body.length}`), body));
    const sig = secp256k1.Signature.fromBytes(
      secp256k1.sign(digest, secretKey, { prehash: false, format: 'recovered' }),
      'recovered',
    );
    return `0x${bytesToHex(sig.toBytes('compact'))}${(27 + sig.recovery!).toString(16)}`;
  };
  return { address, secretKey, personalSign };
}
