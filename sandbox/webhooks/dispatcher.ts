/**
 * Delivers the webhook outbox (table webhook_deliveries): at least once, so duplicates can occur — receivers
 * de-duplicate on `webhook-id`, which is the same on every attempt of one delivery.
 *
 * - Polls every `pollMs` for due deliveries, claiming them with `for update skip locked` and a lease, so several
 *   sandbox processes never send the same attempt twice at once and a crashed sender's claims come due again.
 * - Each attempt is signed afresh (lib/webhook-signature.ts) with the endpoint's current secret and URL; a delivery
 *   whose VASP no longer has a webhook is dropped.
 * - 2xx: delivered. 4xx other than 408 and 429: failed for good (not retried). 408, 429, 5xx, timeouts and network
 *   errors: retried after `baseDelayMs · 2^(attempt-1)` (capped at `maxDelayMs`), up to `maxAttempts` attempts.
 */
import { BackgroundLoop } from '../background-loop';
import type { Pool } from 'pg';
import type { Logger } from '../../lib/logger';
import { webhookHeaders } from '../../lib/webhook-signature';
import type { Faults } from '../faults';
import {
  finishDelivery,
  leaseDueDeliveries,
  postponeDelivery,
  recordFailedAttempt,
  type DueDelivery as Due,
} from './store';

export interface DispatcherOptions {
  pollMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxAttempts: number;
  timeoutMs: number;
  batch: number;
}

export const DEFAULT_DISPATCHER_OPTIONS: DispatcherOptions = {
  pollMs: 200,
  baseDelayMs: 1000,
  maxDelayMs: 10 * 60_000,
  maxAttempts: 12,
  timeoutMs: 10_000,
  batch: 20,
};

const LEASE_SECONDS = 60;

export const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

export class WebhookDispatcher {
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
    private readonly opts: DispatcherOptions = DEFAULT_DISPATCHER_OPTIONS,
    private readonly faults?: Faults,
  ) {
    this.loop = new BackgroundLoop('webhook delivery round', opts.pollMs, () => this.tick(), logger);
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One round: claim what is due and attempt it. */
  async tick(): Promise<void> {
    const rows = await leaseDueDeliveries(this.pool, this.opts.batch, LEASE_SECONDS);
    await Promise.all(rows.map((row) => (this.heldBack(row) ? undefined : this.attempt(row))));
  }

  /** Deliveries already considered for the late/reorder faults (each first attempt is, once). */
  private readonly considered = new Set<string>();

  /** The late/reorder faults: a first attempt put off for a while, so later deliveries overtake it. */
  private heldBack(row: Due): boolean {
    if (!this.faults || row.attempts > 0 || this.considered.has(row.id)) return false;
    this.considered.add(row.id);
    if (this.considered.size > 100_000) this.considered.clear();
    const delay = this.faults.webhookDelayMs();
    if (delay <= 0) return false;
    void postponeDelivery(this.pool, row.id, delay / 1000).catch((e: unknown) =>
      this.logger.warn({ err: e }, 'could not hold back a webhook delivery'),
    );
    return true;
  }

  private async attempt(row: Due): Promise<void> {
    if (!row.url || !row.secret) {
      await this.finish(row.id, 'dropped', null, 'the VASP has no webhook any more');
      return;
    }
    const attempts = row.attempts + 1;
    let status: number | null = null;
    let error: string | null = null;
    try {
      status = await this.send(row);
    } catch (e) {
      error = (e as Error).name === 'TimeoutError' ? 'timeout' : `network error: ${(e as Error).message}`;
    }
    if (status !== null && status >= 200 && status < 300) {
      await this.finish(row.id, 'delivered', status, null, attempts);
      if (this.faults?.duplicateWebhook()) await this.send(row).catch(() => undefined);
    } else if ((status !== null && !retryable(status)) || attempts >= this.opts.maxAttempts) {
      await this.finish(row.id, 'failed', status, error ?? `HTTP ${status}`, attempts);
    } else {
      const delay = Math.min(this.opts.maxDelayMs, this.opts.baseDelayMs * 2 ** (attempts - 1));
      await recordFailedAttempt(this.pool, row.id, attempts, status!, error ?? `HTTP ${status}`, delay / 1000);
    }
  }

  private async send(row: Due): Promise<number> {
    const response = await fetch(row.url!, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'travel-rule-sandbox-webhooks/1',
        ...webhookHeaders(row.secret!, row.message_id, row.body),
      },
      body: row.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(this.opts.timeoutMs),
    });
    await response.arrayBuffer().catch(() => undefined);
    return response.status;
  }

  private async finish(
    id: string,
    state: string,
    status: number | null,
    error: string | null,
    attempts?: number,
  ): Promise<void> {
    await finishDelivery(this.pool, id, state, status, error, attempts ?? null);
  }
}
