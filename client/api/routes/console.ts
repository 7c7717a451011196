/**
 * The compliance console: a single page (client/console/) served at /console, with Preact and htm as ES modules
 * straight from node_modules (no build step, no CDN). Only the files listed here are served, from memory.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { GroupConfig } from '../../../lib/config';
import { access } from '../auth/roles';

export interface ConsoleSettings {
  /** Where the Temporal UI is, for the link to a transfer's workflow. */
  temporalUiUrl: string;
  namespace: string;
}

const CONSOLE_DIR = join(__dirname, '..', '..', 'console');
const FILES: Record<string, { path: string; type: string }> = {
  'index.html': { path: join(CONSOLE_DIR, 'index.html'), type: 'text/html; charset=utf-8' },
  'app.js': { path: join(CONSOLE_DIR, 'app.js'), type: 'text/javascript; charset=utf-8' },
  'app.css': { path: join(CONSOLE_DIR, 'app.css'), type: 'text/css; charset=utf-8' },
  'vendor/preact.mjs': { path: require.resolve('preact'), type: 'text/javascript; charset=utf-8' },
  'vendor/hooks.mjs': { path: require.resolve('preact/hooks'), type: 'text/javascript; charset=utf-8' },
  'vendor/htm.mjs': { path: join(require.resolve('htm'), '..', 'htm.mjs'), type: 'text/javascript; charset=utf-8' },
};

export function consoleRoutes(app: FastifyInstance, deps: { group: GroupConfig; console?: ConsoleSettings }) {
  const cache = new Map<string, Buffer>();
  const file = (name: string) => {
    let body = cache.get(name);
    if (!body) cache.set(name, (body = readFileSync(FILES[name]!.path)));
    return body;
  };
  const serve = (name: string) => async (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply.header('content-type', FILES[name]!.type).header('cache-control', 'no-cache').send(file(name));

  // The page's code loads before anyone signs in; every piece of data it shows comes from routes that need a token.
  const config = { public: 'the console\'s own code and styles: no data' };
  app.get('/console', { config, schema: { hide: true } }, serve('index.html'));
  app.get('/console/', { config, schema: { hide: true } }, serve('index.html'));
  for (const name of Object.keys(FILES).filter((n) => n !== 'index.html')) app.get(`/console/${name}`, { config, schema: { hide: true } }, serve(name));

  app.get('/console/config.json', {
    config: { roles: access.read },
    schema: {
      hide: true,
      response: {
        200: Type.Object({
          gatewayDid: Type.Union([Type.String(), Type.Null()]),
          subsidiaryDids: Type.Array(Type.String()),
          temporalUiUrl: Type.String(),
          namespace: Type.String(),
        }),
      },
    },
  }, async () => {
    const group = deps.group;
    const settings = deps.console ?? { temporalUiUrl: 'http://localhost:8233', namespace: 'default' };
    return { gatewayDid: group.gatewayDid ?? null, subsidiaryDids: group.subsidiaryDids, ...settings };
  });
}
