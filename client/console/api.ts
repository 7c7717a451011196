// The session and the one way the console calls the internal API; the API checks every role again on every call.
import type { ClassificationView } from './classification';

export const SESSION_KEY = 'tro-console-session';

export interface Session {
  token: string;
  name?: string;
  roles: string[];
}

export function loadSession(): Session | null {
  try {
    const session = JSON.parse(sessionStorage.getItem(SESSION_KEY) || 'null') as Partial<Session> | null;
    return session?.token && Array.isArray(session.roles) ? (session as Session) : null;
  } catch {
    return null;
  }
}

/** The API's error shape, or the network's for the agent endpoints (/tx/info). */
export interface ErrorBody {
  error?: { message?: string; field?: string };
  err?: { message?: string };
}

export class ApiError extends Error {
  readonly status: number;
  readonly body: ErrorBody | undefined;
  readonly field: string | undefined;

  constructor(status: number, body: ErrorBody | undefined) {
    super(body?.error?.message || body?.err?.message || `HTTP ${status}`);
    this.status = status;
    this.body = body;
    this.field = body?.error?.field;
  }
}

/** Calls the API and answers its JSON; anything but a 2xx throws an ApiError. */
export async function api<T>(
  session: { token?: string } | null,
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<T> {
  const headers: Record<string, string> = { ...extraHeaders };
  if (session?.token) headers.authorization = `Bearer ${session.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = { error: { message: text } };
  }
  if (!r.ok) throw new ApiError(r.status, parsed as ErrorBody);
  return parsed as T;
}

// What the API allows each role (client/api/auth/roles.ts); the API checks it again on every call.
const hasRole = (session: Session | null, roles: string[]) => (session?.roles || []).some((r) => roles.includes(r));
export const canDecide = (session: Session | null) => hasRole(session, ['compliance', 'admin']);
export const canOperate = (session: Session | null) => hasRole(session, ['operator', 'admin']);
export const rolesText = (session: Session) => (session.roles.length ? session.roles.join(', ') : 'none');

// ---------------------------------------------------------------------------------------------------------------
// What the console reads from the API: only the fields it shows.

export interface Page<T> {
  data: T[];
  nextCursor?: string | null;
}

export interface ConsoleConfig {
  gatewayDid: string | null;
  subsidiaryDids: string[];
  temporalUiUrl: string;
  namespace: string;
  /** Per asset symbol: its decimals, and the USD price of one unit when one is known. */
  assets?: Record<string, { decimals: number; priceUSD: number | null }>;
}

export interface ScreeningHits {
  nameHits?: { matchedName: string; list: string; entNum: number | string; score: number }[];
  addressHits?: { list: string }[];
  skipped?: string;
}

export interface Principal {
  name?: string;
}

/** A row of the transfer list (GET /v1/transfers, GET /v1/transfers/list/:workflowId). */
export interface TransferRow {
  id: string;
  workflowId: string;
  direction: 'incoming' | 'outgoing';
  status: string;
  phase?: string | null;
  version?: number;
  final?: boolean;
  needsReview?: boolean;
  needsRouting?: boolean;
  escalated?: boolean;
  /** Left out for roles that may not read screening hits. */
  hits?: ScreeningHits | null;
  deadlineAt?: string | null;
  createdAt?: string;
  counterpartyDid?: string | null;
  subsidiaryDid?: string | null;
  amount?: string | number | null;
  asset?: string | null;
  transactionId?: string | null;
  reference?: string | null;
  decision?: { decision: string; actor: string; principal?: Principal; at: string; reason?: string } | null;
}

/** A step of a transfer's history: incoming transfers have events with details, outgoing ones statuses. */
export interface HistoryEntry {
  at: string;
  event?: string;
  status?: string;
  source?: string;
  detail?: { subsidiaryDid?: string; actor?: string; principal?: Principal; reason?: string; [key: string]: unknown };
}

/** The policy's decision on a transfer (policy/types.ts PolicyDecision, as the API answers it). */
export interface PolicyDecisionView {
  action: string;
  reason: string;
  policy: { vaspDid: string; versionId: string; version: number; contentHash: string } | null;
  rule?: { order: number; actionRule: string; ruleCheck: string; ruleValue: string };
  override?: string;
}

export interface TransferDetails {
  history: HistoryEntry[];
  /** How the transfer was classified when it was started (outgoing; absent on older transfers). */
  classification?: ClassificationView | null;
  policy?: PolicyDecisionView;
  review?: { decision: string; actor: string; principal?: Principal; at: string; reason?: string };
  /** The broadcast blockchain transaction, once the custody system gave it (outgoing). */
  txHash?: string;
  /** Whether the custody system may broadcast the funds, once decided (outgoing; outgoing/types.ts BroadcastDecision). */
  broadcast?: BroadcastDecisionView;
}

/** The one `transfer.release` or `transfer.halt` an outgoing transfer announces to the custody system. */
export interface BroadcastDecisionView {
  event: 'transfer.release' | 'transfer.halt';
  reason: string;
  /** The sending subsidiary's rule as configured: `on-accepted`, `at-once`, `after-timeout:10m`. */
  rule: string;
  at: string;
}

/** A wallet ownership proof (GET /v1/wallet-proofs, wallet-proofs/types.ts WalletProof). */
export interface WalletProofView {
  id: string;
  customerRef: string;
  asset: string;
  address: string;
  vaspDid: string;
  method: string;
  scheme: string | null;
  status: string;
  reason: string | null;
  challengeExpiresAt: string;
  depositAddress: string | null;
  /** Base units. */
  depositAmount: string | null;
  /** The signature, the deposit seen ({txHash, from, amount}) or the review ({reviewedBy, decision}); {} while none. */
  evidence: {
    signature?: string;
    txHash?: string;
    from?: string;
    amount?: string;
    reviewedBy?: string;
    decision?: string;
  };
  createdBy: string;
  createdAt: string;
  verifiedAt: string | null;
  expiresAt: string | null;
}

/** A deposit the custody system reported (GET /v1/deposits, deposits/types.ts Deposit). */
export interface DepositView {
  id: string;
  /** The subsidiary the deposit reached. */
  vaspDid: string;
  chain: string;
  asset: string;
  txHash: string;
  outputIndex: number;
  /** The group's address the funds reached. */
  to: string;
  from: string | null;
  customerRef: string | null;
  proofRequired: boolean;
  /** Base units. */
  amount: string;
  status: string;
  reason: string | null;
  classification: string;
  transactionId: string | null;
  networkStatus: string | null;
  dataDeadlineAt: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  decidedAt: string | null;
  /** Who made it final: a compliance officer's actor, or system:deposit (absent from older answers). */
  decidedBy?: string | null;
  /** The custody system's confirmation of a return (POST /v1/deposits/:id/returned). */
  returnTxHash?: string | null;
  returnedAt?: string | null;
  /** A return not confirmed within 10 business days. */
  escalatedAt?: string | null;
}
