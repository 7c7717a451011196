/**
 * The compliance console: a single page (client/console/) served at /console, its TypeScript bundled by esbuild into
 * one script (app.js), with Preact and htm as ES modules straight from node_modules (no CDN). Only the files listed
 * here are served, from memory.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { GroupConfig } from '../../../config';
import { access } from '../auth/roles';
import type { OperatorAuthConfig } from '../../../auth/config';
import { isPriced, type Pricing } from '../../../pricing';
import type { NetworkClient } from '../../../network/client';
import { vaspNames } from '../../../network/directory';
import { ValidationError } from '../../../lib/errors';

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
  // The dashboard's charts (uPlot, bundled into app.js) need its stylesheet for their legends and cursor.
  'vendor/uplot.css': {
    path: join(require.resolve('uplot'), '..', 'uPlot.min.css'),
    type: 'text/css; charset=utf-8',
  },
};

/** The packages the page loads on its own, through the import map in index.html. */
const VENDOR = ['preact', 'preact/hooks', 'htm'];

/**
 * The console's one script: client/console/app.ts and the modules it imports, bundled for the browser. `npm run build`
 * writes it to dist/client/console/app.js; run from source (npm start, the tests) the API bundles it at the first
 * request instead, so nothing generated lives beside the sources. esbuild is a development dependency: compiled code
 * never calls this.
 */
export async function bundleConsoleScript(entry: string, options: { sourcemap?: boolean } = {}): Promise<Buffer> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    external: VENDOR,
    charset: 'utf8',
    legalComments: 'none',
    sourcemap: options.sourcemap ? 'inline' : false,
    write: false,
    logLevel: 'silent',
  });
  return Buffer.from(result.outputFiles[0]!.contents);
}

