/**
 * Rules for every request the sandbox takes, checked before any route's own: HTML-form bodies only where a form is
 * the protocol, and no U+0000 in any text (query values, parameters, JSON keys and strings), which PostgreSQL's text
 * and jsonb cannot hold; each refusal is the network's 4xx naming where. The walk is iterative, so a deeply nested body
 * cannot overflow the stack here.
 */
import type { FastifyInstance } from 'fastify';
import { badRequest, NetworkError } from './errors';

const NUL = '\u0000';

/** The path of the first string or key holding U+0000, or undefined. */
export function findNul(value: unknown, root: string): string | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (node.includes(NUL)) return path;
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${path}[${i}]`]);
    } else if (typeof node === 'object' && node !== null) {
      for (const [k, v] of Object.entries(node)) {
        const at = path ? `${path}.${k.replace(/\0/g, '\\u0000')}` : k.replace(/\0/g, '\\u0000');
        if (k.includes(NUL)) return at;
        stack.push([v, at]);
      }
    }
  }
  return undefined;
}

/** The only routes that take HTML-form bodies (Auth0's token endpoint, the operators' OIDC provider); the rest speak JSON. */
const FORM_ROUTES = new Set(['/oauth/token', '/oidc/token', '/oidc/authorize']);

export function refuseBadInput(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    if (
      /^application\/x-www-form-urlencoded/i.test(request.headers['content-type'] ?? '') &&
      !FORM_ROUTES.has(request.routeOptions.url ?? '')
    ) {
      throw new NetworkError(415, 'UnsupportedMediaTypeError', 'content-type: this route takes application/json');
    }
    const at = findNul(request.query, '') ?? findNul(request.params, '') ?? findNul(request.body, '');
    if (at !== undefined) throw badRequest('ValidationError', `${at || 'body'}: must not contain U+0000`);
  });
}
