import type { FastifyInstance } from 'fastify';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { Type, type Static } from 'typebox';
import { checkEntry, checkKey, entryKey, normalizeAsset, type RegistryEntry } from '../../../address-book/entry';
import { latestReports } from '../../../address-book/reports';
import { deleteEntries, listEntries, upsertEntries } from '../../../address-book/store/registry';
import type { GroupConfig } from '../../../config';
import { ValidationError } from '../../../lib/errors';
import { FreeText } from '../../../lib/text';
import { reconciliationState, startReconciliation } from '../../address-book/reconcile';
import { access } from '../auth/roles';
import { principalOf } from '../auth/plugin';

/** Entries per PUT or DELETE request. The CLI import sends batches well below this. */
export const MAX_BATCH = 10_000;

// Entries are checked row by row (address-book/entry.ts, the free-text rule included): one bad row is reported, not the batch.
const EntryIn = Type.Object(
  {
    asset: Type.String({ description: 'Asset code, e.g. ETH (stored upper-case)' }),
    address: Type.String({ description: 'The address; a memo/tag asset may carry its tag as <address>:<tag>' }),
    tag: Type.Optional(Type.String({ description: 'Memo or destination tag, instead of <address>:<tag>' })),
    customerRef: Type.String({ description: 'Reference of the customer or wallet' }),
    vaspDID: Type.String({ description: 'The owning subsidiary VASP' }),
  },
  { additionalProperties: false },
);
const KeyIn = Type.Object(
  { asset: Type.String(), address: Type.String(), tag: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const Entry = Type.Object({
  asset: Type.String(),
  address: Type.String(),
  tag: Type.String(),
  networkAddress: Type.String({ description: 'The form registered at the network: <address>:<tag> or <address>' }),
  customerRef: Type.String(),
  vaspDID: Type.String(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
const VaspParams = Type.Object({ vaspDID: FreeText({ minLength: 1, maxLength: 512 }) });
/** Query integers arrive as strings (the API does not coerce types): checked here, naming the parameter. */
const QueryInt = (description: string) => Type.String({ pattern: '^[0-9]{1,9}$', description });
function queryInt(raw: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (n < min || n > max) throw new ValidationError(`querystring.${name}`, `must be from ${min} to ${max}`);
  return n;
}
const RejectedRow = Type.Object({
  action: Type.String(),
  address: Type.String(),
  asset: Type.String(),
  customerRef: Type.String(),
  reason: Type.String(),
});
const Report = Type.Object(
  {
    runId: Type.String(),
    vaspDid: Type.String(),
    trigger: Type.String(),
    status: Type.String(),
    startedAt: Type.String(),
    finishedAt: Type.String(),
    durationMs: Type.Number(),
    added: Type.Number(),
    updated: Type.Number(),
    removed: Type.Number(),
    rejected: Type.Number(),
    chunks: Type.Number(),
    rejectedRows: Type.Array(RejectedRow),
  },
  { additionalProperties: true },
);

/**
 * The group's address registry (PUT/DELETE/GET /v1/addresses) and the reconciliation of each subsidiary's book at the
 * network (/v1/address-book/:vaspDID/…).
 */
export function addressBookRoutes(
  app: FastifyInstance,
  deps: { temporal: Client; pool: Pool; taskQueue: string; group: GroupConfig },
) {
  const subsidiaries = () => new Set(deps.group.subsidiaryDids);
  const assertSubsidiary = (vaspDID: string) => {
    if (!subsidiaries().has(vaspDID))
      throw new ValidationError('vaspDID', 'must be a subsidiary VASP of the group (SUBSIDIARY_VASP_DIDS)');
  };

  app.put(
    '/v1/addresses',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['address book'],
        summary: 'Insert or update registry entries, all or nothing',
        description:
          'Each entry is validated (asset code, non-empty address, tag form, VASP a subsidiary of the group); the first ' +
          'problem answers 400 naming `addresses[i].field`, and nothing is written. An entry registered to another ' +
          'subsidiary answers 409.',
        body: Type.Object(
          { addresses: Type.Array(EntryIn, { minItems: 1, maxItems: MAX_BATCH }) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ inserted: Type.Number(), updated: Type.Number(), unchanged: Type.Number() }) },
      },
    },
    async (request) => {
      const { addresses } = request.body as { addresses: Static<typeof EntryIn>[] };
      const allowed = subsidiaries();
      const entries: RegistryEntry[] = [];
      const seen = new Map<string, number>();
      addresses.forEach((input, i) => {
        const checked = checkEntry(input, allowed);
        if (!checked.ok)
          throw new ValidationError(`addresses[${i}].${checked.problem.field}`, checked.problem.rule, { index: i });
        const key = entryKey(checked.value);
        const first = seen.get(key);
        if (first !== undefined) {
          throw new ValidationError(`addresses[${i}]`, `duplicates addresses[${first}] (same asset, address and tag)`, {
            index: i,
          });
        }
        seen.set(key, i);
        entries.push(checked.value);
      });
      return upsertEntries(deps.pool, entries, 'addresses', principalOf(request));
    },
  );

  app.delete(
    '/v1/addresses',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['address book'],
        summary: 'Delete registry entries by asset, address and tag',
        body: Type.Object(
          { addresses: Type.Array(KeyIn, { minItems: 1, maxItems: MAX_BATCH }) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            deleted: Type.Number(),
            notFound: Type.Array(Type.Number(), {
              description: 'Indexes of the entries that were not in the registry',
            }),
          }),
        },
      },
    },
    async (request) => {
      const { addresses } = request.body as { addresses: Static<typeof KeyIn>[] };
      const keys = addresses.map((input, i) => {
        const checked = checkKey(input);
        if (!checked.ok)
          throw new ValidationError(`addresses[${i}].${checked.problem.field}`, checked.problem.rule, { index: i });
        return checked.value;
      });
      return deleteEntries(deps.pool, keys, principalOf(request));
    },
  );

  app.get(
    '/v1/addresses',
    {
      config: { roles: access.read },
      schema: {
        tags: ['address book'],
        summary: 'Registry entries, paged, filtered by VASP, asset and customerRef',
        querystring: Type.Object(
          {
            vaspDID: Type.Optional(FreeText({ minLength: 1, maxLength: 512 })),
            asset: Type.Optional(FreeText({ minLength: 1, maxLength: 64 })),
            customerRef: Type.Optional(FreeText({ minLength: 1, maxLength: 1024 })),
            page: Type.Optional(QueryInt('1-based page number (default 1)')),
            perPage: Type.Optional(QueryInt('entries per page, 1 to 1000 (default 100)')),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            pagination: Type.Object({ page: Type.Number(), perPage: Type.Number(), total: Type.Number() }),
            data: Type.Array(Entry),
          }),
        },
      },
    },
    async (request) => {
      const q = request.query as {
        vaspDID?: string;
        asset?: string;
        customerRef?: string;
        page?: string;
        perPage?: string;
      };
      let asset: string | undefined;
      if (q.asset !== undefined) {
        const a = normalizeAsset(q.asset);
        if (!a.ok) throw new ValidationError('querystring.asset', a.problem.rule);
        asset = a.value;
      }
      const page = queryInt(q.page, 'page', 1, 1, 1_000_000_000);
      const perPage = queryInt(q.perPage, 'perPage', 100, 1, 1000);
      const { total, items } = await listEntries(deps.pool, {
        vaspDID: q.vaspDID,
        asset,
        customerRef: q.customerRef?.trim(),
        page,
        perPage,
      });
      return { pagination: { page, perPage, total }, data: items };
    },
  );

  app.post(
    '/v1/address-book/:vaspDID/reconcile',
    {
      config: { roles: access.operate },
      schema: {
        tags: ['address book'],
        summary: "Start reconciling a subsidiary's address book at the network now",
        description:
          '409 when a run for the VASP is in progress (on demand or scheduled). Optional JSON body: `trigger` ("api" or ' +
          '"cli": who asked, for the report) and `mode` ("auto", the default: incremental when the last verified result ' +
          'still matches the network, else full; "full": list the whole book at the network).',
        params: VaspParams,
        response: { 202: Type.Object({ workflowId: Type.String(), runId: Type.String() }) },
      },
    },
    async (request, reply) => {
      const { vaspDID } = request.params as { vaspDID: string };
      assertSubsidiary(vaspDID);
      const body = (request.body ?? {}) as { trigger?: unknown; mode?: unknown };
      if (body.trigger !== undefined && body.trigger !== 'api' && body.trigger !== 'cli')
        throw new ValidationError('trigger', 'must be api or cli');
      if (body.mode !== undefined && body.mode !== 'auto' && body.mode !== 'full')
        throw new ValidationError('mode', 'must be auto or full');
      const trigger = (body.trigger ?? 'api') as 'api' | 'cli';
      const mode = (body.mode ?? 'auto') as 'auto' | 'full';
      const started = await startReconciliation(
        deps,
        { vaspDid: vaspDID, trigger, mode, principal: principalOf(request) },
        request.log,
      );
      return reply.code(202).send(started);
    },
  );

  app.get(
    '/v1/address-book/:vaspDID/reconcile/:workflowId',
    {
      config: { roles: access.read },
      schema: {
        tags: ['address book'],
        summary: 'Progress of a reconciliation (while it runs) or its report (once it ended)',
        params: Type.Object({
          vaspDID: FreeText({ minLength: 1, maxLength: 512 }),
          workflowId: Type.String({ pattern: '^address-book-' }),
        }),
        response: {
          200: Type.Object({
            workflowId: Type.String(),
            status: Type.String(),
            progress: Type.Optional(Type.Object({}, { additionalProperties: true })),
            report: Type.Optional(Type.Object({}, { additionalProperties: true })),
            error: Type.Optional(Type.String()),
          }),
        },
      },
    },
    async (request) => {
      const { workflowId } = request.params as { vaspDID: string; workflowId: string };
      return reconciliationState(deps, workflowId);
    },
  );

  app.get(
    '/v1/address-book/:vaspDID/reports',
    {
      config: { roles: access.read },
      schema: {
        tags: ['address book'],
        summary: 'The latest reconciliation reports of a subsidiary, newest first',
        params: VaspParams,
        querystring: Type.Object(
          {
            limit: Type.Optional(QueryInt('how many reports, 1 to 100 (default 10)')),
            rejectedRows: Type.Optional(QueryInt('rejected rows listed per report, 0 to 10000 (default 100)')),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ reports: Type.Array(Report) }) },
      },
    },
    async (request) => {
      const { vaspDID } = request.params as { vaspDID: string };
      assertSubsidiary(vaspDID);
      const q = request.query as { limit?: string; rejectedRows?: string };
      const limit = queryInt(q.limit, 'limit', 10, 1, 100);
      const reports = await latestReports(
        deps.pool,
        vaspDID,
        limit,
        queryInt(q.rejectedRows, 'rejectedRows', 100, 0, 10_000),
      );
      return { reports };
    },
  );
}
