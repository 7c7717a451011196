/**
 * The internal systems' end of TRANSFER_CALLBACK_URL in tests: an HTTP server on a free loopback port that keeps each
 * JSON body it is sent (and its Idempotency-Key), in order, and answers 204.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CallbackReceiver {
  /** For the orchestrator's `transfers.callbackUrl`. */
  url: string;
  received: unknown[];
  /** Each delivery's Idempotency-Key header, in the order of `received`. */
  keys: (string | undefined)[];
  close(): Promise<void>;
}

export async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const received: unknown[] = [];
  const keys: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(JSON.parse(body));
      keys.push(req.headers['idempotency-key'] as string | undefined);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    received,
    keys,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
