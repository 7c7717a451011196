/**
 * Strict byte encodings. Node's Buffer decoders skip characters they do not understand, so two different strings can
 * decode to the same bytes; these helpers accept exactly one spelling per value and return `undefined` otherwise,
 * leaving the choice of error (and of a message free of the value) to the caller.
 */

const HEX = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Decodes hex of exactly `bytes` bytes (either letter case). */
export function hexToBytes(hex: unknown, bytes: number): Uint8Array | undefined {
  if (typeof hex !== 'string' || hex.length !== bytes * 2 || !HEX.test(hex)) return undefined;
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

export function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function bytesToBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/**
 * Decodes unpadded base64url. The canonical-form check rejects strings whose unused trailing bits are set, so a
 * tampered last character is never silently absorbed.
 */
export function base64urlToBytes(text: unknown, expectedLength?: number): Uint8Array | undefined {
  if (typeof text !== 'string' || !BASE64URL.test(text) || text.length % 4 === 1) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  if (expectedLength !== undefined && bytes.length !== expectedLength) return undefined;
  if (bytes.toString('base64url') !== text) return undefined;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
