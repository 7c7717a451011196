/**
 * The personal-data service's store routes (register inside the `/pii` plugin, PII audience), as `@notabene/pii-sdk`
 * calls them:
 *
 * - `POST /pii/put` `{fromDID, toDID, data: [{key, value}]}` → `[{key, value: <CID>}]`, same order. `value` is the
 *   encrypted value (a JWE JSON string); the store keeps it as the item `{"key","value"}` whose CIDv1 (raw, sha2-256,
 *   base32) is answered. The caller must act for fromDID or toDID (403 otherwise); both are recorded as owners.
 * - `POST /pii/get` `["<CID>", …]` → `[{cid, data: "{\"key\":…,\"value\":…}"}]` for the CIDs the caller may read: those
 *   owned (as fromDID or toDID of some put) by a VASP the caller acts for — a gateway's users act for its subsidiaries.
 *   Unknown CIDs and CIDs owned by others are simply absent from the answer (never 403/404), so a CID reveals nothing.
 */
import type { FastifyInstance } from 'fastify';
import { withTransaction } from '../../db/transaction';
import { Type } from 'typebox';
import { Did, documented } from '../openapi';
import { accessOf } from '../auth/guard';
import type { SandboxContext } from '../context';
import { badRequest, forbidden } from '../errors';
import { getItems, putEntries, type PiiEntry } from './store';

export {
  cidOf,
  itemData,
  putEntries,
  getItems,
  addOwners,
  parseItem,
  piiLeaves,
  looksLikeCid,
  type PiiEntry,
  type StoredItem,
} from './store';
export { HostedKeys } from './hosted';

const DID = /^did:[a-zA-Z0-9]*:.+$/;
const MAX_ITEMS = 5000;
const MAX_KEY = 512;
const MAX_VALUE = 256 * 1024;

const invalid = (message: string) => badRequest('ValidationError', message);

const PutBody = Type.Object({
  fromDID: Did,
  toDID: Did,
  data: Type.Array(
    Type.Object({
      key: Type.String({ minLength: 1, maxLength: MAX_KEY }),
      value: Type.String({ minLength: 1, maxLength: MAX_VALUE, description: 'A JWE (JSON string)' }),
    }),
    { minItems: 1, maxItems: MAX_ITEMS },
  ),
});
const GetBody = Type.Array(Type.String({ description: 'A CID' }), { maxItems: MAX_ITEMS });

function parsePut(body: unknown): { fromDID: string; toDID: string; data: PiiEntry[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid('body: must be {fromDID, toDID, data}');
  const b = body as Record<string, unknown>;
  for (const f of ['fromDID', 'toDID'] as const) {
    if (typeof b[f] !== 'string' || !DID.test(b[f])) throw invalid(`${f}: must be a DID`);
  }
  if (!Array.isArray(b.data) || b.data.length === 0 || b.data.length > MAX_ITEMS) {
    throw invalid(`data: must be an array of 1 to ${MAX_ITEMS} {key, value}`);
  }
  const data = b.data.map((e: unknown, i) => {
    const entry = e as Partial<PiiEntry> | null;
    if (typeof entry?.key !== 'string' || !entry.key || entry.key.length > MAX_KEY)
      throw invalid(`data[${i}].key: must be a string of 1 to ${MAX_KEY} characters`);
    if (typeof entry.value !== 'string' || !entry.value || entry.value.length > MAX_VALUE) {
      throw invalid(`data[${i}].value: must be a non-empty string of at most ${MAX_VALUE} characters`);
    }
    return { key: entry.key, value: entry.value };
  });
  return { fromDID: b.fromDID as string, toDID: b.toDID as string, data };
}

export function piiRoutes(pii: FastifyInstance, ctx: SandboxContext): void {
  pii.post('/put', documented({ body: PutBody }), async (request) => {
    const { fromDID, toDID, data } = parsePut(request.body);
    const access = accessOf(request);
    const mine = access.vasps();
    if (!mine.includes(fromDID) && !mine.includes(toDID)) {
      throw forbidden(`User ${access.userDid} cannot store personal data for ${fromDID} or ${toDID}`);
    }
    // Items and their owners in one transaction: an item never exists without the owners who may read it.
    return withTransaction(ctx.pool, (client) => putEntries(client, fromDID, toDID, data));
  });

  pii.post('/get', documented({ body: GetBody }), async (request) => {
    const body = request.body;
    if (!Array.isArray(body) || body.length > MAX_ITEMS || !body.every((c) => typeof c === 'string')) {
      throw invalid(`body: must be an array of at most ${MAX_ITEMS} CID strings`);
    }
    return getItems(ctx.pool, body as string[], accessOf(request).vasps());
  });
}
