/**
 * Decides a transfer by its VASP's policy (its own, else the group's, else the built-in default): gathers the facts
 * the rules need (the counterparty's review always, its jurisdiction and the fiat amount only when a rule asks),
 * evaluates the active version, and records its decision and the shadow version's beside it (never acted on).
 */
import type { Pool } from 'pg';
import { effectiveReviewFor } from '../counterparties/store';
import type { ReviewLookup } from '../counterparties/review-cache';
import { compiledVersion } from './compiled';
import { evaluatePolicy, type CompiledPolicy } from './evaluate';
import { policyRefsFor, recordDecision } from './store';
import type { PolicyFacts, RuleCheck, TransferDecision, TransferFactsInput } from './types';

export interface DecideDeps {
  pool: Pool;
  /** The group's policy is kept under the gateway's DID. */
  gatewayDid: string;
  /** The reviews in memory (counterparties/review-cache.ts); without them, or when it cannot say, the database. */
  reviews?: ReviewLookup;
  /** The counterparty VASP's incorporation country (the directory's, cached by the caller), if known. */
  jurisdictionOf(vaspDid: string): Promise<string | undefined>;
  /** The amount in `currency`, if a fresh price is known. */
  toFiat(query: {
    asset: string;
    amount: string;
    currency: string;
  }): Promise<{ value: number; source: string } | undefined>;
}

/** What only the receiving side's screening knows: kept out of the recorded facts where it is personal. */
export interface ScreeningFacts {
  sanctionsHit?: boolean;
  personalDataReadable?: boolean;
  /** The counterparty customer's country: used to decide, never recorded (it comes from personal data). */
  customerJurisdiction?: string;
}

export async function decideTransfer(
  deps: DecideDeps,
  input: TransferFactsInput,
  screening: ScreeningFacts = {},
): Promise<TransferDecision> {
  const versions = await policyRefsFor(deps.pool, input.vaspDid, deps.gatewayDid);
  const active = await compiledVersion(deps.pool, versions.active, input.direction);
  const shadow = versions.shadow && (await compiledVersion(deps.pool, versions.shadow, input.direction));
  const facts = await gatherFacts(deps, input, screening, [active, ...(shadow ? [shadow] : [])]);
  const decision = evaluatePolicy(active, facts);
  const recorded: PolicyFacts = { ...facts, customerJurisdiction: undefined };
  await recordDecision(deps.pool, { ...ids(input), decision, facts: recorded, shadow: false });
  if (shadow) {
    const candidate = evaluatePolicy(shadow, facts);
    await recordDecision(deps.pool, { ...ids(input), decision: candidate, facts: recorded, shadow: true });
  }
  return { decision, facts: withoutUndefined(recorded) };
}

const ids = (input: TransferFactsInput) => ({
  transferId: input.transferId,
  direction: input.direction,
  vaspDid: input.vaspDid,
});

async function gatherFacts(
  deps: DecideDeps,
  input: TransferFactsInput,
  screening: ScreeningFacts,
  policies: CompiledPolicy[],
): Promise<PolicyFacts> {
  const uses = (check: RuleCheck) => policies.some((p) => p.rules.some((r) => r.ruleCheck === check));
  const counterparty = input.counterpartyDid;
  // The review always: a BLOCKED counterparty is never approved, whatever the rules check.
  const [review, jurisdiction, fiat] = await Promise.all([
    counterparty ? reviewOf(deps, input.vaspDid, counterparty) : undefined,
    counterparty && uses('JURISDICTION') ? deps.jurisdictionOf(counterparty) : undefined,
    uses('TRANSACTION_AMOUNT')
      ? deps.toFiat({ asset: input.asset, amount: input.amount, currency: policies[0]!.currency })
      : undefined,
  ]);
  return {
    direction: input.direction,
    vaspDid: input.vaspDid,
    counterpartyDid: counterparty,
    counterpartyReview: review ?? 'UNREVIEWED',
    counterpartyJurisdiction: jurisdiction,
    customerJurisdiction: screening.customerJurisdiction,
    asset: input.asset,
    amount: input.amount,
    amountFiat: fiat?.value,
    priceSource: fiat?.source,
    createdAt: input.createdAt,
    sanctionsHit: screening.sanctionsHit,
    personalDataReadable: screening.personalDataReadable,
  };
}

async function reviewOf(deps: DecideDeps, subsidiaryDid: string, counterpartyDid: string) {
  return (
    deps.reviews?.lookup(subsidiaryDid, counterpartyDid) ??
    (await effectiveReviewFor(deps.pool, subsidiaryDid, counterpartyDid)).reviewValue
  );
}

/** Facts travel in workflow history and audit rows as JSON: unknown facts are left out rather than null. */
function withoutUndefined(facts: PolicyFacts): PolicyFacts {
  return Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== undefined)) as unknown as PolicyFacts;
}
