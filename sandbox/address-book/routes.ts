import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Did, documented } from '../openapi';
import { ValidationError } from '../../lib/errors';
import { assertValid } from '../../lib/validation';
import type { SandboxContext } from '../context';
import { accessOf } from '../auth/guard';
import type { Access } from '../auth/access';
import { badRequest, forbidden, notFound } from '../errors';
import { normalizeAddress, normalizeAssetInput, normalizeAssetSymbol, normalizeCustomerRef } from './rules';
import { deleteAddresses, findOwners, listPage, PageStarts, pickOwner, registerOne, type SourceType } from './store';
import { UPLOAD_PERMISSION } from './receive';
import type { UploadUrls } from './upload-url';

export const REGISTER_PERMISSION = 'address.registerCustomer';
export const MAX_PER_PAGE = 1000;
export const DEFAULT_PER_PAGE = 100;

const DID_PATTERN = '^did:[a-zA-Z0-9]*:.*$';
const invalid = (field: string, rule: string) => badRequest('ValidationError', `${field}: ${rule}`);

/** Validates against a TypeBox schema, answering the network's 400 that names the field and the rule. */
function check<T extends Parameters<typeof assertValid>[0]>(schema: T, value: unknown, root: string): void {
  try {
    assertValid(schema, value, root);
  } catch (e) {
    if (e instanceof ValidationError) throw badRequest('ValidationError', e.message);
    throw e;
  }
}

/** The caller may act for the VASP (any role on it or on its gateway): reading its book needs no more. */
function requireActFor(access: Access, vaspDid: string): void {
  if (!access.exists(vaspDid)) throw notFound(`VASP ${vaspDid} not found`);
  if (!access.vasps().includes(vaspDid)) throw forbidden(`User ${access.userDid} cannot act for VASP ${vaspDid}`);
}

/** Either address-book permission allows removing entries from the book. */
function requireAddressWrite(access: Access, vaspDid: string): void {
  if (!access.exists(vaspDid)) throw notFound(`VASP ${vaspDid} not found`);
  if (!access.can(vaspDid, UPLOAD_PERMISSION) && !access.can(vaspDid, REGISTER_PERMISSION)) {
    throw forbidden(`User ${access.userDid} is not allowed to ${REGISTER_PERMISSION} for VASP ${vaspDid}`);
  }
}

const RegisterCustomerBody = Type.Object({
  vaspDID: Type.String({ pattern: DID_PATTERN }),
  address: Type.String(),
  customerRef: Type.String(),
  asset: Type.Optional(Type.Unknown()),
});

const VaspParams = Type.Object({ vaspDID: Did });
const ListQuery = Type.Object({
  vasp_did: Did,
  source: Type.Literal('ADDRESS_GRAPH'),
  source_type: Type.Optional(Type.Union([Type.Literal('INTERNAL'), Type.Literal('EXTERNAL')])),
  page: Type.Optional(Type.Integer({ minimum: 0 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PER_PAGE })),
});
const DeleteQuery = Type.Object({
  vasp_did: Did,
  addresses: Type.String({ minLength: 1, description: 'Addresses, comma-separated' }),
});
const OwnershipQuery = Type.Object({ vasp_did: Did, asset: Type.String({ minLength: 1 }) });

const one = (q: Record<string, unknown>, name: string): string | undefined => {
  const v = q[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalid(name, 'must be given once');
  return v;
};

function wholeNumber(q: Record<string, unknown>, name: string, fallback: number, min: number, max?: number): number {
  const raw = one(q, name);
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) {
    throw invalid(name, `must be a whole number from ${min}${max !== undefined ? ` to ${max}` : ' up'}`);
  }
  return n;
}

function requiredDid(q: Record<string, unknown>, name: string): string {
  const v = one(q, name);
  if (!v) throw invalid(name, 'is required');
  if (!new RegExp(DID_PATTERN).test(v)) throw invalid(name, 'must be a DID');
  return v;
}

