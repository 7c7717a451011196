/**
 * Errors in the network's v1 shape: `{err:{name, code, message, stack}}` with the matching HTTP status. The spec's
 * named errors require `stack`; the sandbox answers only the line a stack starts with (`<name>: <message>`), never
 * frames or anything of its own code.
 */
export class NetworkError extends Error {
  constructor(
    readonly status: number,
    override readonly name: string,
    message: string,
    /** Response headers the error carries (Retry-After on a 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toBody() {
    return {
      err: { name: this.name, code: this.status, message: this.message, stack: `${this.name}: ${this.message}` },
    };
  }
}

export const unauthorized = (message = 'unauthorized') => new NetworkError(401, 'UnauthorizedError', message);
export const forbidden = (message: string) => new NetworkError(403, 'UserDIDNotAdminforVASPError', message);
/** The same refusal where the network's spec documents it, under 400: tx/create, tx/approve, tx/redirect (and tx/validate/full). */
export const notAdmin = (message: string) => new NetworkError(400, 'UserDIDNotAdminforVASPError', message);
export const notFound = (message: string) => new NetworkError(404, 'NotFoundError', message);
export const badRequest = (name: string, message: string) => new NetworkError(400, name, message);
