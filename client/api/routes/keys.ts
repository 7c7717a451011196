/**
 * Keys of the group's VASPs: rotation (a Temporal workflow per VASP), listing, import of an existing key, and
 * destruction on request. No route answers a private key (the agent's `GET /didkey/new` is in agent.ts).
 */
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { Type, type Static } from 'typebox';
import type { GroupConfig } from '../../../config';
import type { DidKeyRecord } from '../../../lib/crypto';
import { ConfigError, NotFoundError, ValidationError } from '../../../lib/errors';
import { listKeys, recordFromPrivateKeyHex, type Keystore } from '../../../keys';
import { parseDidKeyRecord } from '../../../lib/crypto';
import { FreeText } from '../../../lib/text';
import { keyRotationState, startKeyRotation } from '../../keys/rotate';
import { access } from '../auth/roles';
import { principalOf } from '../auth/plugin';
import { auditActor } from '../../../lib/principal';

export interface KeyRouteDeps {
  temporal: Client;
  pool: Pool;
  taskQueue: string;
  /** Needed to import keys; the API process opens it at start (client/main.ts). */
  keystore?: Keystore;
  /** The VASPs this system runs for; keys are managed for these only. */
  group: GroupConfig;
}

const DID_PATTERN = '^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$';
const VaspParams = Type.Object({ vaspDID: Type.String({ pattern: DID_PATTERN, maxLength: 200 }) });
const KeyParams = Type.Object({
  vaspDID: Type.String({ pattern: DID_PATTERN, maxLength: 200 }),
  keyId: Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' }),
});
const Reason = FreeText({ minLength: 3, maxLength: 500, description: 'Why (audited), e.g. "suspected compromise"' });

const KeyInfoSchema = Type.Object({
  id: Type.String(),
  vaspDid: Type.String(),
  did: Type.String({ description: 'The did:key, published as pii_didkey' }),
  publicKeyHex: Type.String(),
  state: Type.Union([
    Type.Literal('pending'),
    Type.Literal('active'),
    Type.Literal('retired'),
    Type.Literal('destroyed'),
  ]),
  source: Type.Union([Type.Literal('generated'), Type.Literal('imported')]),
  createdAt: Type.String(),
  activatedAt: Type.Union([Type.String(), Type.Null()]),
  retiredAt: Type.Union([Type.String(), Type.Null()]),
  destroyedAt: Type.Union([Type.String(), Type.Null()]),
});

const RotationStarted = Type.Object({
  workflowId: Type.String(),
  runId: Type.String(),
  vaspDID: Type.String(),
  step: Type.String(),
  status: Type.String(),
});

const RotationState = Type.Object({
  workflowId: Type.String(),
  runId: Type.String(),
  workflowStatus: Type.String(),
  step: Type.Optional(Type.String()),
  status: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
  requestedBy: Type.Optional(Type.String()),
  newKeyId: Type.Optional(Type.String()),
  newDid: Type.Optional(Type.String()),
  previousKeyId: Type.Optional(Type.String()),
  previousDid: Type.Optional(Type.String()),
  publicationChecks: Type.Optional(Type.Integer()),
  error: Type.Optional(Type.Object({ type: Type.String(), message: Type.String() })),
});

// Who asks is the authenticated caller: a body naming someone (`requestedBy`) is refused as an unknown field.
const RotateBody = Type.Object({ reason: Reason }, { additionalProperties: false });
const ImportBody = Type.Object(
  {
    reason: Reason,
    key: Type.Optional(Type.Unknown({ description: 'A JsonDIDKey record (from `keys create` or /didkey/new)' })),
    privateKeyHex: Type.Optional(
      FreeText({ maxLength: 256, description: "The agent's form: 128 hex, seed then public key" }),
    ),
    did: Type.Optional(FreeText({ maxLength: 128, description: 'With privateKeyHex: the did:key it must produce' })),
  },
  { additionalProperties: false },
);
const DestroyBody = Type.Object({ reason: Reason }, { additionalProperties: false });

const tags = ['keys'];

function groupDids(group: GroupConfig): string[] {
  return [...(group.gatewayDid ? [group.gatewayDid] : []), ...group.subsidiaryDids];
}

