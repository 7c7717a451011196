/**
 * A custody system for tests and for `npm run chaos`: a real HTTP receiver of the orchestrator's `deposit.*` and
 * `transfer.*` callbacks. It verifies each delivery's signature with lib/webhook-signature.ts (401 to a bad one),
 * records every delivery, and answers 200 to a verified one unless it is the first verified delivery of its message
 * (by webhook id) and `refuseFirst` picks it: then `refuseWith`, so the orchestrator must retry until acknowledged.
 * By default every message's first delivery is refused with 500.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkWebhookSignature, generateWebhookSecret } from '../../lib/webhook-signature';

// JSON bodies of the callbacks, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface CustodyDelivery {
  headers: IncomingHttpHeaders;
  webhookId: string;
  raw: string;
  /** The parsed body; empty when the body was not JSON. */
  body: Json;
  verified: boolean;
  answered: number;
}

export interface CustodyReceiverOptions {
  /** The callbacks' secret; a new one when absent. */
  secret?: string;
  /** Whether to refuse this message's first verified delivery; every one when absent. */
  refuseFirst?: (webhookId: string) => boolean;
  /** The status of a refusal; 500 when absent. */
  refuseWith?: number;
}

export interface CustodyReceiver {
  /** For the orchestrator's `custody` option (CUSTODY_CALLBACK_URL and its secret). */
  custody: { url: string; secret: string };
  /** In arrival order, bad signatures included. */
  deliveries: CustodyDelivery[];
  close(): Promise<void>;
}

export async function startCustodyReceiver(options: CustodyReceiverOptions = {}): Promise<CustodyReceiver> {
  const secret = options.secret ?? generateWebhookSecret();
  const refuseFirst = options.refuseFirst ?? (() => true);
  const deliveries: CustodyDelivery[] = [];
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const verified = checkWebhookSignature(secret, req.headers, raw).ok;
      const webhookId = String(req.headers['webhook-id']);
      let body: Json = {};
      try {
        body = JSON.parse(raw) as Json;
      } catch {
        // Kept with its raw text: a receiver that threw here would end the test process.
      }
      let answered = 200;
      if (!verified) answered = 401;
      else if (!seen.has(webhookId)) {
        seen.add(webhookId);
        if (refuseFirst(webhookId)) answered = options.refuseWith ?? 500;
      }
      deliveries.push({ headers: req.headers, webhookId, raw, body, verified, answered });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    custody: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/custody`, secret },
    deliveries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