export function consoleRoutes(
  app: FastifyInstance,
  deps: {
    group: GroupConfig;
    console?: ConsoleSettings;
    auth?: OperatorAuthConfig;
    pricing?: Pricing;
    transfers?: { network?: NetworkClient };
  },
) {
  const cache = new Map<string, Buffer>();
  const file = (name: string) => {
    let body = cache.get(name);
    if (!body) cache.set(name, (body = readFileSync(FILES[name]!.path)));
    return body;
  };
  // From source the TypeScript is there and app.js is not: bundle it once, with a source map for the browser's tools.
  const source = join(CONSOLE_DIR, 'app.ts');
  let script: Promise<Buffer> | undefined;
  const body = async (name: string) => {
    if (name !== 'app.js' || !existsSync(source)) return file(name);
    script ??= bundleConsoleScript(source, { sourcemap: true }).catch((e: unknown) => {
      script = undefined;
      throw e;
    });
    return script;
  };
  const serve = (name: string) => async (_request: unknown, reply: import('fastify').FastifyReply) => {
    if (name === 'index.html') reply.header('content-security-policy', pagePolicy());
    return reply
      .header('content-type', FILES[name]!.type)
      .header('cache-control', 'no-cache')
      .send(await body(name));
  };
  // The page runs only its own files and the import map inline in index.html (allowed by its hash), and talks to this
  // API and to the identity provider (discovery and the token exchange of the sign-in).
  let policy: string | undefined;
  const pagePolicy = () =>
    (policy ??= contentSecurityPolicy(file('index.html').toString('utf8'), deps.auth?.oidc?.issuer));

  // The page's code loads before anyone signs in; every piece of data it shows comes from routes that need a token.
  const config = { public: "the console's own code and styles: no data" };
  app.get('/console', { config, schema: { hide: true } }, serve('index.html'));
  app.get('/console/', { config, schema: { hide: true } }, serve('index.html'));
  for (const name of Object.keys(FILES).filter((n) => n !== 'index.html'))
    app.get(`/console/${name}`, { config, schema: { hide: true } }, serve(name));

  // Where the sign-in page sends people: the provider's issuer and the console's public client id, which any visitor
  // of the provider's own sign-in page learns as well; no data.
  app.get(
    '/console/sign-in.json',
    {
      config: { public: "how to sign in: the identity provider and the console's public client id" },
      schema: {
        hide: true,
        response: {
          200: Type.Object({
            oidc: Type.Union([
              Type.Object({ issuer: Type.String(), clientId: Type.String(), audience: Type.String() }),
              Type.Null(),
            ]),
          }),
        },
      },
    },
    async () => {
      const oidc = deps.auth?.oidc;
      return {
        oidc: oidc?.consoleClientId
          ? { issuer: oidc.issuer, clientId: oidc.consoleClientId, audience: oidc.audience }
          : null,
      };
    },
  );

  // VASPs by their directory names, for the pages that show DIDs (the DID stays on hover); up to 100 at a time.
  const network = deps.transfers?.network;
  const names = network ? vaspNames(network) : undefined;
  app.get(
    '/console/vasp-names.json',
    {
      config: { roles: access.read },
      schema: {
        hide: true,
        querystring: Type.Object(
          { did: Type.String({ maxLength: 20_000, description: 'DIDs, separated by commas' }) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ names: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()])) }),
        },
      },
    },
    async (request) => {
      const dids = [...new Set((request.query as { did: string }).did.split(',').filter(Boolean))];
      if (dids.length > 100) throw new ValidationError('querystring.did', 'names at most 100 DIDs');
      const bad = dids.find((d) => !/^did:[a-z0-9]+:[A-Za-z0-9._:%-]{1,200}$/.test(d));
      if (bad !== undefined) throw new ValidationError('querystring.did', 'must be DIDs (did:method:id)');
      return { names: names ? await names(dids) : Object.fromEntries(dids.map((d) => [d, null])) };
    },
  );

  app.get(
    '/console/config.json',
    {
      config: { roles: access.read },
      schema: {
        hide: true,
        response: {
          200: Type.Object({
            gatewayDid: Type.Union([Type.String(), Type.Null()]),
            subsidiaryDids: Type.Array(Type.String()),
            temporalUiUrl: Type.String(),
            namespace: Type.String(),
            // How amounts read: per asset its decimals, and the USD price of one unit when pricing knows one.
            assets: Type.Record(
              Type.String(),
              Type.Object({ decimals: Type.Integer(), priceUSD: Type.Union([Type.Number(), Type.Null()]) }),
            ),
          }),
        },
      },
    },
    async () => {
      const group = deps.group;
      const settings = deps.console ?? { temporalUiUrl: 'http://localhost:8233', namespace: 'default' };
      const pricing = deps.pricing;
      const assets = pricing
        ? Object.fromEntries(
            await Promise.all(
              pricing.assets().map(async (symbol) => {
                const decimals = pricing.decimals(symbol)!;
                const one = await pricing.toFiat({
                  asset: symbol,
                  amount: `1${'0'.repeat(decimals)}`,
                  currency: 'USD',
                });
                return [symbol, { decimals, priceUSD: isPriced(one) ? one.value : null }] as const;
              }),
            ),
          )
        : {};
      return { gatewayDid: group.gatewayDid ?? null, subsidiaryDids: group.subsidiaryDids, ...settings, assets };
    },
  );
}

/** The console page's Content-Security-Policy: same origin only, plus the import map's hash and the provider's origin. */
export function contentSecurityPolicy(indexHtml: string, issuer?: string): string {
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(indexHtml)?.[1];
  const scriptHash =
    importMap === undefined ? '' : ` 'sha256-${createHash('sha256').update(importMap, 'utf8').digest('base64')}'`;
  const provider = issuer ? ` ${new URL(issuer).origin}` : '';
  return [
    `default-src 'self'`,
    `script-src 'self'${scriptHash}`,
    `connect-src 'self'${provider}`,
    `img-src 'self' data:`,
    `style-src 'self'`,
    `object-src 'none'`,
    `base-uri 'none'`,
    `form-action 'self'`,
    `frame-ancestors 'none'`,
  ].join('; ');
}
