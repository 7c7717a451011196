/** The issuer recorded on the pii_didkey the sandbox publishes for a simulated VASP: the network operator. */
export const OPERATOR_DID_FOR_SIMULATION = 'did:ethr:0x0000000000000000000000000000000000000001';
