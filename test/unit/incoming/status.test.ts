import {
  automaticApproval,
  decidedOutcome,
  decisionRequestProblem,
  enterPhase,
  finishedPhase,
  initialIncomingStatus,
  isScreeningHit,
  NETWORK_REASON_MAX,
  networkReason,
  observeNetwork,
  routeRequestProblem,
  screeningCounts,
  screeningHitEntries,
} from '../../../incoming/status';
import type { IncomingStatus } from '../../../incoming/types';
import type { Principal } from '../../../lib/principal';
import type { ScreeningOutcome } from '../../../screening/types';

const subA = 'did:ethr:0xa';
const subB = 'did:ethr:0xb';
const subs = [subA, subB];
const officer: Principal = { kind: 'oidc', subject: 'u-1', name: 'Ada', roles: ['compliance'], credentialId: 'cred-1' };
const now = new Date(Date.UTC(2026, 0, 1));

describe('incoming status: network updates', () => {
  it('moves forward only: an update that arrives after a later status changes nothing', () => {
    const s = initialIncomingStatus('tx-1');
    expect(observeNetwork(s, { status: 'SENT' }, subs)).toBe(true);
    expect(observeNetwork(s, { status: 'ACK' }, subs)).toBe(true);
    expect(observeNetwork(s, { status: 'SENT' }, subs)).toBe(false);
    expect(s.networkStatus).toBe('ACK');
    expect(observeNetwork(s, { status: 'ACCEPTED' }, subs)).toBe(true);
    expect(observeNetwork(s, { status: 'ACK' }, subs)).toBe(false);
    expect(s.networkStatus).toBe('ACCEPTED');
  });

  it('a repeat is not a change; statuses of the same rank follow each other', () => {
    const s = initialIncomingStatus('tx-1');
    observeNetwork(s, { status: 'SENT' }, subs);
    expect(observeNetwork(s, { status: 'SENT' }, subs)).toBe(false);
    expect(observeNetwork(s, { status: 'NOT_READY' }, subs)).toBe(true);
    expect(s.networkStatus).toBe('NOT_READY');
  });

  it('a subsidiary as beneficiary routes the transfer (by the network) unless it is routed already; a stale update does not', () => {
    const s = initialIncomingStatus('tx-1');
    observeNetwork(s, { status: 'SENT', beneficiaryVaspDid: 'did:ethr:0xgateway' }, subs);
    expect(s.subsidiaryDid).toBeUndefined();
    observeNetwork(s, { status: 'ACK' }, subs);
    observeNetwork(s, { status: 'SENT', beneficiaryVaspDid: subA }, subs);
    expect(s.subsidiaryDid).toBeUndefined();
    observeNetwork(s, { status: 'ACK', beneficiaryVaspDid: subA }, subs);
    expect(s).toMatchObject({ subsidiaryDid: subA, routedBy: 'network' });
    observeNetwork(s, { status: 'ACK', beneficiaryVaspDid: subB }, subs);
    expect(s.subsidiaryDid).toBe(subA);

    const routed: IncomingStatus = { ...initialIncomingStatus('tx-2'), routedBy: 'registry' };
    observeNetwork(routed, { status: 'SENT', beneficiaryVaspDid: subB }, subs);
    expect(routed).toMatchObject({ subsidiaryDid: subB, routedBy: 'registry' });
  });
});

