/**
 * Simulation: given facts evaluated by a VASP's active version (its own, else the group's, else the default) or by a
 * candidate document, answering the decision and the facts it was taken on. Facts not given are looked up as a live
 * decision would (the counterparty's review; its jurisdiction and the price only when a rule needs them).
 */
import type { Pool } from 'pg';
import type { GroupConfig } from '../lib/group';
import type { EffectiveReviewValue } from '../counterparties/types';
import { effectiveReviewFor } from '../counterparties/store';
import { candidateVersion, type FactSources } from './backtest';
import { compiledPolicy } from './compiled';
import { evaluatePolicy } from './evaluate';
import { policiesFor } from './store';
import type { Direction, PolicyDecision, PolicyDocument, PolicyFacts } from './types';

export interface SimulateDeps extends Partial<FactSources> {
  pool: Pool;
  group: GroupConfig;
}

/** What a caller states; the VASP is the policy's. */
export interface SimulatedFacts {
  direction: Direction;
  counterpartyDid?: string;
  counterpartyReview?: EffectiveReviewValue;
  counterpartyJurisdiction?: string;
  customerJurisdiction?: string;
  asset: string;
  amount: string;
  amountFiat?: number;
  createdAt?: string;
  riskScore?: number;
  sanctionsHit?: boolean;
  personalDataReadable?: boolean;
}

export async function simulatePolicy(
  deps: SimulateDeps,
  request: { vaspDid: string; facts: SimulatedFacts; candidate?: PolicyDocument },
): Promise<{ decision: PolicyDecision; facts: PolicyFacts }> {
  const { vaspDid, facts: given } = request;
  const version = request.candidate
    ? candidateVersion(vaspDid, request.candidate)
    : (await policiesFor(deps.pool, vaspDid, deps.group.gatewayDid ?? vaspDid)).active;
  const policy = compiledPolicy(version, given.direction);
  const uses = (check: string) => policy.rules.some((r) => r.ruleCheck === check);
  const counterparty = given.counterpartyDid;
  const [review, jurisdiction, fiat] = await Promise.all([
    given.counterpartyReview ?? (counterparty && deps.reviewOf ? deps.reviewOf(vaspDid, counterparty) : undefined),
    given.counterpartyJurisdiction ??
      (counterparty && deps.jurisdictionOf && uses('JURISDICTION') ? deps.jurisdictionOf(counterparty) : undefined),
    given.amountFiat !== undefined
      ? { value: given.amountFiat, source: 'given' }
      : deps.toFiat && uses('TRANSACTION_AMOUNT')
        ? deps.toFiat({ asset: given.asset, amount: given.amount, currency: policy.currency })
        : undefined,
  ]);
  const facts: PolicyFacts = {
    direction: given.direction,
    vaspDid,
    counterpartyDid: counterparty,
    counterpartyReview: review ?? 'UNREVIEWED',
    counterpartyJurisdiction: jurisdiction,
    customerJurisdiction: given.customerJurisdiction,
    asset: given.asset,
    amount: given.amount,
    amountFiat: fiat?.value,
    priceSource: fiat?.source,
    createdAt: given.createdAt ?? new Date().toISOString(),
    riskScore: given.riskScore,
    sanctionsHit: given.sanctionsHit,
    personalDataReadable: given.personalDataReadable,
  };
  return { decision: evaluatePolicy(policy, facts), facts };
}

/** Reviews as the live decision reads them: the subsidiary's own, else the group's, else unreviewed. */
export function storedReviews(pool: Pool): FactSources['reviewOf'] {
  return async (subsidiaryDid, counterpartyDid) =>
    (await effectiveReviewFor(pool, subsidiaryDid, counterpartyDid)).reviewValue;
}
