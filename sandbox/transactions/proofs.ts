/**
 * Ownership proofs of a self-hosted wallet (`originatorProof`, `beneficiaryProof` on tx/create, tx/update and the
 * validate requests), in the network's shape.
 *
 * The network's OpenAPI types `OwnershipProof` as `{type, proof}`, two strings, neither required. The spec
 * (shared/spec/network-api-facts.md, from Fireblocks' copy of the same object) names the types and the fuller shape:
 * `attestation`, `address`, `wallet_provider`, `url` and `confirmed`; compliance-facts.md adds BIP-322 to the signed
 * messages. The sandbox reads it as a union discriminated by `type`: a signature or a small deposit needs `proof` (the
 * signature, the deposit's transaction hash), a screenshot its `url`, a self-declaration its `attestation` and
 * `confirmed`. So the OpenAPI's `{type, proof}` stays valid for the signed messages and the deposit.
 *
 * Nothing is verified cryptographically: no public source says the network checks the signatures of v1 proofs.
 */
import { Type } from 'typebox';
import { badRequest } from '../errors';
import { isObject } from '../../lib/is-object';

// model.ts's helper, made here too: model.ts imports this file.
const validationError = (message: string) => badRequest('NotabeneTransactionValidationError', message);

export const SIGNATURE_PROOF_TYPES = ['eip-191', 'eip-712', 'bip-137', 'bip-322'] as const;
export const PROOF_TYPES = [...SIGNATURE_PROOF_TYPES, 'microtransfer', 'screenshot', 'self-declaration'] as const;
export type ProofType = (typeof PROOF_TYPES)[number];

export interface OwnershipProof {
  type: ProofType;
  /** The signature, or the deposit's transaction hash. */
  proof?: string;
  /** The statement signed or declared, e.g. "I certify that ETH account 0x… belongs to me." */
  attestation?: string;
  address?: string;
  wallet_provider?: string;
  /** Where the screenshot is. */
  url?: string;
  /** The customer ticked the declaration. */
  confirmed?: boolean;
}

type Field = Exclude<keyof OwnershipProof, 'type'>;

/** Each field's limit; the signature of a smart-contract wallet (EIP-1271) or a BIP-322 witness runs to a few KiB. */
const STRINGS: Record<Exclude<Field, 'confirmed'>, number> = {
  proof: 16 * 1024,
  attestation: 4096,
  address: 1024,
  wallet_provider: 256,
  url: 2048,
};
const FIELDS: Field[] = ['proof', 'attestation', 'address', 'wallet_provider', 'url', 'confirmed'];

export const REQUIRED_FIELDS: Record<ProofType, Field[]> = {
  'eip-191': ['proof'],
  'eip-712': ['proof'],
  'bip-137': ['proof'],
  'bip-322': ['proof'],
  microtransfer: ['proof'],
  screenshot: ['url'],
  'self-declaration': ['attestation', 'confirmed'],
};

const isProofType = (v: unknown): v is ProofType =>
  typeof v === 'string' && (PROOF_TYPES as readonly string[]).includes(v);

/**
 * The proof at `body[field]`, checked and with its fields in one order (absent when missing or null, as the network
 * reads null). A refusal is 400 naming the field inside the proof (`beneficiaryProof.proof: …`).
 */
export function ownershipProof(body: Record<string, unknown>, field: string): OwnershipProof | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw validationError(`${field}: must be an object {type, proof, …} (OwnershipProof)`);
  if (v.type === undefined || v.type === null || v.type === '')
    throw validationError(`${field}.type: is required, one of ${PROOF_TYPES.join(', ')}`);
  if (!isProofType(v.type)) throw validationError(`${field}.type: must be one of ${PROOF_TYPES.join(', ')}`);
  const type = v.type;
  const unknown = Object.keys(v).find((k) => k !== 'type' && !(FIELDS as string[]).includes(k));
  if (unknown !== undefined)
    throw validationError(
      `${field}.${unknown}: is not a field of an ownership proof (${['type', ...FIELDS].join(', ')})`,
    );
  const out: OwnershipProof = { type };
  for (const name of FIELDS) {
    const value = v[name];
    if (value === undefined || value === null) {
      if (REQUIRED_FIELDS[type].includes(name))
        throw validationError(`${field}.${name}: is required for a ${type} proof`);
      continue;
    }
    if (name === 'confirmed') {
      if (typeof value !== 'boolean') throw validationError(`${field}.confirmed: must be a boolean`);
      out.confirmed = value;
      continue;
    }
    if (typeof value !== 'string') throw validationError(`${field}.${name}: must be a string`);
    if (!value.trim()) throw validationError(`${field}.${name}: must not be empty`);
    if (value.length > STRINGS[name])
      throw validationError(`${field}.${name}: must be at most ${STRINGS[name]} characters`);
    if (name === 'url' && !/^https?:\/\/[^\s/]+/i.test(value))
      throw validationError(`${field}.url: must be an http(s) URL`);
    out[name] = value;
  }
  return out;
}

const str = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '\\S' });
const ProofFields = {
  proof: str(STRINGS.proof),
  attestation: str(STRINGS.attestation),
  address: str(STRINGS.address),
  wallet_provider: str(STRINGS.wallet_provider),
  url: Type.String({ maxLength: STRINGS.url, pattern: '^[hH][tT][tT][pP][sS]?://[^\\s/]+' }),
  confirmed: Type.Boolean(),
};

/** The documented schema of the same union (ownershipProof enforces it; fastify does not). */
export const OwnershipProofSchema = Type.Union(
  PROOF_TYPES.map((type) =>
    Type.Object(
      {
        type: Type.Literal(type),
        ...Object.fromEntries(
          FIELDS.map((f) => [f, REQUIRED_FIELDS[type].includes(f) ? ProofFields[f] : Type.Optional(ProofFields[f])]),
        ),
      },
      { additionalProperties: false },
    ),
  ),
  { description: "The network's OwnershipProof, by type (null: none)" },
);