describe('incoming status: phases and requests', () => {
  it('entering a phase is recorded in the history', () => {
    const s = initialIncomingStatus('tx-1');
    enterPhase(s, 'routing', now);
    expect(s.phase).toBe('routing');
    expect(s.history).toEqual([{ at: now.toISOString(), event: 'phase:routing', detail: undefined }]);
  });

  it('takes a routing only while waiting for one, to a subsidiary, with a reason and an authenticated caller', () => {
    const s = initialIncomingStatus('tx-1');
    const ok = { subsidiaryDid: subB, reason: 'ticket 42', actor: 'user:u-1', principal: officer };
    expect(routeRequestProblem(s, ok, subs)).toBe('transfer is not waiting to be routed (phase received)');
    s.phase = 'awaiting-route';
    expect(routeRequestProblem(s, ok, subs)).toBeUndefined();
    expect(routeRequestProblem(s, { ...ok, subsidiaryDid: 'did:ethr:0xother' }, subs)).toMatch(
      /is not a subsidiary of the group/,
    );
    expect(routeRequestProblem(s, undefined, subs)).toMatch(/^subsidiaryDid: undefined/);
    expect(routeRequestProblem(s, { ...ok, reason: '  ' }, subs)).toBe('reason: is required');
    expect(routeRequestProblem(s, { ...ok, principal: undefined }, subs)).toMatch(/^principal: is required/);
    expect(routeRequestProblem(s, { ...ok, actor: ' ' }, subs)).toMatch(/^principal: is required/);
  });

  it('takes a decision only under review, approve or decline, with a reason and an authenticated caller', () => {
    const s = initialIncomingStatus('tx-1');
    const ok = { decision: 'decline' as const, reason: 'confirmed match', actor: 'user:u-1', principal: officer };
    expect(decisionRequestProblem(s, ok)).toBe('transfer is not under review (phase received)');
    s.phase = 'awaiting-review';
    expect(decisionRequestProblem(s, ok)).toBeUndefined();
    expect(decisionRequestProblem(s, { ...ok, decision: 'maybe' as never })).toBe(
      'decision: must be approve or decline',
    );
    expect(decisionRequestProblem(s, { ...ok, reason: '' })).toBe('reason: is required');
    expect(decisionRequestProblem(s, { ...ok, principal: undefined })).toMatch(/^principal: is required/);
  });

  it('ends rejected only when rejected; an answered decision is accepted or declined', () => {
    expect(finishedPhase('rejected')).toBe('rejected');
    expect(finishedPhase('closed-by-network')).toBe('completed');
    expect(decidedOutcome(automaticApproval())).toBe('accepted');
    expect(decidedOutcome({ ...automaticApproval(), decision: 'decline' })).toBe('declined');
  });
});

describe('incoming status: screening and the decision', () => {
  const clean: ScreeningOutcome = { screenedNames: 2, nameHits: [], addressHits: [] };

  it('holds for review on a name hit, an address hit, or data that could not be screened', () => {
    expect(isScreeningHit(clean)).toBe(false);
    expect(isScreeningHit({ ...clean, skipped: 'no-personal-data' })).toBe(false);
    expect(isScreeningHit({ ...clean, nameHits: [{ list: 'sdn', entNum: 1, matchedName: 'X', score: 0.9 }] })).toBe(
      true,
    );
    expect(isScreeningHit({ ...clean, addressHits: [{ list: 'sdn', asset: 'ETH', entNum: 2 }] })).toBe(true);
    expect(isScreeningHit({ ...clean, skipped: 'undecryptable' })).toBe(true);
    expect(isScreeningHit({ ...clean, skipped: 'unreadable' })).toBe(true);
  });

  it("audits counts and the lists' entries, never the matched name", () => {
    const hit: ScreeningOutcome = {
      ...clean,
      nameHits: [{ list: 'sdn', entNum: 1, matchedName: 'Vanya Petrov', score: 0.9 }],
      addressHits: [{ list: 'sdn', asset: 'ETH', entNum: null }],
    };
    expect(screeningCounts(hit)).toEqual({ screenedNames: 2, nameHits: 1, addressHits: 1 });
    expect(screeningCounts({ ...clean, skipped: 'unreadable' })).toEqual({
      screenedNames: 2,
      nameHits: 0,
      addressHits: 0,
      skipped: 'unreadable',
    });
    expect(screeningHitEntries(hit)).toEqual([
      { list: 'sdn', entNum: 1, score: 0.9 },
      { list: 'sdn', entNum: null, asset: 'ETH' },
    ]);
    expect(JSON.stringify(screeningHitEntries(hit))).not.toContain('Petrov');
  });

  it("the decline's reason names who declined and fits the network's limit", () => {
    const d = { decision: 'decline' as const, reason: 'confirmed match', actor: 'user:u-1', principal: officer };
    expect(networkReason(d)).toBe('confirmed match (declined by Ada (compliance; oidc u-1; credential cred-1))');
    expect(networkReason({ ...d, principal: undefined })).toBe('confirmed match (declined by user:u-1)');
    const long = networkReason({ ...d, reason: 'x'.repeat(5000) });
    expect(long).toHaveLength(NETWORK_REASON_MAX);
    expect(long.endsWith('(declined by Ada (compliance; oidc u-1; credential cred-1))')).toBe(true);
  });
});
