/**
 * The personal-data service's escrow key routes, as `@notabene/pii-sdk` calls them:
 * `GET {pii}/get-escrow-didkey?vaspDID=` → an object whose `.did` is the escrow did:key (here: the public JsonDIDKey
 * record, so `.did` is where the SDK looks), and `GET {pii}/rotate-escrow-didkey?vaspDID=` → the new one, same shape.
 * Only the VASP's own users may ask (a gateway's users act for its subsidiaries); the private part never leaves.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { accessOf } from '../auth/guard';
import type { SandboxContext } from '../context';
import { EscrowKeys } from './escrow-keys';
import { requireMember } from '../directory/routes';

const Query = Type.Object({ vaspDID: Type.String({ pattern: '^did:[a-zA-Z0-9]*:.*$' }) });

/** Registered inside the personal-data service's bearer-guarded plugin (PII audience). */
export async function escrowRoutes(pii: FastifyInstance, ctx: SandboxContext): Promise<void> {
  const escrow = await EscrowKeys.open(ctx.pool);

  pii.get('/get-escrow-didkey', { schema: { querystring: Query } }, async (request) => {
    const { vaspDID } = request.query as Static<typeof Query>;
    requireMember(accessOf(request), vaspDID);
    return escrow.current(vaspDID);
  });

  pii.get('/rotate-escrow-didkey', { schema: { querystring: Query } }, async (request) => {
    const { vaspDID } = request.query as Static<typeof Query>;
    accessOf(request).require(vaspDID, 'trustframework.updateVASP');
    return escrow.rotate(vaspDID);
  });
}
