import {
  applyStatus,
  atDeadline,
  expiryOutcome,
  initialTracking,
  isStale,
  settleCancelled,
  type StatusTracking,
} from '../../../outgoing/status';
import { initialState, type OutgoingTransferInput, type TransferState } from '../../../outgoing/types';

const input: OutgoingTransferInput = {
  id: 'ref-1',
  originatorVaspDid: 'did:ethr:0x1',
  beneficiaryVaspDid: 'did:ethr:0x2',
  asset: 'ETH',
  amount: '1',
  answerDeadlineMs: 3000,
  pollIntervalMs: 1000,
  report: false,
};
const t0 = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));
const at = (s: number) => new Date(t0.getTime() + s * 1000);
const iso = (s: number) => at(s).toISOString();

/** A transfer whose transaction exists at the network (SENT), waiting for the answer with the deadline running. */
function waiting(): { state: TransferState; tracking: StatusTracking } {
  const state = initialState(input, 'outgoing-ref-1', t0);
  const tracking = initialTracking();
  applyStatus(state, tracking, { status: 'PREPARED', source: 'orchestrator' }, at(1));
  applyStatus(state, tracking, { status: 'SENT', source: 'network', updatedAt: iso(1) }, at(1));
  tracking.deadline = 'running';
  return { state, tracking };
}
const statuses = (s: TransferState) => s.history.map((h) => h.status);

describe('outgoing status: transitions', () => {
  it('each change is a history entry at the time given, and a final status ends the transfer', () => {
    const { state, tracking } = waiting();
    expect(applyStatus(state, tracking, { status: 'ACK', source: 'webhook', updatedAt: iso(2) }, at(2))).toBe(true);
    expect(state).toMatchObject({ status: 'ACK', final: false });
    expect(applyStatus(state, tracking, { status: 'ACCEPTED', source: 'poll', updatedAt: iso(3) }, at(3))).toBe(true);
    expect(state.final).toBe(true);
    expect(state.history).toEqual([
      { status: 'RECEIVED', at: t0.toISOString(), source: 'request' },
      { status: 'PREPARED', at: iso(1), source: 'orchestrator' },
      { status: 'SENT', at: iso(1), source: 'network' },
      { status: 'ACK', at: iso(2), source: 'webhook' },
      { status: 'ACCEPTED', at: iso(3), source: 'poll' },
    ]);
  });

  it('a repeat changes nothing, and nothing follows a final status', () => {
    const { state, tracking } = waiting();
    expect(applyStatus(state, tracking, { status: 'SENT', source: 'webhook' }, at(2))).toBe(false);
    applyStatus(state, tracking, { status: 'DECLINED', source: 'webhook' }, at(2));
    expect(applyStatus(state, tracking, { status: 'ACCEPTED', source: 'poll' }, at(3))).toBe(false);
    expect(statuses(state)).toEqual(['RECEIVED', 'PREPARED', 'SENT', 'DECLINED']);
  });

  it("the workflow's own FAILED and EXPIRED end the transfer; PREPARED does not", () => {
    const state = initialState(input, 'w', t0);
    const tracking = initialTracking();
    applyStatus(state, tracking, { status: 'PREPARED', source: 'orchestrator' }, at(1));
    expect(state.final).toBe(false);
    applyStatus(state, tracking, { status: 'FAILED', source: 'orchestrator' }, at(1));
    expect(state).toMatchObject({ status: 'FAILED', final: true });
  });
});

describe('outgoing status: updates out of order', () => {
  it("an update older than the newest applied (by the network's updatedAt) is ignored", () => {
    const { state, tracking } = waiting();
    applyStatus(state, tracking, { status: 'NOT_READY', source: 'webhook', updatedAt: iso(3) }, at(3));
    expect(applyStatus(state, tracking, { status: 'SENT', source: 'webhook', updatedAt: iso(2) }, at(4))).toBe(false);
    expect(state.status).toBe('NOT_READY');
    expect(tracking.networkUpdatedAt).toBe(at(3).getTime());
  });

  it('a newer updatedAt moves between statuses of the same progress, both ways', () => {
    const { state, tracking } = waiting();
    applyStatus(state, tracking, { status: 'ACK', source: 'webhook', updatedAt: iso(3) }, at(3));
    expect(applyStatus(state, tracking, { status: 'NOT_READY', source: 'webhook', updatedAt: iso(4) }, at(4))).toBe(
      true,
    );
    expect(applyStatus(state, tracking, { status: 'ACK', source: 'webhook', updatedAt: iso(2) }, at(5))).toBe(false);
    expect(state.status).toBe('NOT_READY');
  });

  it('without a timestamp (or on a tie) a status that has come less far is the older one', () => {
    const { state, tracking } = waiting();
    applyStatus(state, tracking, { status: 'ACK', source: 'webhook' }, at(2));
    expect(applyStatus(state, tracking, { status: 'SENT', source: 'poll' }, at(3))).toBe(false);
    expect(isStale({ status: 'ACK' }, { networkUpdatedAt: at(2).getTime() }, 'SENT', at(2).getTime())).toBe(true);
    expect(isStale({ status: 'ACK' }, { networkUpdatedAt: at(2).getTime() }, 'SENT', at(3).getTime())).toBe(false);
  });

  it('a final status is never stale, however old its timestamp', () => {
    const { state, tracking } = waiting();
    applyStatus(state, tracking, { status: 'ACK', source: 'webhook', updatedAt: iso(5) }, at(5));
    expect(applyStatus(state, tracking, { status: 'DECLINED', source: 'webhook', updatedAt: iso(1) }, at(6))).toBe(
      true,
    );
    expect(state).toMatchObject({ status: 'DECLINED', final: true });
  });

  it("the workflow's own statuses are never stale", () => {
    expect(isStale({ status: 'ACK' }, { networkUpdatedAt: 10 }, 'EXPIRED', 1)).toBe(false);
  });
});

