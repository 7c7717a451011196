import type { Role } from '../../lib/principal';

// JSON bodies of HTTP answers, read field by field in assertions.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A JSON call with a bearer credential: the status and the parsed body (the tests' way to drive the API and sandbox). */
export async function bearerCall(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const r = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : {}) as Json };
}

/** An orchestrator the tests started: where its API listens and the headers of each role's API key. */
interface RoleHeaders {
  apiUrl: string;
  headers(role?: Role, extra?: Record<string, string>): Record<string, string>;
}

/** A JSON call to the orchestrator's API as `role`: the status and the parsed body (undefined when empty). */
export async function roleCall(
  orch: RoleHeaders,
  role: Role,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const r = await fetch(`${orch.apiUrl}${path}`, {
    method,
    headers: orch.headers(role, body === undefined ? {} : { 'content-type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : undefined) as Json };
}
