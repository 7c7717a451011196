import { evaluatePolicy, type CompiledPolicy } from '../../../policy/evaluate';
import { compileRules, ruleListProblems } from '../../../policy/rules';
import { defaultPolicy } from '../../../policy/defaults';
import type { PolicyFacts, PolicyRule } from '../../../policy/types';

const facts = (over: Partial<PolicyFacts> = {}): PolicyFacts => ({
  direction: 'incoming',
  vaspDid: 'did:ethr:0xsub',
  counterpartyDid: 'did:ethr:0xcp',
  counterpartyReview: 'UNREVIEWED',
  counterpartyJurisdiction: 'DE',
  asset: 'ETH',
  amount: '1000000000000000000',
  amountFiat: 500,
  createdAt: '2026-11-28T10:30:00.000Z',
  sanctionsHit: false,
  personalDataReadable: true,
  ...over,
});
const policy = (rules: PolicyRule[]): CompiledPolicy => ({
  ref: { vaspDid: 'did:ethr:0xsub', versionId: 'v1', version: 1, contentHash: 'h' },
  currency: 'USD',
  rules: compileRules(rules),
});
const rule = (
  order: number,
  actionRule: PolicyRule['actionRule'],
  ruleCheck: PolicyRule['ruleCheck'],
  ruleValue: string,
) => ({ order, actionRule, ruleCheck, ruleValue }) as PolicyRule;

describe('evaluatePolicy', () => {
  it('takes the first matching rule by order, whatever the array order', () => {
    const p = policy([rule(2, 'APPROVE', 'ALL', ''), rule(1, 'REJECT', 'JURISDICTION', 'DE,FR')]);
    const d = evaluatePolicy(p, facts());
    expect(d.action).toBe('REJECT');
    expect(d.rule).toEqual(rule(1, 'REJECT', 'JURISDICTION', 'DE,FR'));
    expect(d.reason).toContain('JURISDICTION DE,FR matched DE');
    expect(evaluatePolicy(p, facts({ counterpartyJurisdiction: 'CH' })).action).toBe('APPROVE');
  });

  it('sends to a person when nothing matches', () => {
    const d = evaluatePolicy(policy([rule(1, 'APPROVE', 'VASP', 'did:ethr:0xother')]), facts());
    expect(d).toMatchObject({ action: 'SEND_TO_INBOX', reason: 'no rule matched' });
    expect(d.rule).toBeUndefined();
  });

  it('compares amounts in the policy currency, and sends to a person when the price is unknown', () => {
    const p = policy([rule(1, 'SEND_TO_INBOX', 'TRANSACTION_AMOUNT', '>=1000'), rule(2, 'APPROVE', 'ALL', '')]);
    expect(evaluatePolicy(p, facts({ amountFiat: 999.99 })).action).toBe('APPROVE');
    expect(evaluatePolicy(p, facts({ amountFiat: 1000 })).action).toBe('SEND_TO_INBOX');
    const unknown = evaluatePolicy(p, facts({ amountFiat: undefined }));
    expect(unknown).toMatchObject({ action: 'SEND_TO_INBOX', unknownFact: 'a price for the asset' });
  });

  it('matches reviews, assets, sanctions results and creation-time windows across midnight', () => {
    expect(
      evaluatePolicy(
        policy([rule(1, 'APPROVE', 'REVIEWED_VASP_LIST', 'TRUSTED')]),
        facts({ counterpartyReview: 'TRUSTED' }),
      ).action,
    ).toBe('APPROVE');
    expect(evaluatePolicy(policy([rule(1, 'REJECT', 'ASSET', 'BTC,XMR')]), facts({ asset: 'XMR' })).action).toBe(
      'REJECT',
    );
    expect(evaluatePolicy(policy([rule(1, 'NOT_READY', 'SANCTION_LIST_CHECK', 'NO_HIT')]), facts()).action).toBe(
      'NOT_READY',
    );
    const night = policy([
      rule(1, 'SEND_TO_INBOX', 'TRANSACTION_CREATION_TIME', '22:00-06:00'),
      rule(2, 'APPROVE', 'ALL', ''),
    ]);
    expect(evaluatePolicy(night, facts({ createdAt: '2026-11-28T23:10:00Z' })).action).toBe('SEND_TO_INBOX');
    expect(evaluatePolicy(night, facts({ createdAt: '2026-11-28T05:59:00Z' })).action).toBe('SEND_TO_INBOX');
    expect(evaluatePolicy(night, facts({ createdAt: '2026-11-28T06:00:00Z' })).action).toBe('APPROVE');
  });

  it('never approves a sanctions hit, unreadable personal data or a BLOCKED counterparty', () => {
    const approve = policy([rule(1, 'APPROVE', 'ALL', '')]);
    expect(evaluatePolicy(approve, facts({ sanctionsHit: true }))).toMatchObject({
      action: 'SEND_TO_INBOX',
      override: 'sanctions-hit',
    });
    expect(evaluatePolicy(policy([rule(1, 'REJECT', 'ALL', '')]), facts({ sanctionsHit: true })).action).toBe(
      'SEND_TO_INBOX',
    );
    expect(evaluatePolicy(approve, facts({ personalDataReadable: false })).override).toBe('unreadable-personal-data');
    expect(evaluatePolicy(approve, facts({ counterpartyReview: 'BLOCKED' })).override).toBe('blocked-counterparty');
    expect(
      evaluatePolicy(
        policy([rule(1, 'REJECT', 'REVIEWED_VASP_LIST', 'BLOCKED')]),
        facts({ counterpartyReview: 'BLOCKED' }),
      ).action,
    ).toBe('REJECT');
  });

  it('defaults to approve unless screening hit, as before policies', () => {
    expect(evaluatePolicy(defaultPolicy('incoming'), facts()).action).toBe('APPROVE');
    expect(evaluatePolicy(defaultPolicy('incoming'), facts({ sanctionsHit: true })).action).toBe('SEND_TO_INBOX');
  });
});

describe('ruleListProblems', () => {
  it('names the field and the rule of each problem', () => {
    const problems = ruleListProblems(
      [
        { order: 1, actionRule: 'APPROVE', ruleCheck: 'NOPE', ruleValue: '' },
        { order: 1, actionRule: 'APPROVE', ruleCheck: 'TRANSACTION_AMOUNT', ruleValue: 'lots' },
        { order: 2, actionRule: 'MAYBE', ruleCheck: 'JURISDICTION', ruleValue: 'DE,XK' },
        { order: 3, actionRule: 'REJECT', ruleCheck: 'VASP', ruleValue: 42 },
      ],
      'incoming',
    );
    expect(problems.map((p) => p.field)).toEqual([
      'incoming[0].ruleCheck',
      'incoming[1].order',
      'incoming[1].ruleValue',
      'incoming[2].actionRule',
      'incoming[2].ruleValue',
      'incoming[3].ruleValue',
    ]);
    expect(problems[1]!.rule).toContain('unique');
    expect(problems[4]!.rule).toContain('"XK" is not');
  });

  it('refuses more than 1,000 rules in one direction', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => rule(i, 'APPROVE', 'ALL', ''));
    expect(ruleListProblems(many, 'outgoing')).toEqual([
      { field: 'outgoing', rule: 'at most 1000 rules per direction' },
    ]);
    expect(ruleListProblems(many.slice(0, 1000), 'outgoing')).toEqual([]);
  });
});
