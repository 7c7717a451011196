import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import { documented, Uuid, WholeNumber } from '../openapi';
import type { SandboxContext } from '../context';
import { testRoutesOn } from '../auth/test-routes';
import { badRequest, notFound } from '../errors';
import { resolveOptions, type AddressBookOptions } from './options';
import { UploadProcessor } from './processor';
import { handleUpload } from './receive';
import { Spool } from './spool';
import { registerApiRoutes } from './routes';
import { UploadUrls } from './upload-url';
import { readOutbox, readUpload } from './store';

export { findOwners, pickOwner, customerDidOf, type AddressOwner } from './store';
export { addressBookOptionsFromEnv, DEFAULT_OPTIONS, type AddressBookOptions } from './options';
export { normalizeAddress, normalizeAssetSymbol, masterOf } from './rules';

/**
 * The address book's state shared by its two registration points (the upload URL is issued behind the bearer guard
 * and used outside it): one per sandbox, keyed by its context.
 */
interface Services {
  opts: AddressBookOptions;
  urls: () => Promise<UploadUrls>;
}

const services = new WeakMap<SandboxContext, Services>();

function servicesOf(ctx: SandboxContext): Services {
  let s = services.get(ctx);
  if (!s) {
    const opts = resolveOptions(ctx.config.addressBook);
    let urls: Promise<UploadUrls> | undefined;
    s = { opts, urls: () => (urls ??= UploadUrls.open(ctx.pool, ctx.config.publicUrl, opts.uploadUrlTtlSeconds)) };
    services.set(ctx, s);
  }
  return s;
}

/**
 * Bearer-guarded routes: `GET /address/upload/:vaspDID`, `POST /address/registerCustomer`, `GET|DELETE /v1/addresses`,
 * `GET /v1/addresses/address-ownerships/:address`. Register inside the API plugin.
 */
export function addressBookRoutes(api: FastifyInstance, ctx: SandboxContext): void {
  registerApiRoutes(api, ctx, servicesOf(ctx).urls);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Routes that authenticate in their own way: `POST /upload?token=` (the upload URL is its own credential), and the
 * sandbox's windows onto what the network does out of sight: `GET /sandbox/uploads/:id` (processing status, counts,
 * rejected rows) and `GET /sandbox/outbox?to=` (the summary e-mails). Also runs the background processing.
 */
export async function addressBookPublicRoutes(app: FastifyInstance, ctx: SandboxContext): Promise<void> {
  const { opts, urls } = servicesOf(ctx);
  const processor = new UploadProcessor(ctx, opts);
  const spool = await Spool.open(opts.spoolDir);
  const lingering = new Set<IncomingMessage>();
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: { fileSize: opts.maxUploadBytes + 1, files: 1 } });
    scope.addHook('onReady', async () => processor.start());
    scope.addHook('preClose', async () => {
      for (const req of lingering) req.socket.destroy();
    });
    scope.addHook('onClose', async () => {
      await processor.stop();
      await spool.close();
    });

    scope.post(
      '/upload',
      documented({
        querystring: Type.Object({ token: Type.String({ description: "The upload URL's own credential" }) }),
        consumes: ['multipart/form-data'],
        body: Type.Object({
          file: Type.String({
            contentEncoding: 'binary',
            description: 'The CSV file (header asset,address,customerRef…)',
          }),
        }),
      }),
      async (request, reply) =>
        handleUpload(request, reply, { ctx, opts, urls: await urls(), processor, spool, lingering }),
    );

    // The windows below are test routes: they exist only when those are on (sandbox/auth/test-routes.ts).
    if (!testRoutesOn(ctx.config)) return;
    scope.get(
      '/sandbox/uploads/:id',
      documented({
        params: Type.Object({ id: Uuid }),
        querystring: Type.Object({ rejected_limit: Type.Optional(WholeNumber(0, 10_000)) }),
      }),
      async (request) => {
        const { id } = request.params as { id: string };
        const raw = (request.query as Record<string, unknown>).rejected_limit ?? '1000';
        const limit = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
        if (!Number.isInteger(limit) || limit < 0 || limit > 10_000)
          throw badRequest('ValidationError', 'rejected_limit: must be a whole number from 0 to 10000');
        const upload = UUID.test(id) ? await readUpload(ctx.pool, id, limit) : undefined;
        if (!upload) throw notFound(`upload ${id} not found`);
        return upload;
      },
    );

    scope.get(
      '/sandbox/outbox',
      documented({
        querystring: Type.Object({ to: Type.Optional(Type.String()), limit: Type.Optional(WholeNumber(1, 1000)) }),
      }),
      async (request) => {
        const q = request.query as Record<string, unknown>;
        if (Array.isArray(q.to)) throw badRequest('ValidationError', 'to: must be given once');
        const to = typeof q.to === 'string' && q.to ? q.to : undefined;
        const rawLimit = q.limit ?? '100';
        // Digits only: Number() would take "0x10", " 1" or "1e2".
        const limit = typeof rawLimit === 'string' && /^\d{1,5}$/.test(rawLimit) ? Number(rawLimit) : NaN;
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
          throw badRequest('ValidationError', 'limit: must be a whole number from 1 to 1000');
        return { emails: await readOutbox(ctx.pool, to, limit) };
      },
    );
  });
}
