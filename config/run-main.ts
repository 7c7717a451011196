import { startupSettings } from './';
import { ConfigError } from '../lib/errors';
import { createLogger, type Logger } from '../lib/logger';

/**
 * Runs a process entry point. A ConfigError stops start-up with one line naming the setting and the fix, not a stack
 * trace; SIGINT/SIGTERM run the returned shutdown once.
 */
export function runMain(name: string, start: (log: Logger) => Promise<() => Promise<void>>): void {
  const startup = startupSettings();
  const log = createLogger(name, startup.logLevel);
  // Through a promise, so that a ConfigError thrown before `start` returns one (loadConfig() in its argument list) is
  // reported like one thrown later.
  Promise.resolve()
    .then(() => start(log))
    .then(
      (shutdown) => {
        let stopping = false;
        const stop = (signal: string) => {
          if (stopping) return;
          stopping = true;
          log.info(`${signal}: shutting down`);
          shutdown().then(
            () => process.exit(0),
            (e) => {
              log.error({ err: e }, 'shutdown failed');
              process.exit(1);
            },
          );
        };
        process.on('SIGINT', () => stop('SIGINT'));
        process.on('SIGTERM', () => stop('SIGTERM'));
      },
      (e: unknown) => {
        if (e instanceof ConfigError) {
          process.stderr.write(`${name}: configuration error: ${e.message}\n`);
        } else {
          process.stderr.write(`${name}: failed to start: ${(e as Error)?.message ?? String(e)}\n`);
          if (startup.debug) process.stderr.write(`${(e as Error)?.stack}\n`);
        }
        process.exit(1);
      },
    );
}
