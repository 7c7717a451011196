/**
 * A custody system for tests: a real HTTP receiver of the orchestrator's `deposit.*` and `transfer.*` callbacks. It
 * verifies each delivery's signature with lib/webhook-signature.ts, answers 500 to the first delivery of each message
 * (by webhook id: the orchestrator must retry it until acknowledged) and 200 after, 401 to a bad signature.
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
  body: Json;
  verified: boolean;
  answered: number;
}

export interface CustodyReceiver {
  /** For the orchestrator's `custody` option (CUSTODY_CALLBACK_URL and its secret). */
  custody: { url: string; secret: string };
  deliveries: CustodyDelivery[];
  close(): Promise<void>;
}

export async function startCustodyReceiver(): Promise<CustodyReceiver> {
  const secret = generateWebhookSecret();
  const deliveries: CustodyDelivery[] = [];
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const verified = checkWebhookSignature(secret, req.headers, raw).ok;
      const webhookId = String(req.headers['webhook-id']);
      const answered = !verified ? 401 : seen.has(webhookId) ? 200 : 500;
      seen.add(webhookId);
      deliveries.push({ headers: req.headers, webhookId, raw, body: JSON.parse(raw) as Json, verified, answered });
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
