/** The network's settings as the network client takes them; read from the environment by config/. */
export interface NetworkConfig {
  /** Base of the OAuth server; tokens are requested at `${authUrl}/oauth/token`. */
  authUrl: string;
  audience: string;
  baseUrl: string;
  audiencePii: string;
  baseUrlPii: string;
  clientId: string;
  clientSecret: string;
}

/**
 * The group's one budget of calls to the network, shared by every worker and API process through PostgreSQL
 * (network/rate-budget.ts, network/budget-store.ts). The network allows `limit` calls per `windowMs` per credential and
 * blocks every endpoint for a while after a 429.
 */
export interface NetworkBudgetConfig {
  /** NETWORK_RATE_LIMIT=off: no budget, every call goes straight out (a 429 is still honoured and retried). */
  enabled: boolean;
  /** Calls per window per credential, as the network counts them (NETWORK_RATE_LIMIT, default 6000). */
  limit: number;
  /** NETWORK_RATE_WINDOW, default 300s. */
  windowMs: number;
  /** Calls that may leave at once after a quiet spell (NETWORK_RATE_BURST, default limit / 20). */
  burst: number;
  /** Tokens only high-priority calls may take: low-priority calls wait while the bucket holds this many or fewer (NETWORK_RATE_RESERVE, default burst / 2). */
  reserve: number;
  /** Longest a call waits for the budget before failing with a retryable RateLimitedError (NETWORK_RATE_MAX_WAIT, default 15s: more than the network's 10 s block, which a call then waits out instead of spending an activity attempt, and less than the 20-30 s timeouts of the activities that call the network). */
  maxWaitMs: number;
  /** The block assumed after a 429 that names no Retry-After (NETWORK_RATE_LOCKOUT, default 10s: the network's rule). */
  lockoutMs: number;
}
