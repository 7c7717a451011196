/** A `Host` header (or a configured host) split into its name and port, as HTTP/1.1 writes it: `name[:port]`, `[v6][:port]`. */
export interface HostAndPort {
  /** Lower-cased; an IPv6 address without its brackets. */
  name: string;
  /** Undefined when not written: the scheme's default then. */
  port?: number;
}

const HOST = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?))(?::(\d{1,5}))?$/i;

/**
 * Undefined for anything else: user info, a path, a trailing dot, spaces, a port out of range. Strict on purpose: the
 * result decides whether a request is answered at all (client/api/agent-host-guard.ts).
 */
export function parseHost(value: string): HostAndPort | undefined {
  const m = HOST.exec(value);
  if (!m) return undefined;
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  return { name: (m[1] ?? m[2]!).toLowerCase(), ...(port !== undefined ? { port } : {}) };
}
