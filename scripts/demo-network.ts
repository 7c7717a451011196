import { createHash } from 'node:crypto';
import { simulateTransfer, type SandboxTestRoutes } from '../sandbox/nested-routing/simulate-client';
import { resolve } from 'node:path';
import { createDidKeyRecord, type DidKeyRecord } from '../lib/crypto';
import { createPool } from '../db/pool';
import { loadedLists } from '../screening/store';
import { loadSdnList } from '../screening/load-sdn';
import type { DemoGroup } from './demo-group';

/**
 * The demo's side of the network, set up by `npm start` against the sandbox: the group's keys published, the gateway's
 * notification webhook and a subsidiary's address webhook pointed at the internal API, the registry and the network's
 * address book filled so that each routing path has an address, the sample sanctions list loaded. Then the demo
 * counterparty sends one transfer per path (and one from a sanctioned originator), and the first subsidiary sends the
 * counterparty one transfer per behaviour the sandbox can simulate (accept, decline, late, silent, …).
 */
export interface DemoAddresses {
  /** In the first subsidiary's address book at the network: the network redirects and confirms by itself. */
  addressBook: string;
  /** Only in the group's registry, for the second subsidiary: the network asks its address webhook. */
  addressWebhook: string;
  /** Only in the group's registry, for the first subsidiary: the gateway's notification webhook, then the workflow. */
  notification: string;
  sanctioned: string;
}

/**
 * Addresses derived from the demo group, so a new demo group (a fresh `.data/`) never collides with the addresses an
 * earlier one registered in a database that outlived it: an address has one owner in the registry.
 */
export function demoAddresses(group: DemoGroup): DemoAddresses {
  const of = (label: string) =>
    `0x${createHash('sha256').update(`${group.gateway.did}/${label}`).digest('hex').slice(0, 40)}`;
  return {
    addressBook: of('address-book'),
    addressWebhook: of('address-webhook'),
    notification: of('notification'),
    sanctioned: of('sanctioned'),
  };
}

/**
 * The outgoing demo: one transfer per behaviour of the simulated counterparty (sandbox/counterparties/behaviours.ts),
 * each to an address that selects it, with the status the transfer reaches and whether that status is final.
 */
export const DEMO_OUTGOING = [
  { behaviour: 'accept', label: 'counterparty accepts', reaches: 'ACCEPTED', final: true },
  { behaviour: 'decline', label: 'counterparty declines', reaches: 'DECLINED', final: true },
  { behaviour: 'reject', label: 'counterparty rejects (not its address)', reaches: 'REJECTED', final: true },
  { behaviour: 'late:20', label: 'counterparty accepts 20 s later', reaches: 'ACCEPTED', final: true },
  { behaviour: 'ack', label: 'counterparty confirms the address only', reaches: 'ACK', final: false },
  { behaviour: 'notReady', label: 'counterparty is not ready', reaches: 'NOT_READY', final: false },
  { behaviour: 'silent', label: 'counterparty stays silent', reaches: 'SENT', final: false },
] as const;

export type DemoOutgoing = (typeof DEMO_OUTGOING)[number];

/** The counterparty's address for a behaviour, derived from the demo group like the incoming demo's addresses. */
export const demoOutgoingAddress = (group: DemoGroup, behaviour: string) =>
  `0x${createHash('sha256').update(`${group.gateway.did}/outgoing/${behaviour}`).digest('hex').slice(0, 40)}`;

export interface DemoKeys {
  [vaspDid: string]: DidKeyRecord;
}

