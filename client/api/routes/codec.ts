import type { FastifyInstance } from 'fastify';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Type, type Static } from 'typebox';
import { CryptoError } from '../../../lib/errors';

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
 * The remote codec endpoint the Temporal UI calls (`--ui-codec-endpoint`), so operators see decoded inputs and results
 * in their browser while the server stores only ciphertext. Meant for the internal network only, like the rest of
 * this API.
 */
export function codecRoutes(app: FastifyInstance, deps: { codec: PayloadCodec }) {
  const schema = (summary: string) => ({ tags: ['platform'], summary, body: Body, response: { 200: Body } });
  app.post('/codec/decode', { schema: schema('Decrypt payloads for the Temporal UI') }, async (request) => {
    const { payloads } = request.body as Static<typeof Body>;
    try {
      return { payloads: (await deps.codec.decode(payloads.map(fromJson))).map(toJson) };
    } catch (e) {
      // Wrong or missing key, tampered bytes: the caller's payloads cannot be read, which is not a server fault.
      throw new CryptoError((e as Error).message);
    }
  });
  app.post('/codec/encode', { schema: schema('Encrypt payloads for the Temporal UI') }, async (request) => {
    const { payloads } = request.body as Static<typeof Body>;
    return { payloads: (await deps.codec.encode(payloads.map(fromJson))).map(toJson) };
  });
}
