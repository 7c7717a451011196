import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentListenerConfig } from '../../auth/config';
import { parseHost, type HostAndPort } from '../../lib/host-header';

/** The names a program on this machine uses for the listener; a web page cannot make a browser send them for its own site. */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '::1'];

const written = (h: HostAndPort, port: number) => `${h.name.includes(':') ? `[${h.name}]` : h.name}:${h.port ?? port}`;

/**
 * The agent listener answers without credentials, so it answers programs, never web pages. A page can reach a
 * loopback port by rebinding its own name to 127.0.0.1 (DNS rebinding): the browser then sends the page's name as
 * `Host`, and an `Origin` on its cross-origin requests and every POST. So a request is answered only if its `Host` is
 * a loopback name (or one in `hosts`: the listener's own address, AGENT_PUBLIC_HOST) with the port it arrived on
 * (the one in `hosts` if given), and it carries no `Origin` and no `Sec-Fetch-Site` (a browser's mark). Refused in an onRequest hook, before body parsing and
 * any route, with 403 in the network's error shape naming the header and the rule. Registered after helmet, so
 * refusals keep the security headers.
 */
export function refuseForeignHostOrOrigin(app: FastifyInstance, opts: { hosts?: HostAndPort[] } = {}): void {
  const others = opts.hosts ?? [];
  const refuse = (reply: FastifyReply, field: 'Host' | 'Origin' | 'Sec-Fetch-Site', rule: string) =>
    reply.code(403).send({ err: { name: 'ForbiddenError', code: 403, message: `${field}: ${rule}`, field, rule } });

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    // The port this connection reached: what a caller of this listener writes in Host (or leaves out, if the default).
    const port = request.raw.socket.localPort ?? 0;
    const fallback = request.protocol === 'https' ? 443 : 80;
    const host = parseHost(request.headers.host ?? '');
    const answered =
      host !== undefined &&
      (((host.port ?? fallback) === port && LOOPBACK_NAMES.includes(host.name)) ||
        others.some((o) => o.name === host.name && (host.port ?? fallback) === (o.port ?? port)));
    if (!answered) {
      const names = [...LOOPBACK_NAMES.map((name) => written({ name }, port)), ...others.map((o) => written(o, port))];
      return refuse(
        reply,
        'Host',
        `must be one of ${names.join(', ')}: the agent endpoints answer without credentials, only to requests addressed to this listener by one of its own names`,
      );
    }
    if (request.headers.origin !== undefined) {
      return refuse(
        reply,
        'Origin',
        "must not be sent: the agent endpoints answer without credentials to programs, never to web pages (a browser sends Origin with a page's cross-origin requests and its POSTs)",
      );
    }
    // A page's cross-site GET without Origin (an image, a link) still reaches a route, which would decrypt and audit a
    // read the page cannot see: browsers mark every request of theirs with Sec-Fetch-Site, programs send none.
    if (request.headers['sec-fetch-site'] !== undefined) {
      return refuse(
        reply,
        'Sec-Fetch-Site',
        "must not be sent: the agent endpoints answer programs, never a browser's requests (which carry it)",
      );
    }
  });
}

/**
 * The names besides loopback's that the configured listener answers to: the address it is bound to, unless that is
 * every address (0.0.0.0, ::), and AGENT_PUBLIC_HOST.
 */
export function agentListenerHosts(config: Pick<AgentListenerConfig, 'host' | 'publicHost'>): HostAndPort[] {
  const hosts: HostAndPort[] = [];
  const bound = config.host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (!['0.0.0.0', '::', ''].includes(bound)) {
    const own = isIP(bound) === 6 ? { name: bound } : parseHost(bound);
    if (own && own.port === undefined) hosts.push(own);
  }
  const named = config.publicHost ? parseHost(config.publicHost) : undefined;
  if (named) hosts.push(named);
  return hosts;
}
