/**
 * Backtest: a candidate policy run over the stored transfers of a range beside the version that decided them, from the
 * projection's metadata and screening results (never personal data). A transfer a policy decided keeps its recorded
 * decision and facts (what was known then); an older one is decided again by the active version on what the projection
 * holds, with today's counterparty reviews.
 */
import type { Pool } from 'pg';
import { transferFactsPage, type TransferFacts } from '../transfer-view/facts-store';
import type { GroupConfig } from '../lib/group';
import { NotFoundError } from '../lib/errors';
import { compiledPolicy } from './compiled';
import { evaluatePolicy } from './evaluate';
import { latestDecisions, ownPolicies, policiesFor, policyContentHash, policyVersion } from './store';
import type {
  ActionRule,
  Direction,
  PolicyDecision,
  PolicyDocument,
  PolicyFacts,
  PolicyVersion,
  RuleCheck,
} from './types';
import type { EffectiveReviewValue } from '../counterparties/types';

export const MAX_BACKTEST_DAYS = 366;
const PAGE = 2000;
const MAX_EXAMPLES = 20;

export interface FactSources {
  /** The review that applies to a subsidiary's transfers with a counterparty (its own, else the group's). */
  reviewOf(subsidiaryDid: string, counterpartyDid: string): Promise<EffectiveReviewValue>;
  /** The counterparty VASP's incorporation country; absent: unknown (a JURISDICTION rule then sends to a person). */
  jurisdictionOf?(vaspDid: string): Promise<string | undefined>;
  /** The amount in the policy's currency; absent: unknown (an amount rule then sends to a person). */
  toFiat?(query: {
    asset: string;
    amount: string;
    currency: string;
  }): Promise<{ value: number; source: string } | undefined>;
}

export interface BacktestDeps extends FactSources {
  pool: Pool;
  group: GroupConfig;
}

export interface BacktestRequest {
  vaspDid: string;
  candidate: { document: PolicyDocument } | { versionId: string };
  from: Date;
  to: Date;
  direction?: Direction;
}

export interface BacktestChange {
  transferId: string;
  direction: Direction;
  createdAt: string;
  from: ActionRule;
  to: ActionRule;
  ruleBefore: number | null;
  ruleAfter: number | null;
}

export interface BacktestResult {
  transfers: number;
  changed: number;
  /** `"APPROVE→SEND_TO_INBOX": n`, one entry per change that happened. */
  byChange: Record<string, number>;
  examples: BacktestChange[];
  /** The versions compared (null: the built-in default). */
  active: PolicyDecision['policy'];
  candidate: PolicyDecision['policy'];
  /** How many transfers kept their recorded decision rather than being decided again. */
  recorded: number;
}

/** A document not saved yet, as a version nobody can activate: its hash names it in the answer. */
export function candidateVersion(vaspDid: string, document: PolicyDocument): PolicyVersion {
  return {
    ...document,
    id: 'candidate',
    vaspDid,
    version: 0,
    contentHash: policyContentHash(document),
    author: '',
    createdAt: new Date(0).toISOString(),
    note: '',
  };
}

/** The group's VASPs whose transfers a VASP's policy decides: the gateway's covers every member without its own. */
export async function coveredVasps(pool: Pool, group: GroupConfig, vaspDid: string): Promise<string[]> {
  if (vaspDid !== group.gatewayDid) return [vaspDid];
  const members = [vaspDid, ...group.subsidiaryDids.filter((d) => d !== vaspDid)];
  const own = await Promise.all(members.map(async (d) => d === vaspDid || !(await ownPolicies(pool, d)).active));
  return members.filter((_, i) => own[i]);
}