export function keyRoutes(app: FastifyInstance, deps: KeyRouteDeps): void {
  const inGroup = (vaspDid: string) => groupDids(deps.group).includes(vaspDid);
  const requireGroupVasp = (vaspDid: string) => {
    if (!inGroup(vaspDid)) {
      throw new NotFoundError(`VASP ${vaspDid} is not part of this system's group`, {
        field: 'vaspDID',
        rule: 'must be the gateway or one of the subsidiaries configured in GATEWAY_VASP_DID / SUBSIDIARY_VASP_DIDS',
      });
    }
  };
  const keystore = () => {
    if (!deps.keystore)
      throw new ConfigError(
        'KEYSTORE_MASTER_KEY',
        'the API was started without a keystore',
        'Start the API through client/main.ts',
      );
    return deps.keystore;
  };

  app.get(
    '/v1/vasps/:vaspDID/keys',
    {
      config: { roles: access.read },
      schema: {
        tags,
        summary: "A VASP's keys: public parts and states, newest first",
        params: VaspParams,
        response: { 200: Type.Object({ vaspDID: Type.String(), keys: Type.Array(KeyInfoSchema) }) },
      },
    },
    async (request) => {
      const { vaspDID } = request.params as Static<typeof VaspParams>;
      const keys = await listKeys(deps.pool, vaspDID);
      if (keys.length === 0) requireGroupVasp(vaspDID);
      return { vaspDID, keys };
    },
  );

  app.post(
    '/v1/vasps/:vaspDID/keys/rotate',
    {
      config: { roles: access.operate },
      schema: {
        tags,
        summary: "Rotate a VASP's key: create, publish as pii_didkey, confirm in the directory, activate",
        description:
          'Answers 202 once the network directory has confirmed the VASP; 404 for a VASP outside the group or unknown to the network; 409 while a rotation of the same VASP runs.',
        params: VaspParams,
        body: RotateBody,
        response: { 202: RotationStarted },
      },
    },
    async (request, reply) => {
      const { vaspDID } = request.params as Static<typeof VaspParams>;
      const { reason } = request.body as Static<typeof RotateBody>;
      requireGroupVasp(vaspDID);
      return reply
        .code(202)
        .send(await startKeyRotation(deps, { vaspDid: vaspDID, reason, principal: principalOf(request) }, request.log));
    },
  );

  app.get(
    '/v1/vasps/:vaspDID/keys/rotation',
    {
      config: { roles: access.read },
      schema: {
        tags,
        summary: 'The current or last key rotation of a VASP: step and operator-friendly status',
        params: VaspParams,
        response: { 200: RotationState },
      },
    },
    async (request) => {
      const { vaspDID } = request.params as Static<typeof VaspParams>;
      return keyRotationState(deps, vaspDID);
    },
  );

  app.post(
    '/v1/vasps/:vaspDID/keys/import',
    {
      config: { roles: access.admin },
      schema: {
        tags,
        summary: "Import an existing key (a JsonDIDKey record, or the agent's privateKeyHex)",
        description:
          'The key becomes active when the VASP has none, otherwise it is kept (retired) for decryption. Importing the same key again changes nothing (200).',
        params: VaspParams,
        body: ImportBody,
        response: {
          200: Type.Object({ key: KeyInfoSchema, outcome: Type.String() }),
          201: Type.Object({ key: KeyInfoSchema, outcome: Type.String() }),
        },
      },
    },
    async (request, reply) => {
      const { vaspDID } = request.params as Static<typeof VaspParams>;
      const body = request.body as Static<typeof ImportBody>;
      requireGroupVasp(vaspDID);
      let record: DidKeyRecord;
      if (body.key !== undefined && body.privateKeyHex === undefined && body.did === undefined) {
        record = parseDidKeyRecord(body.key, 'key');
      } else if (body.key === undefined && body.privateKeyHex !== undefined) {
        record = recordFromPrivateKeyHex(body.privateKeyHex, body.did, '');
      } else {
        throw new ValidationError(
          'key',
          'send either key (a JsonDIDKey record) or privateKeyHex (with an optional did), not both',
        );
      }
      const principal = principalOf(request);
      const { key, outcome } = await keystore().importKey(
        vaspDID,
        record,
        { actor: auditActor(principal), principal, reason: body.reason },
        'key',
      );
      return reply.code(outcome === 'already-present' ? 200 : 201).send({ key, outcome });
    },
  );

  app.post(
    '/v1/vasps/:vaspDID/keys/:keyId/destroy',
    {
      config: { roles: access.admin },
      schema: {
        tags,
        summary:
          'Destroy a retired or pending key: its private part is wiped and data encrypted to it becomes unreadable',
        params: KeyParams,
        body: DestroyBody,
        response: { 200: KeyInfoSchema },
      },
    },
    async (request) => {
      const { vaspDID, keyId } = request.params as Static<typeof KeyParams>;
      const { reason } = request.body as Static<typeof DestroyBody>;
      const principal = principalOf(request);
      return keystore().destroyKey(vaspDID, keyId, { actor: auditActor(principal), principal, reason });
    },
  );
}