async function token(sandboxUrl: string, c: { clientId: string; clientSecret: string }): Promise<string> {
  const r = await fetch(`${sandboxUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      grant_type: 'client_credentials',
      audience: sandboxUrl,
    }),
  });
  if (!r.ok) throw new Error(`demo: token request failed (${r.status})`);
  return ((await r.json()) as { access_token: string }).access_token;
}

const call = async (url: string, bearer: string, method: string, body?: unknown) => {
  const r = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.ok)
    throw new Error(`demo: ${method} ${new URL(url).pathname} failed (${r.status}: ${(await r.text()).slice(0, 200)})`);
  return (await r.json()) as Record<string, unknown>;
};

/** Keys for the gateway and the subsidiaries, kept in demo.json (development only) so a second start reuses them. */
export function demoKeys(group: DemoGroup & { keys?: DemoKeys }): DemoKeys {
  group.keys ??= {};
  for (const v of [group.gateway, ...group.subsidiaries]) group.keys[v.did] ??= createDidKeyRecord();
  return group.keys;
}

/**
 * Before the API starts: publishes the keys and registers the webhooks, returning the environment the worker and the
 * API need (KEYS and the webhooks' signing secrets, which the network hands out at registration).
 */
export async function prepareDemoNetwork(
  sandbox: SandboxTestRoutes,
  apiUrl: string,
  group: DemoGroup,
  keys: DemoKeys,
): Promise<Record<string, string>> {
  const sandboxUrl = sandbox.url;
  const gw = await token(sandboxUrl, group.gateway.credentials);
  for (const [did, key] of Object.entries(keys)) {
    await call(`${sandboxUrl}/tf/vasps/update`, gw, 'POST', {
      did,
      fields: [{ fieldName: 'pii_didkey', values: [{ value: key.did }] }],
    });
  }
  const secrets: Record<string, string> = {};
  for (const v of [group.gateway, ...group.subsidiaries]) {
    const hook = await call(`${sandboxUrl}/webhook`, gw, 'POST', {
      vaspDID: v.did,
      url: `${apiUrl}/webhooks/notification/${encodeURIComponent(v.did)}`,
    });
    secrets[v.did] = String(hook.secret);
  }
  const second = group.subsidiaries[1]!;
  const addressHook = await call(`${sandboxUrl}/integrations/${second.did}/address-query-webhook`, gw, 'POST', {
    url: `${apiUrl}/webhooks/address/${second.did}`,
    params: '?',
  });
  // The counterparty answers each outgoing demo transfer by the behaviour its destination address selects.
  const behaviours = Object.fromEntries(
    DEMO_OUTGOING.map((d) => [demoOutgoingAddress(group, d.behaviour), d.behaviour]),
  );
  const sim = await fetch(`${sandboxUrl}/sandbox/counterparties/${group.external.did}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${sandbox.testToken}` },
    body: JSON.stringify({ behaviours }),
  });
  if (!sim.ok)
    throw new Error(
      `demo: the simulated counterparty could not be set up (${sim.status}: ${(await sim.text()).slice(0, 200)})`,
    );
  return {
    KEYS: JSON.stringify(
      Object.entries(keys).map(([vaspDID, k]) => ({ vaspDID, privateKeyHex: k.keys[0].privateKeyHex })),
    ),
    NOTIFICATION_WEBHOOK_SECRETS: JSON.stringify(secrets),
    ADDRESS_WEBHOOK_SECRETS: JSON.stringify({ [second.did]: String(addressHook.secret) }),
  };
}

/** After the API is up: the registry, the network's address book for the first path, and the sample sanctions list. */
export async function seedDemoData(
  sandboxUrl: string,
  api: { url: string; token: string },
  databaseUrl: string,
  group: DemoGroup,
): Promise<void> {
  const [first, second] = group.subsidiaries;
  const a = demoAddresses(group);
  const entries = [
    { vaspDID: first!.did, asset: 'ETH', address: a.addressBook, customerRef: 'demo-alice' },
    { vaspDID: second!.did, asset: 'ETH', address: a.addressWebhook, customerRef: 'demo-bob' },
    { vaspDID: first!.did, asset: 'ETH', address: a.notification, customerRef: 'demo-carol' },
    { vaspDID: first!.did, asset: 'ETH', address: a.sanctioned, customerRef: 'demo-dave' },
  ];
  const r = await fetch(`${api.url}/v1/addresses`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ addresses: entries }),
  });
  if (!r.ok) throw new Error(`demo: registry upsert failed (${r.status}: ${(await r.text()).slice(0, 200)})`);
  const gw = await token(sandboxUrl, group.gateway.credentials);
  await call(`${sandboxUrl}/address/registerCustomer`, gw, 'POST', entries[0]);
  const pool = createPool(databaseUrl, 'orchestrator');
  try {
    if ((await loadedLists(pool)).length === 0) {
      const dir = resolve(__dirname, '../data/sanctions');
      await loadSdnList(pool, {
        list: 'sample-sdn',
        sdnPath: `${dir}/sdn-sample.csv`,
        altPath: `${dir}/alt-sample.csv`,
      });
    }
  } finally {
    await pool.end();
  }
}

/**
 * The group's demo policy, set once (a second start keeps what an operator changed since): a BLOCKED counterparty is
 * declined, a TRUSTED one approved, anything else waits for a person; the demo counterparty is reviewed TRUSTED. So the
 * demo's incoming transfers are decided without a person, except the sanctioned originator's (no rule approves a hit).
 */
export const DEMO_POLICY = {
  currency: 'USD',
  incoming: [
    { order: 10, actionRule: 'REJECT', ruleCheck: 'REVIEWED_VASP_LIST', ruleValue: 'BLOCKED' },
    { order: 20, actionRule: 'APPROVE', ruleCheck: 'REVIEWED_VASP_LIST', ruleValue: 'TRUSTED' },
    { order: 30, actionRule: 'SEND_TO_INBOX', ruleCheck: 'ALL', ruleValue: '' },
  ],
  outgoing: [
    { order: 10, actionRule: 'REJECT', ruleCheck: 'REVIEWED_VASP_LIST', ruleValue: 'BLOCKED' },
    { order: 20, actionRule: 'APPROVE', ruleCheck: 'ALL', ruleValue: '' },
  ],
  note: 'demo policy (npm start)',
};

export async function seedDemoPolicy(api: { url: string; token: string }, group: DemoGroup): Promise<void> {
  const gateway = encodeURIComponent(group.gateway.did);
  const current = await call(`${api.url}/v1/policies/${gateway}`, api.token, 'GET');
  if (!current.active) await call(`${api.url}/v1/policies/${gateway}`, api.token, 'PUT', DEMO_POLICY);
  const external = encodeURIComponent(group.external.did);
  const review = await call(`${api.url}/v1/counterparties/${external}`, api.token, 'GET');
  if (!review.group)
    await call(`${api.url}/v1/counterparties/${external}`, api.token, 'PUT', {
      reviewValue: 'TRUSTED',
      note: 'demo counterparty: due diligence done (npm start)',
    });
}

/** The demo counterparty sends one transfer to the gateway per routing path, and one from a sanctioned originator. */
export async function sendDemoIncoming(
  sandbox: SandboxTestRoutes,
  group: DemoGroup,
): Promise<{ label: string; id: string }[]> {
  const send = async (label: string, destination: string, originatorName: [string, string]) => ({
    label,
    id: (
      await simulateTransfer(sandbox, {
        from: group.external.did,
        to: group.gateway.did,
        destination,
        originatorName,
        amount: '250000000000000000',
      })
    ).id,
  });
  const a = demoAddresses(group);
  return [
    await send('address book at the network', a.addressBook, ['Alice', 'Example']),
    await send('address webhook', a.addressWebhook, ['Bob', 'Example']),
    await send('notification webhook + workflow', a.notification, ['Carol', 'Example']),
    await send('sanctioned originator', a.sanctioned, ['Ivan', 'Petrov']),
  ];
}

const person = (given: string, family: string) => ({
  naturalPerson: {
    name: [{ nameIdentifier: [{ primaryIdentifier: family, secondaryIdentifier: given, nameIdentifierType: 'LEGL' }] }],
  },
});

/**
 * The first subsidiary sends the counterparty one transfer per behaviour through the internal API. The Idempotency-Key
 * is derived from the demo group, so a second start finds the same transfers instead of sending new ones.
 */
export async function sendDemoOutgoing(
  api: { url: string; token: string },
  group: DemoGroup,
): Promise<(DemoOutgoing & { id: string; workflowId: string })[]> {
  const from = group.subsidiaries[0]!;
  const origin = `0x${createHash('sha256').update(`${group.gateway.did}/outgoing/origin`).digest('hex').slice(0, 40)}`;
  const sent = [];
  for (const d of DEMO_OUTGOING) {
    const destination = demoOutgoingAddress(group, d.behaviour);
    const key = `demo-${createHash('sha256').update(group.gateway.did).digest('hex').slice(0, 12)}-${d.behaviour}`;
    const r = await fetch(`${api.url}/v1/transfers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({
        transactionAsset: 'ETH',
        transactionAmount: '150000000000000000',
        originatorVASPdid: from.did,
        beneficiaryVASPdid: group.external.did,
        transactionBlockchainInfo: { origin, destination },
        originator: {
          originatorPersons: [
            {
              naturalPerson: {
                ...person('Erin', 'Example').naturalPerson,
                dateAndPlaceOfBirth: { dateOfBirth: '1979-06-02', placeOfBirth: 'Example City' },
              },
            },
          ],
          accountNumber: [origin],
        },
        beneficiary: { beneficiaryPersons: [person('Frank', 'Example')], accountNumber: [destination] },
      }),
    });
    if (!r.ok)
      throw new Error(
        `demo: outgoing transfer (${d.behaviour}) failed (${r.status}: ${(await r.text()).slice(0, 200)})`,
      );
    const state = (await r.json()) as { id: string; workflowId: string };
    sent.push({ ...d, id: state.id, workflowId: state.workflowId });
  }
  return sent;
}