/** The bearer-guarded endpoints of the address book. */
export function registerApiRoutes(api: FastifyInstance, ctx: SandboxContext, urls: () => Promise<UploadUrls>): void {
  const { pool } = ctx;
  const starts = new PageStarts();

  // GET /address/upload/:vaspDID → {uploadUrl}
  api.get('/address/upload/:vaspDID', documented({ params: VaspParams }), async (request) => {
    const { vaspDID } = request.params as { vaspDID: string };
    accessOf(request).require(vaspDID, UPLOAD_PERMISSION);
    const { uploadUrl } = await (await urls()).issue(vaspDID, accessOf(request).userDid);
    return { uploadUrl };
  });

  // POST /address/registerCustomer {vaspDID, address, customerRef, asset?}
  api.post('/address/registerCustomer', documented({ body: RegisterCustomerBody }), async (request) => {
    const body = request.body ?? {};
    check(RegisterCustomerBody, body, '');
    const b = body as { vaspDID: string; address: string; customerRef: string; asset?: unknown };
    accessOf(request).require(b.vaspDID, REGISTER_PERMISSION);
    const asset = normalizeAssetInput(b.asset);
    if (!asset.ok) throw invalid('asset', asset.rule);
    const address = normalizeAddress(b.address);
    if (!address.ok) throw invalid('address', address.rule);
    const customerRef = normalizeCustomerRef(b.customerRef);
    if (!customerRef.ok) throw invalid('customerRef', customerRef.rule);
    const outcome = await registerOne(pool, b.vaspDID, {
      asset: asset.value,
      address: address.value,
      customerRef: customerRef.value,
    });
    // The network's response body is not documented ("Address Owner is already registered?"): the sandbox answers
    // the entry as stored and what this call did to it: `registered` (new), `updated` (new customerRef), `unchanged`.
    return {
      vaspDID: b.vaspDID,
      asset: asset.value || null,
      address: address.value,
      customerRef: customerRef.value,
      status: outcome,
    };
  });

  // GET /v1/addresses?vasp_did=&source=ADDRESS_GRAPH&source_type=&page=&per_page=
  api.get('/v1/addresses', documented({ querystring: ListQuery }), async (request) => {
    const q = request.query as Record<string, unknown>;
    const vaspDid = requiredDid(q, 'vasp_did');
    const source = one(q, 'source');
    if (!source) throw invalid('source', 'is required');
    if (source !== 'ADDRESS_GRAPH') throw invalid('source', 'must be ADDRESS_GRAPH');
    const sourceType = one(q, 'source_type') || undefined;
    if (sourceType !== undefined && sourceType !== 'INTERNAL' && sourceType !== 'EXTERNAL') {
      throw invalid('source_type', 'must be INTERNAL or EXTERNAL');
    }
    const page = wholeNumber(q, 'page', 0, 0);
    const perPage = wholeNumber(q, 'per_page', DEFAULT_PER_PAGE, 1, MAX_PER_PAGE);
    requireActFor(accessOf(request), vaspDid);
    const { total, data } = await listPage(pool, starts, vaspDid, sourceType as SourceType | undefined, page, perPage);
    return { pagination: { page, per_page: perPage, total }, metadata: { source }, data };
  });

  // DELETE /v1/addresses?addresses=a,b&vasp_did= → 202 {}
  api.delete('/v1/addresses', documented({ querystring: DeleteQuery }), async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const vaspDid = requiredDid(q, 'vasp_did');
    const list = one(q, 'addresses');
    if (!list) throw invalid('addresses', 'is required');
    if (!/^([^,]+,)*([^,]+)$/.test(list)) throw invalid('addresses', 'must be a comma-separated list of addresses');
    requireAddressWrite(accessOf(request), vaspDid);
    const addresses = list.split(',').map((a) => {
      const n = normalizeAddress(a);
      return n.ok ? n.value : a.trim();
    });
    // The network answers 202 and deletes in the background; the sandbox deletes before answering.
    const deleted = await deleteAddresses(pool, vaspDid, addresses);
    request.log.debug({ vaspDid, deleted }, 'addresses deleted');
    return reply.code(202).send({});
  });

  // GET /v1/addresses/address-ownerships/:address?vasp_did=&asset=
  api.get(
    '/v1/addresses/address-ownerships/:address',
    documented({ params: Type.Object({ address: Type.String() }), querystring: OwnershipQuery }),
    async (request) => {
      const q = request.query as Record<string, unknown>;
      const { address } = request.params as { address: string };
      const vaspDid = requiredDid(q, 'vasp_did');
      const rawAsset = one(q, 'asset');
      if (!rawAsset) throw invalid('asset', 'is required');
      const asset = normalizeAssetSymbol(rawAsset);
      if (!asset.ok) throw invalid('asset', asset.rule);
      const addr = normalizeAddress(address);
      if (!addr.ok) throw invalid('address', addr.rule);
      requireActFor(accessOf(request), vaspDid);
      const owner = pickOwner(await findOwners(pool, asset.value, addr.value));
      if (!owner) throw notFound(`No owner of address ${addr.value} for asset ${asset.value} is known`);
      return {
        owner_vasp_did: owner.vaspDid,
        owner_vasp_name: owner.vaspName,
        address: addr.value,
        address_type: 'HOSTED',
        asset: asset.value,
        source: 'ADDRESS_GRAPH',
      };
    },
  );
}
