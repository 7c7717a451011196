/**
 * Key-encryption key of ECDH-1PU as did-jwt (and so the network) computes it: draft-madden-jose-ecdh-1pu-03, i.e.
 * ConcatKDF-SHA256 over zE ‖ zS with algorithm id "ECDH-1PU+XC20PKW", empty apu/apv, and no cc-tag (the tag binding
 * of draft 4 and of DIDComm v2 is absent). A 256-bit key needs a single SHA-256 round.
 */
import { createHash } from 'node:crypto';

export const KEY_AGREEMENT_ALG = 'ECDH-1PU+XC20PKW';

/** OtherInfo = len‖AlgorithmID ‖ len‖apu (empty) ‖ len‖apv (empty) ‖ keydatalen in bits; fixed for this format. */
const OTHER_INFO = (() => {
  const alg = Buffer.from(KEY_AGREEMENT_ALG, 'ascii');
  const out = Buffer.alloc(4 + alg.length + 4 + 4 + 4);
  let at = out.writeUInt32BE(alg.length, 0);
  at += alg.copy(out, at);
  at = out.writeUInt32BE(0, at);
  at = out.writeUInt32BE(0, at);
  out.writeUInt32BE(256, at);
  return out;
})();
const ROUND_1 = Buffer.from([0, 0, 0, 1]);

export function ecdh1puKek(zE: Uint8Array, zS: Uint8Array): Buffer {
  return createHash('sha256').update(ROUND_1).update(zE).update(zS).update(OTHER_INFO).digest();
}
