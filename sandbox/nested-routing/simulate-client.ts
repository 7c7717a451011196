/**
 * Client of `POST /sandbox/simulate/transfers` (sandbox-only): a simulated counterparty sends a transfer whose
 * originator is a natural person with the given name. Used by the demo, the tests and the benchmarks.
 */
export interface SimulatedTransfer {
  from: string;
  to: string;
  destination: string;
  origin?: string;
  /** Given name(s), then family name. */
  originatorName?: [string, string];
  asset?: string;
  amount?: string;
}

/** The sandbox's address and its operator token (SANDBOX_OPERATOR_TOKEN), which the test routes require. */
export interface SandboxTestRoutes {
  url: string;
  testToken: string;
}

export async function simulateTransfer(
  sandbox: SandboxTestRoutes,
  t: SimulatedTransfer,
): Promise<{ id: string; status: string; beneficiaryVASPdid: string }> {
  const origin = t.origin ?? '0x5555555555555555555555555555555555555555';
  const [given, family] = t.originatorName ?? ['Jane', 'Doe'];
  const r = await fetch(`${sandbox.url}/sandbox/simulate/transfers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${sandbox.testToken}` },
    body: JSON.stringify({
      originatorVASPdid: t.from,
      beneficiaryVASPdid: t.to,
      transactionAsset: t.asset ?? 'ETH',
      transactionAmount: t.amount ?? '1000000',
      transactionBlockchainInfo: { origin, destination: t.destination },
      originator: {
        originatorPersons: [
          {
            naturalPerson: {
              name: [
                {
                  nameIdentifier: [
                    { secondaryIdentifier: given, primaryIdentifier: family, nameIdentifierType: 'LEGL' },
                  ],
                },
              ],
              dateAndPlaceOfBirth: { dateOfBirth: '1981-03-12', placeOfBirth: 'Example City' },
            },
          },
        ],
        accountNumber: [origin],
      },
    }),
  });
  if (!r.ok) throw new Error(`simulated transfer failed (${r.status}: ${(await r.text()).slice(0, 200)})`);
  return (await r.json()) as { id: string; status: string; beneficiaryVASPdid: string };
}
