/**
 * The internal systems' end of TRANSFER_CALLBACK_URL, for tests and for `npm run chaos`: an HTTP server on a free
 * loopback port that records every report delivered to it, in order, with its Idempotency-Key. It answers 204 unless
 * it is a report's first delivery (by its key) and `refuseFirst` picks it: then `refuseWith`, so the orchestrator must
 * retry. By default nothing is refused.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// JSON bodies of the reports, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface CallbackDelivery {
  /** The parsed body; empty when the body was not JSON. */
  body: Json;
  idempotencyKey?: string;
  answered: number;
}

export interface CallbackReceiverOptions {
  /** Whether to refuse the first delivery of the report with this Idempotency-Key; none when absent. */
  refuseFirst?: (idempotencyKey: string) => boolean;
  /** The status of a refusal; 503 when absent. */
  refuseWith?: number;
}

export interface CallbackReceiver {
  /** For the orchestrator's `transfers.callbackUrl` (TRANSFER_CALLBACK_URL). */
  url: string;
  /** In arrival order, refused ones included. */
  deliveries: CallbackDelivery[];
  /** The bodies of the acknowledged deliveries, in order. */
  received(): Json[];
  close(): Promise<void>;
}

export async function startCallbackReceiver(options: CallbackReceiverOptions = {}): Promise<CallbackReceiver> {
  const deliveries: CallbackDelivery[] = [];
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      let body: Json = {};
      try {
        body = JSON.parse(raw) as Json;
      } catch {
        // Kept empty: a receiver that threw here would end the test process.
      }
      const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
      let answered = 204;
      if (idempotencyKey !== undefined && !seen.has(idempotencyKey)) {
        seen.add(idempotencyKey);
        if (options.refuseFirst?.(idempotencyKey)) answered = options.refuseWith ?? 503;
      }
      deliveries.push({ body, idempotencyKey, answered });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    deliveries,
    received: () => deliveries.filter((d) => d.answered < 300).map((d) => d.body),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