export async function backtestPolicy(deps: BacktestDeps, request: BacktestRequest): Promise<BacktestResult> {
  const gateway = deps.group.gatewayDid ?? request.vaspDid;
  const active = (await policiesFor(deps.pool, request.vaspDid, gateway)).active;
  const candidate =
    'document' in request.candidate
      ? candidateVersion(request.vaspDid, request.candidate.document)
      : await policyVersion(deps.pool, request.vaspDid, request.candidate.versionId);
  if (!candidate)
    throw new NotFoundError(`no version ${(request.candidate as { versionId: string }).versionId} of this policy`, {
      field: 'candidate',
      rule: "must be a version of this VASP's policy",
    });
  const vasps = await coveredVasps(deps.pool, deps.group, request.vaspDid);
  const result: BacktestResult = {
    transfers: 0,
    changed: 0,
    byChange: {},
    examples: [],
    active: compiledPolicy(active, 'incoming').ref,
    candidate: compiledPolicy(candidate, 'incoming').ref,
    recorded: 0,
  };
  const facts = factBuilder(deps, [active, candidate]);
  let after: { createdAt: string; workflowId: string } | undefined;
  for (;;) {
    const page = await transferFactsPage(
      deps.pool,
      { vaspDids: vasps, direction: request.direction, from: request.from, to: request.to },
      PAGE,
      after,
    );
    if (page.length === 0) break;
    const recorded = await latestDecisions(
      deps.pool,
      page.map((t) => t.id),
    );
    for (const transfer of page) {
      const direction = transfer.direction;
      const before = compiledPolicy(active, direction);
      const proposed = compiledPolicy(candidate, direction);
      const known = recorded.get(`${transfer.id}:${direction}`);
      const beforeFacts = known?.facts ?? (await facts.build(transfer, before.currency));
      const from = known?.decision ?? evaluatePolicy(before, beforeFacts);
      // Amounts are compared in each policy's own currency.
      const afterFacts =
        proposed.currency === before.currency
          ? beforeFacts
          : { ...beforeFacts, ...(await facts.price(transfer, proposed.currency)) };
      const to = evaluatePolicy(proposed, afterFacts);
      if (known) result.recorded += 1;
      result.transfers += 1;
      if (from.action === to.action) continue;
      result.changed += 1;
      const change = `${from.action}→${to.action}`;
      result.byChange[change] = (result.byChange[change] ?? 0) + 1;
      if (result.examples.length < MAX_EXAMPLES)
        result.examples.push({
          transferId: transfer.id,
          direction,
          createdAt: transfer.createdAt,
          from: from.action,
          to: to.action,
          ruleBefore: from.rule?.order ?? null,
          ruleAfter: to.rule?.order ?? null,
        });
    }
    const last = page[page.length - 1]!;
    after = { createdAt: last.createdAt, workflowId: last.workflowId };
    if (page.length < PAGE) break;
  }
  return result;
}

/**
 * Builds a transfer's facts from the projection, asking for a jurisdiction or a price only when a compared version
 * has a rule that needs it, and each counterparty's review and jurisdiction once per run.
 */
function factBuilder(sources: FactSources, versions: (PolicyVersion | undefined)[]) {
  const uses = (check: RuleCheck) =>
    versions.some((v) => v && [...v.incoming, ...v.outgoing].some((r) => r.ruleCheck === check));
  const needJurisdiction = uses('JURISDICTION') && sources.jurisdictionOf;
  const needFiat = uses('TRANSACTION_AMOUNT') && sources.toFiat;
  const reviews = new Map<string, Promise<EffectiveReviewValue>>();
  const jurisdictions = new Map<string, Promise<string | undefined>>();
  const price = async (t: TransferFacts, currency: string) => {
    const fiat =
      needFiat && t.asset && t.amount
        ? await sources.toFiat!({ asset: t.asset, amount: t.amount, currency })
        : undefined;
    return { amountFiat: fiat?.value, priceSource: fiat?.source };
  };
  const build = async (t: TransferFacts, currency: string): Promise<PolicyFacts> => {
    const vaspDid = t.subsidiaryDid!;
    const counterparty = t.counterpartyDid ?? undefined;
    const reviewKey = `${vaspDid} ${counterparty}`;
    if (counterparty && !reviews.has(reviewKey)) reviews.set(reviewKey, sources.reviewOf(vaspDid, counterparty));
    if (counterparty && needJurisdiction && !jurisdictions.has(counterparty))
      jurisdictions.set(counterparty, sources.jurisdictionOf!(counterparty));
    const [review, jurisdiction, fiat] = await Promise.all([
      counterparty ? reviews.get(reviewKey) : undefined,
      counterparty ? jurisdictions.get(counterparty) : undefined,
      price(t, currency),
    ]);
    return {
      direction: t.direction,
      vaspDid,
      counterpartyDid: counterparty,
      counterpartyReview: review ?? 'UNREVIEWED',
      counterpartyJurisdiction: jurisdiction,
      asset: t.asset ?? '',
      amount: t.amount ?? '0',
      ...fiat,
      createdAt: t.createdAt,
      sanctionsHit: t.sanctionsHit ?? undefined,
      personalDataReadable: t.personalDataReadable ?? undefined,
    };
  };
  return { build, price };
}
