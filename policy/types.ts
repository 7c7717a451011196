/**
 * Decision policies: ordered rule lists per direction, with the network's names (its rules engine, `/rules/*`), first
 * match wins, no match → SEND_TO_INBOX. Workflow-safe: types and constants only, never personal data.
 */
import type { EffectiveReviewValue } from '../counterparties/types';

export const ACTION_RULES = ['APPROVE', 'REJECT', 'NOT_READY', 'SEND_TO_INBOX'] as const;
export type ActionRule = (typeof ACTION_RULES)[number];

/** The network's checks, then two of ours (ASSET, CUSTOMER_JURISDICTION) that the network does not know. */
export const NETWORK_RULE_CHECKS = [
  'ALL',
  'VASP',
  'REVIEWED_VASP_LIST',
  'JURISDICTION',
  'RISK_SCORE',
  'SANCTION_LIST_CHECK',
  'TRANSACTION_AMOUNT',
  'TRANSACTION_CREATION_TIME',
] as const;
export const RULE_CHECKS = [...NETWORK_RULE_CHECKS, 'ASSET', 'CUSTOMER_JURISDICTION'] as const;
export type RuleCheck = (typeof RULE_CHECKS)[number];

export const DIRECTIONS = ['incoming', 'outgoing'] as const;
export type Direction = (typeof DIRECTIONS)[number];

/**
 * One rule. `ruleValue` is a string as at the network:
 * - ALL: `""` or `"ALL"`;
 * - VASP: comma-separated DIDs; JURISDICTION, CUSTOMER_JURISDICTION: comma-separated ISO 3166-1 alpha-2 codes;
 *   ASSET: comma-separated asset symbols;
 * - REVIEWED_VASP_LIST: comma-separated review values (TRUSTED, BLOCKED, MANUAL, UNREVIEWED);
 * - RISK_SCORE (0–100) and TRANSACTION_AMOUNT (in the policy's currency): a comparison, `<`, `<=`, `>`, `>=` or `=`
 *   and a number (`>=1000`);
 * - SANCTION_LIST_CHECK: `HIT` or `NO_HIT`;
 * - TRANSACTION_CREATION_TIME: a UTC window `HH:MM-HH:MM` (it may wrap past midnight).
 */
export interface PolicyRule {
  order: number;
  actionRule: ActionRule;
  ruleCheck: RuleCheck;
  ruleValue: string;
  /** The provider of a RISK_SCORE or SANCTION_LIST_CHECK value, as the network's `source`. */
  source?: string;
}

/** What a policy says: amounts are compared in `currency` (ISO 4217). */
export interface PolicyDocument {
  currency: string;
  incoming: PolicyRule[];
  outgoing: PolicyRule[];
}

/** One immutable version of a VASP's (or, under the gateway's DID, the group's) policy. */
export interface PolicyVersion extends PolicyDocument {
  id: string;
  /** The subsidiary whose policy it is, or the gateway's DID for the group's. */
  vaspDid: string;
  version: number;
  /** sha256 of the canonical document: the same rules give the same hash. */
  contentHash: string;
  author: string;
  createdAt: string;
  note: string;
}

/**
 * The facts a decision is taken on: metadata and screening results, never personal data. A fact left undefined is
 * unknown; a rule that needs an unknown fact sends the transfer to a person.
 */
export interface PolicyFacts {
  direction: Direction;
  /** The group VASP the transfer belongs to. */
  vaspDid: string;
  counterpartyDid?: string;
  counterpartyReview: EffectiveReviewValue;
  /** The counterparty VASP's incorporation country (directory). */
  counterpartyJurisdiction?: string;
  /** The counterparty customer's country (IVMS101 address), a code only. */
  customerJurisdiction?: string;
  asset: string;
  /** Base units, as on the transfer. */
  amount: string;
  /** The amount in the policy's currency, when a price was known. */
  amountFiat?: number;
  /** Where `amountFiat` came from (price table, provider), for the audit row. */
  priceSource?: string;
  createdAt: string;
  riskScore?: number;
  /** `undefined`: not screened (yet, or not in this direction). */
  sanctionsHit?: boolean;
  /** `false` when the personal data could not be decrypted or parsed. */
  personalDataReadable?: boolean;
}

/** Why a matched rule's action was not taken: these can never be approved by a rule. */
export type DecisionOverride = 'sanctions-hit' | 'unreadable-personal-data' | 'blocked-counterparty';

export interface PolicyDecision {
  action: ActionRule;
  /** The version that decided; `null` under the built-in default (no policy configured). */
  policy: { vaspDid: string; versionId: string; version: number; contentHash: string } | null;
  /** The rule that matched, if one did. */
  rule?: PolicyRule;
  /** For a person and an auditor: which rule, on which fact. */
  reason: string;
  override?: DecisionOverride;
  /** The rule that could not be evaluated for want of a fact, when that decided. */
  unknownFact?: string;
}

/** What deciding a transfer gives its workflow: the decision and the facts it was taken on, for the audit row. */
export interface TransferDecision {
  decision: PolicyDecision;
  facts: PolicyFacts;
}

/** What the incoming and outgoing workflows know of a transfer when they ask for a decision. */
export interface TransferFactsInput {
  transferId: string;
  direction: Direction;
  vaspDid: string;
  counterpartyDid?: string;
  asset: string;
  amount: string;
  createdAt: string;
}
