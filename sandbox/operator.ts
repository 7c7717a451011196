/**
 * The network operator's DID: the issuer of what the network does itself (automatic transitions, the pii_didkey it
 * publishes for simulated VASPs) and of the `/auth/viewer` answers.
 */
export const OPERATOR_DID = 'did:ethr:0x0000000000000000000000000000000000000001';
