import { isKnownToIncomingWorkflow } from '../../../incoming/known-update';

describe('isKnownToIncomingWorkflow: which webhooks the incoming workflow needs', () => {
  const subA = 'did:ethr:0xa';
  const subs = [subA, 'did:ethr:0xb'];
  const gateway = 'did:ethr:0xg';

  it('signals a transfer the workflow has not published yet', () => {
    expect(isKnownToIncomingWorkflow(undefined, { status: 'SENT', beneficiaryVaspDid: gateway }, subs)).toBe(false);
  });

  it('skips the same status and any status behind the published one', () => {
    const atAck = { status: 'ACK', subsidiaryDid: subA };
    expect(isKnownToIncomingWorkflow(atAck, { status: 'ACK', beneficiaryVaspDid: subA }, subs)).toBe(true);
    expect(isKnownToIncomingWorkflow(atAck, { status: 'SENT', beneficiaryVaspDid: subA }, subs)).toBe(true);
    expect(isKnownToIncomingWorkflow({ status: 'ACCEPTED', subsidiaryDid: subA }, { status: 'ACK' }, subs)).toBe(true);
  });

  it('signals a status past the published one, and another final status than the published one', () => {
    expect(
      isKnownToIncomingWorkflow(
        { status: 'SENT', subsidiaryDid: subA },
        { status: 'ACK', beneficiaryVaspDid: subA },
        subs,
      ),
    ).toBe(false);
    expect(
      isKnownToIncomingWorkflow(
        { status: 'ACK', subsidiaryDid: subA },
        { status: 'DECLINED', beneficiaryVaspDid: subA },
        subs,
      ),
    ).toBe(false);
    expect(isKnownToIncomingWorkflow({ status: 'ACCEPTED', subsidiaryDid: subA }, { status: 'CANCELLED' }, subs)).toBe(
      false,
    );
  });

  it('signals a redirect to a subsidiary the workflow has not routed to (the network routed it), even at the same status', () => {
    expect(
      isKnownToIncomingWorkflow(
        { status: 'SENT', subsidiaryDid: null },
        { status: 'SENT', beneficiaryVaspDid: subA },
        subs,
      ),
    ).toBe(false);
    expect(
      isKnownToIncomingWorkflow(
        { status: 'SENT', subsidiaryDid: null },
        { status: 'SENT', beneficiaryVaspDid: gateway },
        subs,
      ),
    ).toBe(true);
  });
});
