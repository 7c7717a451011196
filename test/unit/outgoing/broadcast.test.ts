import { broadcastDue, ruleLabel } from '../../../outgoing/status';
import type { BroadcastRule } from '../../../outgoing/types';
import { broadcastRule, loadTransferConfig } from '../../../outgoing/config';
import { ConfigError } from '../../../lib/errors';

describe('the broadcast rule (issue 23 item 5)', () => {
  const onAccepted: BroadcastRule = { when: 'on-accepted' };
  const atOnce: BroadcastRule = { when: 'at-once' };
  const after: BroadcastRule = { when: 'after-timeout', afterMs: 600_000 };
  /** A transfer's state; `sent`: the network's transaction exists. */
  const state = (status: string, final = false, sent = true) => ({
    status,
    final,
    transactionId: sent ? 'tx-1' : undefined,
  });

  it('announces nothing before the network has the data (held, waiting for a proof, prepared)', () => {
    for (const rule of [onAccepted, atOnce, after])
      for (const status of ['RECEIVED', 'HELD', 'AWAITING_PROOF', 'PREPARED'])
        expect(broadcastDue(rule, state(status, false, false), true)).toBeUndefined();
  });

  it('on-accepted waits for a final status: ACCEPTED releases, any other halts', () => {
    expect(broadcastDue(onAccepted, state('SENT'), true)).toBeUndefined();
    expect(broadcastDue(onAccepted, state('ACCEPTED', true), false)?.event).toBe('transfer.release');
    for (const s of ['REJECTED', 'DECLINED', 'CANCELLED', 'EXPIRED'])
      expect(broadcastDue(onAccepted, state(s, true), false)).toMatchObject({
        event: 'transfer.halt',
        reason: `the transfer ended ${s}`,
      });
    // Ended before the network had it: refused or failed.
    expect(broadcastDue(onAccepted, state('REFUSED', true, false), false)?.event).toBe('transfer.halt');
  });

  it('at-once releases once the transaction exists; after-timeout once its timer fired', () => {
    expect(broadcastDue(atOnce, state('SENT'), false)).toMatchObject({ event: 'transfer.release', rule: 'at-once' });
    expect(broadcastDue(after, state('ACK'), false)).toBeUndefined();
    expect(broadcastDue(after, state('ACK'), true)).toMatchObject({
      event: 'transfer.release',
      rule: 'after-timeout:10m',
      reason: 'no final answer within 10m of sending the Travel Rule data',
    });
    expect(broadcastDue(after, state('REJECTED', true), false)?.event).toBe('transfer.halt');
  });

  it('announces once: nothing follows a decision', () => {
    const decided = {
      ...state('REJECTED', true),
      broadcast: { event: 'transfer.release' as const, reason: '', rule: '', at: '' },
    };
    expect(broadcastDue(atOnce, decided, true)).toBeUndefined();
  });

  it('reads TRANSFER_BROADCAST and TRANSFER_BROADCAST_BY_SUBSIDIARY; refuses what they cannot be, naming the variable', () => {
    expect(loadTransferConfig({}).broadcast).toEqual({ rule: onAccepted, bySubsidiary: {} });
    expect(loadTransferConfig({}).custodyCallbacks).toBe(false);
    expect(loadTransferConfig({}, { callbackUrl: 'https://custody.internal' }).custodyCallbacks).toBe(true);
    const did = 'did:ethr:0x1111111111111111111111111111111111111111';
    expect(
      loadTransferConfig({
        TRANSFER_BROADCAST: 'after-timeout:90s',
        TRANSFER_BROADCAST_BY_SUBSIDIARY: JSON.stringify({ [did]: 'at-once' }),
      }).broadcast,
    ).toEqual({ rule: { when: 'after-timeout', afterMs: 90_000 }, bySubsidiary: { [did]: atOnce } });
    expect(ruleLabel({ when: 'after-timeout', afterMs: 90_000 })).toBe('after-timeout:90s');
    for (const bad of ['soon', 'after-timeout', 'after-timeout:0s', 'after-timeout:10 minutes', 'at once'])
      expect(() => broadcastRule(bad, 'TRANSFER_BROADCAST')).toThrow(ConfigError);
    expect(() => loadTransferConfig({ TRANSFER_BROADCAST: 'soon' })).toThrow(/TRANSFER_BROADCAST/);
    for (const bad of [
      '[]',
      '{',
      JSON.stringify({ 'not-a-did': 'at-once' }),
      JSON.stringify({ [did]: 5 }),
      JSON.stringify({ [did]: '' }),
    ])
      expect(() => loadTransferConfig({ TRANSFER_BROADCAST_BY_SUBSIDIARY: bad })).toThrow(
        /TRANSFER_BROADCAST_BY_SUBSIDIARY/,
      );
  });
});
