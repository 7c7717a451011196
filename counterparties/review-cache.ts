/**
 * The reviews a worker decides with, kept in memory: a decision looks its counterparty up without a database round
 * trip. A connection of its own LISTENs on the channel a trigger notifies after every change to the table (migration
 * 0019); each notification reloads the whole table (reviews change when people review, not per transfer) and swaps it
 * in. While the listener is down, or before the first load, lookups answer undefined and the caller asks the database:
 * a stale answer is never given for longer than a reload takes.
 */
import { Client, type Pool } from 'pg';
import { GROUP_SCOPE, allReviewValues, listenForReviewChanges } from './store';
import { UNREVIEWED, type EffectiveReviewValue, type ReviewValue } from './types';

const RECONNECT_MS = 1000;
const key = (scope: string, vaspDid: string) => `${scope}\u0000${vaspDid}`;

export interface ReviewLookup {
  /** The review that applies to the subsidiary's transfers with the counterparty; undefined: ask the database. */
  lookup(subsidiaryDid: string, counterpartyDid: string): EffectiveReviewValue | undefined;
}

export class ReviewCache implements ReviewLookup {
  private values = new Map<string, ReviewValue>();
  private listener?: Client;
  private live = false;
  private stopped = false;
  private loading?: Promise<void>;
  private again = false;
  /** The pending reconnect or reload: cleared by stop, so nothing touches the database after it. */
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    private readonly onError: (e: Error) => void = () => undefined,
  ) {}

  /** Starts listening and loads the reviews; never throws (a failure retries in the background). */
  async start(): Promise<void> {
    await this.connect().catch((e: Error) => this.lost(undefined, e));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.live = false;
    clearTimeout(this.retry);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  lookup(subsidiaryDid: string, counterpartyDid: string): EffectiveReviewValue | undefined {
    if (!this.live) return undefined;
    return (
      this.values.get(key(subsidiaryDid, counterpartyDid)) ??
      this.values.get(key(GROUP_SCOPE, counterpartyDid)) ??
      UNREVIEWED
    );
  }

  private async connect(): Promise<void> {
    // Listening first, loading second: a change made during the load is announced and loaded again.
    const client = new Client(this.pool.options);
    client.on('notification', () => void this.reload());
    client.on('error', (e) => this.lost(client, e));
    client.on('end', () => this.lost(client));
    await client.connect();
    if (this.stopped) return void (await client.end());
    await listenForReviewChanges(client);
    this.listener = client;
    await this.reload();
  }

  private lost(client: Client | undefined, e?: Error): void {
    if (client && this.listener !== client) return;
    this.live = false;
    this.listener = undefined;
    if (e) this.onError(e);
    void client?.end().catch(() => undefined);
    this.later(() => void this.connect().catch((err: Error) => this.lost(undefined, err)));
  }

  private later(work: () => void): void {
    if (this.stopped) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(work, RECONNECT_MS).unref();
  }

  /** One load at a time; a notification during a load loads once more after it. */
  private reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      try {
        do {
          this.again = false;
          const rows = await allReviewValues(this.pool);
          this.values = new Map(rows.map((r) => [key(r.scope, r.vaspDid), r.reviewValue]));
        } while (this.again);
        this.live = this.listener !== undefined;
      } catch (e) {
        // Unsure what the table holds: ask the database until a load succeeds.
        this.live = false;
        this.onError(e as Error);
        this.later(() => void this.reload());
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }
}
