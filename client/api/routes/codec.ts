import type { FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Type, type Static } from 'typebox';
import { CryptoError } from '../../../lib/errors';
import { access } from '../auth/roles';

/** Payloads as the Temporal UI and CLI send them to a codec server: proto JSON, bytes in base64. */
const JsonPayload = Type.Object({
  metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
  data: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const Body = Type.Object({ payloads: Type.Array(JsonPayload) });
type JsonPayloadT = Static<typeof JsonPayload>;

const fromJson = ({ metadata, data }: JsonPayloadT): Payload => ({
  metadata: metadata ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])) : undefined,
  data: data ? Buffer.from(data, 'base64') : undefined,
});
const toJson = ({ metadata, data }: Payload): JsonPayloadT => ({
  metadata: metadata ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])) : undefined,
  data: data ? Buffer.from(data).toString('base64') : undefined,
});

/**
 * The remote codec endpoint the Temporal UI calls (`--ui-codec-endpoint`, the UI server's `codec.endpoint`), so
 * people who may read history see decoded inputs and results in their browser while the server stores only
 * ciphertext. Decoding shows personal data, so it takes a token of the compliance or admin role: the UI server sends
 * its signed-in user's access token with `codec.passAccessToken: true` (README, "The Temporal UI and the codec").
 * Browsers may call it from the configured UI origins only (CORS), and nothing else in the API answers cross-origin.
 */
export function codecRoutes(app: FastifyInstance, deps: { codec: PayloadCodec; corsOrigins: string[] }) {
  const schema = (summary: string) => ({ tags: ['platform'], summary, body: Body, response: { 200: Body } });
  const config = { roles: access.compliance };
  void app.register(async (codec) => {
    await codec.register(cors, {
      origin: deps.corsOrigins,
      methods: ['POST'],
      // What the UI sends: its access token, the signed-in user's ID token (Authorization-Extras) and the namespace.
      allowedHeaders: ['content-type', 'authorization', 'authorization-extras', 'x-namespace'],
      credentials: true,
      maxAge: 600,
    });
    codec.post('/decode', { config, schema: schema('Decrypt payloads for the Temporal UI') }, async (request) => {
      const { payloads } = request.body as Static<typeof Body>;
      try {
        return { payloads: (await deps.codec.decode(payloads.map(fromJson))).map(toJson) };
      } catch (e) {
        // Wrong or missing key, tampered bytes: the caller's payloads cannot be read, which is not a server fault.
        throw new CryptoError((e as Error).message);
      }
    });
    codec.post('/encode', { config, schema: schema('Encrypt payloads for the Temporal UI') }, async (request) => {
      const { payloads } = request.body as Static<typeof Body>;
      return { payloads: (await deps.codec.encode(payloads.map(fromJson))).map(toJson) };
    });
  }, { prefix: '/codec' });
}
