/**
 * Keys of the group's VASPs: rotation (a Temporal workflow per VASP), listing, import of an existing key, and
 * destruction on request. No route answers a private key (the agent's `GET /didkey/new` is in agent.ts).
 */
import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy } from '@temporalio/common';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { Type, type Static } from 'typebox';
import type { GroupConfig } from '../../../config';
import type { DidKeyRecord } from '../../../lib/crypto';
import {
  ConfigError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  UpstreamRejectedError,
  UpstreamUnavailableError,
  ValidationError,
  type AppError,
} from '../../../lib/errors';
import { listKeys, recordFromPrivateKeyHex, type Keystore } from '../../../keys';
import { parseDidKeyRecord } from '../../../lib/crypto';
import { VaspDid } from '../../../lib/temporal/search-attributes';
import { keyRotation } from '../../../workflows';
import { workflowIds } from '../../../lib/temporal/workflow-ids';
import { keyRotationAcceptedUpdate, keyRotationStatusQuery, type KeyRotationStatus } from '../../../workflows/key-rotation.messages';
import { FreeText } from '../../../lib/text';
import { access } from '../auth/roles';
import { principalOf } from '../auth/plugin';
import { recordRequest } from '../audited-request';
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
const KeyParams = Type.Object({ vaspDID: Type.String({ pattern: DID_PATTERN, maxLength: 200 }), keyId: Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' }) });
const Reason = FreeText({ minLength: 3, maxLength: 500, description: 'Why (audited), e.g. "suspected compromise"' });

const KeyInfoSchema = Type.Object({
  id: Type.String(),
  vaspDid: Type.String(),
  did: Type.String({ description: 'The did:key, published as pii_didkey' }),
  publicKeyHex: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('retired'), Type.Literal('destroyed')]),
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
const ImportBody = Type.Object({
  reason: Reason,
  key: Type.Optional(Type.Unknown({ description: 'A JsonDIDKey record (from `keys create` or /didkey/new)' })),
  privateKeyHex: Type.Optional(FreeText({ maxLength: 256, description: "The agent's form: 128 hex, seed then public key" })),
  did: Type.Optional(FreeText({ maxLength: 128, description: 'With privateKeyHex: the did:key it must produce' })),
}, { additionalProperties: false });
const DestroyBody = Type.Object({ reason: Reason }, { additionalProperties: false });

/** How long POST …/rotate waits for the workflow to confirm the VASP in the directory before answering anyway. */
const ACCEPT_WAIT_MS = 15_000;

const tags = ['keys'];

function groupDids(group: GroupConfig): string[] {
  return [...(group.gatewayDid ? [group.gatewayDid] : []), ...group.subsidiaryDids];
}

/** The network's error, reported by the workflow, as this API's error class. */
function fromWorkflowFailure(e: WorkflowUpdateFailedError, vaspDid: string): AppError {
  const cause = e.cause instanceof ApplicationFailure ? e.cause : undefined;
  const message = cause?.message ?? e.message;
  const details = { field: 'vaspDID', networkError: cause?.type };
  switch (cause?.type) {
    case 'NotFoundError':
      return new NotFoundError(`VASP ${vaspDid} is not in the network's directory (${message})`, { ...details, rule: 'must be a VASP the network knows' });
    case 'ForbiddenError':
      return new ForbiddenError(message, details);
    case 'UpstreamUnavailableError':
      return new UpstreamUnavailableError(message, details);
    default:
      return new UpstreamRejectedError(message, details);
  }
}

const timeout = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

export function keyRoutes(app: FastifyInstance, deps: KeyRouteDeps): void {
  const inGroup = (vaspDid: string) => groupDids(deps.group).includes(vaspDid);
  const requireGroupVasp = (vaspDid: string) => {
    if (!inGroup(vaspDid)) {
      throw new NotFoundError(`VASP ${vaspDid} is not part of this system's group`, {
        field: 'vaspDID', rule: 'must be the gateway or one of the subsidiaries configured in GATEWAY_VASP_DID / SUBSIDIARY_VASP_DIDS',
      });
    }
  };
  const keystore = () => {
    if (!deps.keystore) throw new ConfigError('KEYSTORE_MASTER_KEY', 'the API was started without a keystore', 'Start the API through client/main.ts');
    return deps.keystore;
  };

  app.get(
    '/v1/vasps/:vaspDID/keys',
    {
      config: { roles: access.read },
      schema: {
        tags, summary: "A VASP's keys: public parts and states, newest first", params: VaspParams,
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
        description: 'Answers 202 once the network directory has confirmed the VASP; 404 for a VASP outside the group or unknown to the network; 409 while a rotation of the same VASP runs.',
        params: VaspParams, body: RotateBody, response: { 202: RotationStarted },
      },
    },
    async (request, reply) => {
      const { vaspDID } = request.params as Static<typeof VaspParams>;
      const { reason } = request.body as Static<typeof RotateBody>;
      const principal = principalOf(request);
      requireGroupVasp(vaspDID);
      const workflowId = workflowIds.keyRotation(vaspDID);
      const running = () => new ConflictError(`a key rotation for ${vaspDID} is already running (workflow ${workflowId}); wait for it to finish`, {
        field: 'vaspDID', rule: 'one rotation per VASP at a time', workflowId,
      });
      // Refused before it is recorded when a rotation is visibly running; the start below still decides a race.
      if (await deps.temporal.workflow.getHandle(workflowId).describe().then((d) => d.status.name === 'RUNNING', () => false)) throw running();
      // The request is in the audit log before anything starts, and nothing starts when it cannot be written there.
      await recordRequest(deps.pool, request, { actor: auditActor(principal), action: 'key.rotation.requested', subject: vaspDID, details: { reason, workflowId, principal } });
      const start = new WithStartWorkflowOperation(keyRotation, {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [{ vaspDid: vaspDID, reason, requestedBy: auditActor(principal), principal }],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
        typedSearchAttributes: [{ key: VaspDid, value: vaspDID }],
      });
      const accepted = deps.temporal.workflow.executeUpdateWithStart(keyRotationAcceptedUpdate, { startWorkflowOperation: start });
      accepted.catch(() => undefined); // awaited below; this only keeps a late failure from going unhandled
      let handle;
      try {
        handle = await start.workflowHandle();
      } catch (e) {
        if (e instanceof WorkflowExecutionAlreadyStartedError) throw running();
        throw e;
      }
      // The with-start handle does not carry the run id: read it back (the run was just created, so it is the first).
      const { runId } = await handle.describe();
      let status: KeyRotationStatus | 'timeout';
      try {
        status = await Promise.race([accepted, timeout(ACCEPT_WAIT_MS)]);
      } catch (e) {
        if (e instanceof WorkflowUpdateFailedError) throw fromWorkflowFailure(e, vaspDID);
        throw e;
      }
      return reply.code(202).send({
        workflowId,
        runId,
        vaspDID,
        step: status === 'timeout' ? 'verifying-vasp' : status.step,
        status: status === 'timeout' ? 'Started; waiting for a worker to check the VASP in the directory' : status.status,
      });
    },
  );

  app.get(
    '/v1/vasps/:vaspDID/keys/rotation',
    {
      config: { roles: access.read },
      schema: {
        tags, summary: 'The current or last key rotation of a VASP: step and operator-friendly status', params: VaspParams,
        response: { 200: RotationState },
      },
    },
    async (request) => {
      const { vaspDID } = request.params as Static<typeof VaspParams>;
      const workflowId = workflowIds.keyRotation(vaspDID);
      const handle = deps.temporal.workflow.getHandle(workflowId);
      let description;
      try {
        description = await handle.describe();
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) throw new NotFoundError(`no key rotation of ${vaspDID} has run`, { field: 'vaspDID' });
        throw e;
      }
      const base = { workflowId, runId: description.runId, workflowStatus: description.status.name };
      try {
        return { ...base, ...(await handle.query(keyRotationStatusQuery)) };
      } catch {
        // A closed workflow is queried by replaying it on a worker; without one, the status alone still helps.
        return base;
      }
    },
  );

  app.post(
    '/v1/vasps/:vaspDID/keys/import',
    {
      config: { roles: access.admin },
      schema: {
        tags,
        summary: 'Import an existing key (a JsonDIDKey record, or the agent\'s privateKeyHex)',
        description: 'The key becomes active when the VASP has none, otherwise it is kept (retired) for decryption. Importing the same key again changes nothing (200).',
        params: VaspParams, body: ImportBody,
        response: { 200: Type.Object({ key: KeyInfoSchema, outcome: Type.String() }), 201: Type.Object({ key: KeyInfoSchema, outcome: Type.String() }) },
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
        throw new ValidationError('key', 'send either key (a JsonDIDKey record) or privateKeyHex (with an optional did), not both');
      }
      const principal = principalOf(request);
      const { key, outcome } = await keystore().importKey(vaspDID, record, { actor: auditActor(principal), principal, reason: body.reason }, 'key');
      return reply.code(outcome === 'already-present' ? 200 : 201).send({ key, outcome });
    },
  );

  app.post(
    '/v1/vasps/:vaspDID/keys/:keyId/destroy',
    {
      config: { roles: access.admin },
      schema: {
        tags,
        summary: 'Destroy a retired or pending key: its private part is wiped and data encrypted to it becomes unreadable',
        params: KeyParams, body: DestroyBody, response: { 200: KeyInfoSchema },
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
