// Every workflow the worker registers. Workflows orchestrate only: no I/O, no Node built-ins (see eslint.config.mjs).
export { connectivityCheck } from './connectivity-check';
export { addressBookReconcile } from './address-book-reconcile';
export { outgoingTransfer } from './outgoing-transfer';
export { keyRotation, scheduledKeyRotation } from './key-rotation';
export { incomingTransfer } from './incoming-transfer';
export { retentionSweep } from './retention';
export { incomingSweep } from './incoming-sweep';
export { counterpartyReviewSync } from './counterparty-review-sync';
export { walletProof } from './wallet-proof';
export { deposit } from './deposit';
