import type { Logger } from '../lib/logger';

/**
 * A round of background work repeated every `intervalMs` while the server runs (webhook deliveries, simulated
 * counterparties, nested routing). Rounds never overlap; a failed round is logged and the next one runs on time;
 * `stop` waits for the round in progress, so the server closes with nothing half-done.
 */
export class BackgroundLoop {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = true;

  constructor(
    private readonly what: string,
    private readonly intervalMs: number,
    private readonly round: () => Promise<void>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.round()
        .catch((err: unknown) => this.logger.warn({ err }, `${this.what} failed`))
        .finally(() => this.schedule());
    }, this.intervalMs);
  }
}
