import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { createPool } from '../../db/pool';
import { withTransaction } from '../../db/transaction';
import { compiledPolicy } from '../../policy/compiled';
import { evaluatePolicy } from '../../policy/evaluate';
import {
  activatePolicyVersion,
  decisionsOf,
  policiesFor,
  policyHistory,
  recordDecision,
  savePolicyVersion,
  setShadowVersion,
} from '../../policy/store';
import type { PolicyDocument, PolicyFacts } from '../../policy/types';

// Only the database: this suite needs neither Temporal nor the sandbox.
const randomDid = () => `did:ethr:0x${randomBytes(20).toString('hex')}`;

const doc = (incoming: PolicyDocument['incoming']): PolicyDocument => ({ currency: 'EUR', incoming, outgoing: [] });
const approveAll = doc([{ order: 1, actionRule: 'APPROVE', ruleCheck: 'ALL', ruleValue: '' }]);
const rejectSome = doc([
  { order: 5, actionRule: 'APPROVE', ruleCheck: 'ALL', ruleValue: '' },
  { order: 2, actionRule: 'REJECT', ruleCheck: 'REVIEWED_VASP_LIST', ruleValue: 'BLOCKED,MANUAL' },
]);

describe('policy store: immutable versions, active and shadow, the group fallback, recorded decisions', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(process.env.TEST_DATABASE_URL!, 'orchestrator');
  });
  afterAll(async () => pool?.end());

  it('numbers versions per VASP, hashes the canonical document, and returns the latest for the same document', async () => {
    const vasp = randomDid();
    const v1 = await savePolicyVersion(pool, { vaspDid: vasp, document: approveAll, author: 'oidc:a', note: 'first' });
    const v2 = await savePolicyVersion(pool, { vaspDid: vasp, document: rejectSome, author: 'oidc:b', note: 'second' });
    expect([v1.version, v2.version]).toEqual([1, 2]);
    expect(v2.incoming.map((r) => r.order)).toEqual([2, 5]);
    expect(v1.contentHash).toMatch(/^[0-9a-f]{64}$/);
    // The same rules in another order are the same document.
    const reordered = { ...rejectSome, incoming: [...rejectSome.incoming].reverse() };
    const again = await savePolicyVersion(pool, { vaspDid: vasp, document: reordered, author: 'x', note: 'again' });
    expect(again).toEqual(v2);
    // Going back to v1's rules is a new version with v1's hash.
    const v3 = await savePolicyVersion(pool, { vaspDid: vasp, document: approveAll, author: 'oidc:a', note: 'back' });
    expect(v3.version).toBe(3);
    expect(v3.contentHash).toBe(v1.contentHash);
    expect((await policyHistory(pool, vasp)).map((v) => v.version)).toEqual([3, 2, 1]);
    await expect(pool.query(`update policy_versions set note = 'changed' where id = $1`, [v1.id])).rejects.toThrow(
      /immutable/,
    );
  });

  it("a subsidiary without its own policy uses the group's; its own wins; shadow follows the deciding owner", async () => {
    const gateway = randomDid();
    const sub = randomDid();
    expect(await policiesFor(pool, sub, gateway)).toEqual({});
    const g1 = await savePolicyVersion(pool, { vaspDid: gateway, document: approveAll, author: 'a', note: '' });
    const g2 = await savePolicyVersion(pool, { vaspDid: gateway, document: rejectSome, author: 'a', note: '' });
    await activatePolicyVersion(pool, gateway, g1.id, 'a');
    await setShadowVersion(pool, gateway, g2.id, 'a');
    expect(await policiesFor(pool, sub, gateway)).toEqual({ active: g1, shadow: g2 });
    expect(await policiesFor(pool, gateway, gateway)).toEqual({ active: g1, shadow: g2 });

    const s1 = await savePolicyVersion(pool, { vaspDid: sub, document: rejectSome, author: 'b', note: '' });
    // A version is activated only for its own VASP.
    await expect(activatePolicyVersion(pool, sub, g1.id, 'b')).rejects.toThrow(/not one of/);
    await activatePolicyVersion(pool, sub, s1.id, 'b');
    expect(await policiesFor(pool, sub, gateway)).toEqual({ active: s1 });
    await setShadowVersion(pool, gateway, null, 'a');
    expect(await policiesFor(pool, gateway, gateway)).toEqual({ active: g1 });
  });

  it('saves and activates in the caller’s transaction: a rollback leaves nothing', async () => {
    const vasp = randomDid();
    await expect(
      withTransaction(pool, async (tx) => {
        const v = await savePolicyVersion(tx, { vaspDid: vasp, document: approveAll, author: 'a', note: '' });
        await activatePolicyVersion(tx, vasp, v.id, 'a');
        throw new Error('audit failed');
      }),
    ).rejects.toThrow('audit failed');
    expect(await policyHistory(pool, vasp)).toEqual([]);
    expect(await policiesFor(pool, vasp, vasp)).toEqual({});
  });

  it('records active and shadow decisions with their facts, compiled once per content', async () => {
    const vasp = randomDid();
    const v = await savePolicyVersion(pool, { vaspDid: vasp, document: rejectSome, author: 'a', note: '' });
    const compiled = compiledPolicy(v, 'incoming');
    expect(compiledPolicy(v, 'incoming').rules).toBe(compiled.rules);
    expect(compiled.ref).toEqual({ vaspDid: vasp, versionId: v.id, version: 1, contentHash: v.contentHash });
    expect(compiledPolicy(undefined, 'incoming').ref).toBeNull();
    const facts: PolicyFacts = {
      direction: 'incoming',
      vaspDid: vasp,
      counterpartyDid: randomDid(),
      counterpartyReview: 'MANUAL',
      asset: 'ETH',
      amount: '1000',
      createdAt: new Date().toISOString(),
      sanctionsHit: false,
    };
    const decision = evaluatePolicy(compiled, facts);
    expect(decision.action).toBe('REJECT');
    const transferId = `t-${Date.now()}`;
    await recordDecision(pool, { transferId, direction: 'incoming', vaspDid: vasp, decision, facts, shadow: false });
    const other = evaluatePolicy(compiledPolicy(undefined, 'incoming'), facts);
    await recordDecision(pool, {
      transferId,
      direction: 'incoming',
      vaspDid: vasp,
      decision: other,
      facts,
      shadow: true,
    });
    const recorded = await decisionsOf(pool, transferId);
    expect(recorded.map((d) => [d.shadow, d.decision.action])).toEqual([
      [false, 'REJECT'],
      [true, 'APPROVE'],
    ]);
    expect(recorded[0]!.facts).toEqual(facts);
    expect(recorded[0]!.decision).toEqual(decision);
  });
});
