import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import ky, { HTTPError } from 'ky';
import { loadConfig } from '../../config';
import { ValidationError } from '../../lib/errors';
import { isLoopbackHost } from '../../lib/loopback';

/** Where the CLI's commands reach the internal API, and the credential they send. */
export interface ApiTarget {
  url: string;
  /** An access token or an API key, sent as `Authorization: Bearer`. */
  token?: string;
}

/** What a command's options say about the API: `--api`, `--token-file`, and the old `--token`. */
export interface ApiOptions {
  api?: string;
  tokenFile?: string;
  token?: string;
}

function readToken(path: string, setting: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new ValidationError(
      setting,
      `cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  if (!text || /\s/.test(text)) throw new ValidationError(setting, `${path} must hold one credential on one line`);
  return text;
}

/**
 * The target from a command's options, else PUBLIC_API_URL and API_TOKEN (or API_TOKEN_FILE). A credential on the
 * command line is visible to every user of the machine (the process list) and kept in the shell's history: `--token`
 * still works, with a warning, for scripts written for it. A credential is never sent over plain HTTP to a host that
 * is not on loopback: the command stops before any request.
 */
export function apiTarget(opts: ApiOptions): ApiTarget {
  const config =
    opts.api !== undefined && (opts.tokenFile !== undefined || opts.token !== undefined) ? undefined : loadConfig();
  let token: string | undefined;
  if (opts.tokenFile !== undefined) token = readToken(opts.tokenFile, '--token-file');
  else if (opts.token !== undefined) {
    process.stderr.write(
      'warning: --token shows the credential in the process list and the shell history; use API_TOKEN, API_TOKEN_FILE or --token-file\n',
    );
    token = opts.token;
  } else if (config?.auth.apiToken) token = config.auth.apiToken;
  else if (config?.auth.apiTokenFile) token = readToken(config.auth.apiTokenFile, 'API_TOKEN_FILE');
  const url = (opts.api ?? config!.publicApiUrl).replace(/\/+$/, '');
  const setting = opts.api !== undefined ? '--api' : 'PUBLIC_API_URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError(setting, `"${url}" is not a URL`);
  }
  if (token !== undefined && parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname.replace(/^\[|\]$/g, ''))) {
    throw new ValidationError(
      setting,
      `is plain http to ${parsed.host}, which is not on loopback: the credential would cross the network in clear; use the API's https:// address`,
    );
  }
  return { url, token };
}

const authHeader = (target: ApiTarget): Record<string, string> =>
  target.token ? { authorization: `Bearer ${target.token}` } : {};

/** The `error` object of the API's error answers, for commands that act on its fields. */
export interface ApiErrorBody {
  error?: { message?: string; field?: string; index?: number; workflowId?: string };
}

/** An error answer of the API. Its message is one line, `METHOD path: status message` (never a key: the API quotes none). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
    method: string,
    path: string,
  ) {
    super(`${method} ${path}: ${status} ${body.error?.message ?? ''}`.trim());
  }
}

/**
 * Calls the internal API (every command that needs the API uses it). No timeout: an import batch or a rebuild may take
 * long, and the user can stop the command. With `retries`, a network failure, a 5xx or a 429 is tried again after
 * 400 ms, 800 ms, ... (only for calls safe to repeat); any other error answer fails at once.
 */
export async function api<T>(
  target: ApiTarget,
  method: string,
  path: string,
  body?: unknown,
  opts: { retries?: number } = {},
): Promise<T> {
  try {
    return await ky(`${target.url}${path}`, {
      method,
      headers: authHeader(target),
      json: body,
      timeout: false,
      retry: {
        limit: opts.retries ?? 0,
        methods: [method],
        shouldRetry: ({ error }) =>
          !(error instanceof HTTPError) || error.response.status >= 500 || error.response.status === 429,
        delay: (retry) => 200 * 2 ** retry,
      },
    }).json<T>();
  } catch (e) {
    if (!(e instanceof HTTPError)) throw e;
    const answer = (await e.response.json().catch(() => ({}))) as ApiErrorBody;
    throw new ApiError(e.response.status, answer, method, path);
  }
}

/** The options every command that calls the API takes. */
export function apiOptions(command: Command): Command {
  return command
    .option('--api <url>', 'internal API base URL (default: PUBLIC_API_URL); https unless on loopback')
    .option(
      '--token-file <path>',
      'a file holding the access token or API key (default: API_TOKEN, else the file API_TOKEN_FILE names)',
    )
    .option(
      '--token <credential>',
      'deprecated: the credential on the command line, visible in the process list; use --token-file or API_TOKEN',
    );
}
