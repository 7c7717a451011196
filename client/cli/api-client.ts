import type { Command } from 'commander';
import { loadConfig } from '../../lib/config';

/** Where the CLI's commands reach the internal API, and the credential they send. */
export interface ApiTarget {
  url: string;
  /** An access token or an API key, sent as `Authorization: Bearer`. */
  token?: string;
}

/** The target from a command's --api and --token, else PUBLIC_API_URL and API_TOKEN. */
export function apiTarget(opts: { api?: string; token?: string }): ApiTarget {
  const config = opts.api !== undefined && opts.token !== undefined ? undefined : loadConfig();
  return { url: (opts.api ?? config!.publicApiUrl).replace(/\/+$/, ''), token: opts.token ?? config!.auth.apiToken };
}

export const authHeader = (target: ApiTarget): Record<string, string> => (target.token ? { authorization: `Bearer ${target.token}` } : {});

/** The options every command that calls the API takes. */
export function apiOptions(command: Command): Command {
  return command
    .option('--api <url>', 'internal API base URL (default: PUBLIC_API_URL)')
    .option('--token <credential>', 'access token or API key for the API (default: API_TOKEN)');
}
