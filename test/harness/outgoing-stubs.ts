/**
 * The outgoing-transfer workflow's stubbed activities for workflow tests (test/harness/workflow-env.ts): a transfer from
 * one VASP to another whose send step creates transaction `tx-1` (SENT), and a counterparty that never answers.
 */
import type { CreatedTransaction, TransferPlan } from '../../activities/outgoing-transfers';
import { outgoingViewAfterSend } from '../../transfer-view/status';
import type { Stubs } from './workflow-env';

export const STUB_ORIGINATOR = 'did:ethr:0x1111111111111111111111111111111111111111';
export const STUB_BENEFICIARY = 'did:ethr:0x2222222222222222222222222222222222222222';

export const stubPlan: TransferPlan = {
  originatorVaspDid: STUB_ORIGINATOR,
  beneficiaryVaspDid: STUB_BENEFICIARY,
  beneficiaryResolvedBy: 'request',
  mode: 'end-to-end',
  recipients: [],
};

export const stubCreated: CreatedTransaction = {
  id: 'tx-1',
  status: 'SENT',
  beneficiaryVaspDid: STUB_BENEFICIARY,
  transaction: { id: 'tx-1' } as CreatedTransaction['transaction'],
};

/** A counterparty that never answers: every poll says SENT; the rest succeeds. `over` replaces single stubs. */
export const silentCounterparty = (over: Stubs = {}): Stubs => ({
  sendOutgoingTransfer: async (i) => ({
    plan: stubPlan,
    created: stubCreated,
    view: i.view && outgoingViewAfterSend(i.view, stubPlan, stubCreated, false),
  }),
  finishOutgoingTransfer: async () => ({ viewWritten: true, delivered: true }),
  fetchOutgoingStatus: async () => ({ status: 'SENT' }),
  cancelOutgoingTransaction: async () => ({ status: 'CANCELLED', cancelled: true }),
  recordTransferView: async () => undefined,
  deliverTransferCallback: async () => ({ delivered: true }),
  ...over,
});