describe('outgoing status: the answer deadline', () => {
  it('a CANCELLED before the transaction exists is applied as it is', () => {
    const state = initialState(input, 'w', t0);
    const tracking = initialTracking();
    expect(applyStatus(state, tracking, { status: 'CANCELLED', source: 'webhook' }, at(1))).toBe(true);
    expect(state).toMatchObject({ status: 'CANCELLED', final: true });
  });

  it("a CANCELLED while the deadline runs is held, and settled as someone else's when the deadline still runs", () => {
    const { state, tracking } = waiting();
    expect(applyStatus(state, tracking, { status: 'CANCELLED', source: 'webhook' }, at(2))).toBe(false);
    expect(state.status).toBe('SENT');
    expect(tracking.cancelledHeard).toBe('webhook');
    // A second one keeps the first source.
    applyStatus(state, tracking, { status: 'CANCELLED', source: 'poll' }, at(2));
    expect(tracking.cancelledHeard).toBe('webhook');
    expect(atDeadline(state, tracking)).toBe('none');
    expect(settleCancelled(state, tracking, at(3))).toBe(true);
    expect(state).toMatchObject({ status: 'CANCELLED', final: true });
    expect(state.history.at(-1)).toEqual({ status: 'CANCELLED', at: iso(3), source: 'webhook' });
  });

  it("a held CANCELLED whose check comes back after the deadline fired is the deadline's: EXPIRED", () => {
    const { state, tracking } = waiting();
    applyStatus(state, tracking, { status: 'CANCELLED', source: 'webhook' }, at(2));
    tracking.deadline = 'passed';
    expect(settleCancelled(state, tracking, at(3))).toBe(false);
    const next = atDeadline(state, tracking);
    expect(next).toEqual({ expire: { status: 'EXPIRED', source: 'deadline: cancelled at the network (webhook)' } });
    applyStatus(state, tracking, (next as { expire: { status: string; source: string } }).expire, at(3));
    expect(state).toMatchObject({ status: 'EXPIRED', final: true });
  });

  it('after the deadline, with nothing heard, the transaction is cancelled at the network; its CANCELLED means EXPIRED', () => {
    const { state, tracking } = waiting();
    tracking.deadline = 'passed';
    expect(atDeadline(state, tracking)).toBe('cancel-at-network');
    expect(applyStatus(state, tracking, { status: 'CANCELLED', source: 'webhook' }, at(4))).toBe(true);
    expect(state.history.at(-1)).toEqual({
      status: 'EXPIRED',
      at: iso(4),
      source: 'deadline: cancelled at the network (webhook)',
    });
  });

  it("the cancellation's answer: EXPIRED when cancelled, the counterparty's answer when it came first, EXPIRED when unreachable", () => {
    expect(expiryOutcome({ status: 'CANCELLED', cancelled: true })).toEqual({
      status: 'EXPIRED',
      source: 'deadline: cancelled at the network',
    });
    expect(expiryOutcome({ status: 'ACCEPTED', cancelled: false })).toEqual({ status: 'ACCEPTED', source: 'network' });
    expect(expiryOutcome('unreachable')).toMatchObject({
      status: 'EXPIRED',
      source: expect.stringMatching(/may still be open/),
    });
    // Already cancelled by someone else before the deadline's call: still the deadline's outcome.
    const { state, tracking } = waiting();
    tracking.deadline = 'passed';
    applyStatus(state, tracking, expiryOutcome({ status: 'CANCELLED', cancelled: false }), at(4));
    expect(state.history.at(-1)).toMatchObject({
      status: 'EXPIRED',
      source: 'deadline: cancelled at the network (network)',
    });
  });

  it("once someone else's cancellation is settled, a passed deadline does nothing", () => {
    const { state, tracking } = waiting();
    applyStatus(state, tracking, { status: 'CANCELLED', source: 'webhook' }, at(2));
    settleCancelled(state, tracking, at(3));
    tracking.deadline = 'passed';
    expect(atDeadline(state, tracking)).toBe('none');
  });
});
