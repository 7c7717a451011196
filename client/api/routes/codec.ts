import type { FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import type { Pool } from 'pg';
import { Type, type Static } from 'typebox';
import { CryptoError } from '../../../lib/errors';
import { ENCRYPTED_ENCODING } from '../../../lib/temporal/codec';
import { FreeText } from '../../../lib/text';
import { access } from '../auth/roles';
import { principalOf } from '../auth/plugin';
import { codecDecodeRead, recordPiiRead } from '../pii-reads';

/** Payloads as the Temporal UI and CLI send them to a codec server: proto JSON, bytes in base64. */
const JsonPayload = Type.Object({
  metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
  data: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const Body = Type.Object({ payloads: Type.Array(JsonPayload) });
type JsonPayloadT = Static<typeof JsonPayload>;

/**
 * What a decode request says of the history it shows, recorded with the read. The Temporal UI and CLI send
 * `X-Namespace` only; the CLI sends more with `--codec-header` (`X-Workflow-Id=<id>`, `X-Run-Id=<id>`).
 */
const DecodeHeaders = Type.Object({
  'x-namespace': Type.Optional(
    FreeText({ minLength: 1, maxLength: 255, description: 'The namespace of the history (the UI and CLI send it)' }),
  ),
  'x-workflow-id': Type.Optional(
    FreeText({
      minLength: 1,
      maxLength: 1000,
      description: 'The workflow whose history this is, recorded in the audit log',
    }),
  ),
  'x-run-id': Type.Optional(
    FreeText({ minLength: 1, maxLength: 128, description: 'Its run, recorded in the audit log' }),
  ),
});

/** A payload the project's codec decrypts, as opposed to one it passes through as it came (counted in the audit row). */
const isEncrypted = (p: Payload) => {
  const encoding = p.metadata?.[METADATA_ENCODING_KEY];
  return encoding !== undefined && encoding !== null && Buffer.from(encoding).toString('utf8') === ENCRYPTED_ENCODING;
};

const fromJson = ({ metadata, data }: JsonPayloadT): Payload => ({
  metadata: metadata
    ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')]))
    : undefined,
  data: data ? Buffer.from(data, 'base64') : undefined,
});
const toJson = ({ metadata, data }: Payload): JsonPayloadT => ({
  metadata: metadata
    ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]))
    : undefined,
  data: data ? Buffer.from(data).toString('base64') : undefined,
});

/**
 * The remote codec endpoint the Temporal UI calls (`--ui-codec-endpoint`, the UI server's `codec.endpoint`), so
 * people who may read history see decoded inputs and results in their browser while the server stores only
 * ciphertext. Decoding shows personal data, so it takes a token of the compliance or admin role: the UI server sends
 * its signed-in user's access token with `codec.passAccessToken: true` (docs/security.md, "The Temporal UI and the codec").
 * Browsers may call it from the configured UI origins only (CORS), and nothing else in the API answers cross-origin.
 * Every decode is a read of personal data, recorded in the audit log before it is answered.
 */
export function codecRoutes(app: FastifyInstance, deps: { codec: PayloadCodec; corsOrigins: string[]; pool: Pool }) {
  const schema = (summary: string) => ({ tags: ['platform'], summary, body: Body, response: { 200: Body } });
  const config = { roles: access.compliance };
  void app.register(
    async (codec) => {
      await codec.register(cors, {
        origin: deps.corsOrigins,
        methods: ['POST'],
        // What the UI sends: its access token, the signed-in user's ID token (Authorization-Extras) and the namespace.
        allowedHeaders: [
          'content-type',
          'authorization',
          'authorization-extras',
          'x-namespace',
          'x-workflow-id',
          'x-run-id',
        ],
        credentials: true,
        maxAge: 600,
      });
      const decodeSchema = {
        ...schema('Decrypt payloads for the Temporal UI'),
        headers: DecodeHeaders,
        description:
          'Each request with payloads is recorded in the audit log first (`pii-read.codec-decode`: who, the ids ' +
          'from X-Namespace, X-Workflow-Id and X-Run-Id, how many payloads; never the data); when it cannot be recorded the answer is 503.',
      };
      codec.post('/decode', { config, schema: decodeSchema }, async (request) => {
        const { payloads } = request.body as Static<typeof Body>;
        const input = payloads.map(fromJson);
        let decoded: Payload[];
        try {
          decoded = await deps.codec.decode(input);
        } catch (e) {
          // Wrong or missing key, tampered bytes: the caller's payloads cannot be read, which is not a server fault.
          throw new CryptoError((e as Error).message);
        }
        // One row for the request, before it is answered: a read the audit log cannot record fails with 503 and hands
        // out nothing (client/api/pii-reads.ts). Every request with payloads, whatever they hold: whether a payload is
        // one the codec decrypts is the codec's business, and the row must not depend on the caller's way of saying it.
        if (input.length > 0) {
          const headers = request.headers as Static<typeof DecodeHeaders>;
          const ids = {
            namespace: headers['x-namespace'],
            workflowId: headers['x-workflow-id'],
            runId: headers['x-run-id'],
          };
          await recordPiiRead(
            deps.pool,
            request,
            principalOf(request),
            codecDecodeRead(ids, input.length, input.filter(isEncrypted).length),
          );
        }
        return { payloads: decoded.map(toJson) };
      });
      codec.post('/encode', { config, schema: schema('Encrypt payloads for the Temporal UI') }, async (request) => {
        const { payloads } = request.body as Static<typeof Body>;
        return { payloads: (await deps.codec.encode(payloads.map(fromJson))).map(toJson) };
      });
    },
    { prefix: '/codec' },
  );
}
