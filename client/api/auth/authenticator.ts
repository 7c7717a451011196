import type { Pool } from 'pg';
import type { OperatorAuthConfig } from '../../../auth/config';
import { looksLikeApiKey } from '../../../auth/api-key';
import { AuthenticationError } from '../../../lib/errors';
import type { Logger } from '../../../lib/logger';
import type { Principal } from '../../../lib/principal';
import { ApiKeyAuthenticator } from './api-keys';
import { OidcVerifier } from './oidc';

/** Who sent a request, from its Authorization header; throws AuthenticationError (401) when nobody can be named. */
export interface Authenticator {
  authenticate(authorization: string | undefined): Promise<Principal>;
}

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** API keys (`tro_…`) from the database, anything else as an access token of the configured identity provider. */
export function createAuthenticator(deps: {
  pool: Pool;
  config: OperatorAuthConfig;
  logger?: Logger;
  fetch?: typeof fetch;
}): Authenticator {
  const apiKeys = new ApiKeyAuthenticator(deps.pool, deps.logger);
  const oidc = deps.config.oidc && new OidcVerifier(deps.config.oidc, { fetch: deps.fetch });
  return {
    async authenticate(authorization) {
      if (!authorization)
        throw new AuthenticationError('credentials are required: send Authorization: Bearer <access token or API key>');
      const token = BEARER.exec(authorization.trim())?.[1];
      if (!token)
        throw new AuthenticationError(
          'the Authorization header is not a bearer credential: send Authorization: Bearer <access token or API key>',
        );
      if (looksLikeApiKey(token)) return apiKeys.authenticate(token);
      if (!oidc)
        throw new AuthenticationError(
          'the credential is not an API key, and no identity provider is configured (OPERATOR_AUTH_ISSUER)',
          { credential: 'oidc' },
        );
      return oidc.verify(token);
    },
  };
}
