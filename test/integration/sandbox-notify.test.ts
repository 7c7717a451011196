/**
 * Issue 23, item 6: the sandbox's `POST /tx/notify` (sandbox/transactions/notify.ts). The beneficiary VASP reports a
 * deposit; the network answers the message it belongs to (by txHash, or by destination + asset + amount when the
 * originator has not added its txHash yet), else stores an INCOMPLETE one that the originator's later create completes
 * (one deposit, one message). A simulated originator answers a report after N seconds, or never.
 */
import { randomBytes } from 'node:crypto';
import { eventually, groupSeed, startSandbox, type RunningSandbox } from '../harness/platform';

type Tx = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('sandbox: tx/notify (deposits reported by the beneficiary VASP)', () => {
  const group = groupSeed();
  let sb: RunningSandbox;

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
  });
  afterAll(async () => sb?.close());

  const gw = () => group.gatewayUser;
  const ext = () => group.externalUser;

  async function call(method: string, path: string, body?: unknown, who = gw()): Promise<{ status: number; body: Tx }> {
    const r = await fetch(`${sb.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await sb.token(who)}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Tx };
  }

  const ethHash = () => `0x${randomBytes(32).toString('hex')}`;
  const address = () => `0x${randomBytes(20).toString('hex')}`;
  /** A deposit of 1.5 ETH to a fresh address of Subsidiary A. */
  const deposit = (over: Record<string, unknown> = {}) => ({
    txHash: ethHash(),
    transactionAmount: '1500000000000000000',
    transactionAsset: 'ETH',
    destination: address(),
    beneficiaryVASPdid: group.subA,
    ...over,
  });
  const notify = (body: Record<string, unknown>, who = gw()) => call('POST', '/tx/notify', body, who);
  /** The external VASP's message to Subsidiary A for the deposit's blockchain data. */
  const originatorCreate = (d: Tx, over: Record<string, unknown> = {}) =>
    call(
      'POST',
      '/tx/create',
      {
        transactionAsset: d.transactionAsset,
        transactionAmount: d.transactionAmount,
        originatorVASPdid: group.external,
        beneficiaryVASPdid: group.subA,
        originatorRef: 'customer-77',
        transactionBlockchainInfo: { txHash: d.txHash, destination: d.destination },
        ...over,
      },
      ext(),
    );
  /** Subsidiary A's messages to `destination`, as its list shows them. */
  const listedFor = async (destination: string): Promise<Tx[]> => {
    const list = await call('GET', `/tx/list?vaspDID=${group.subA}&resultsPerPage=100`);
    expect(list.status).toBe(200);
    return (list.body.transactions as Tx[]).filter((t) => t.transactionBlockchainInfo.destination === destination);
  };
  const countFor = async () =>
    (await call('GET', `/tx/list?vaspDID=${group.subA}`)).body.paginateInfo.totalItems as number;

  it('refuses bad input with a 400 naming the field, and stores nothing', async () => {
    const before = await countFor();
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ txHash: '0x1234' }, 'NotabeneTransactionValidationError', /^txHash: must be 0x and 64 hex digits/],
      [{ txHash: 'ab'.repeat(32) }, 'NotabeneTransactionValidationError', /^txHash: .*for ETH$/],
      [
        { transactionAsset: 'BTC', txHash: ethHash() },
        'NotabeneTransactionValidationError',
        /^txHash: must be 64 hex digits without 0x/,
      ],
      [
        { transactionAmount: '1.5' },
        'NotabeneTransactionValidationError',
        /^transactionAmount: must be a whole number/,
      ],
      [{ transactionAmount: 15 }, 'NotabeneTransactionValidationError', /^transactionAmount: must be a string/],
      [{ destination: undefined, txHash: undefined }, 'NotabeneTransactionValidationError', /txHash, destination$/],
      [{ beneficiaryVASPdid: 'not-a-did' }, 'NotabeneTransactionValidationError', /^beneficiaryVASPdid: must be a DID/],
      // Another VASP's DID: only the beneficiary reports its deposits.
      [{ beneficiaryVASPdid: group.external }, 'UserDIDNotAdminforVASPError', /^beneficiaryVASPdid: /],
    ];
    for (const [over, name, message] of cases) {
      const r = await notify(deposit(over));
      expect(r.status).toBe(400);
      expect(r.body.err).toMatchObject({ name, code: 400 });
      expect(r.body.err.message).toMatch(message);
    }
    expect(await countFor()).toBe(before);
  });

  it("matches the originator's message by txHash (any case of its hex), origin and destination: no second message", async () => {
    const d = deposit();
    const sent = await originatorCreate(d, {
      transactionBlockchainInfo: { txHash: d.txHash, origin: '0xfrom', destination: d.destination },
    });
    expect(sent.status).toBe(200);
    const matched = await notify({
      ...d,
      txHash: `0x${(d.txHash as string).slice(2).toUpperCase()}`,
      origin: '0xfrom',
    });
    expect(matched.status).toBe(200);
    expect(matched.body).toMatchObject({
      id: sent.body.id,
      originatorVASPdid: group.external,
      originatorRef: 'customer-77',
    });
    expect(matched.body.status).not.toBe('INCOMPLETE');
    // Hosted mode: answered as tx/info answers the beneficiary (no personal data was sent here).
    expect(await listedFor(d.destination as string)).toHaveLength(1);

    // Another origin is another deposit: it does not match.
    const other = await notify({ ...d, origin: '0xsomeone-else' });
    expect(other.body.id).not.toBe(sent.body.id);
    expect(other.body.status).toBe('INCOMPLETE');
  });

  it('matches a message without txHash by destination, asset and amount within 24 h, and gives it the txHash', async () => {
    const d = deposit();
    const sent = await originatorCreate(d, { transactionBlockchainInfo: { destination: d.destination } });
    expect(sent.body.transactionBlockchainInfo.txHash).toBe('');
    const matched = await notify(d);
    expect(matched.status).toBe(200);
    expect(matched.body.id).toBe(sent.body.id);
    expect(matched.body.transactionBlockchainInfo.txHash).toBe(d.txHash);
    expect(matched.body.actions.at(-1)).toMatchObject({ action: 'notify', issuerDID: group.gatewayUser.did });
    const info = await call('GET', `/tx/info?id=${sent.body.id}`, undefined, ext());
    expect(info.body.transactionBlockchainInfo.txHash).toBe(d.txHash);

    // Outside the window (a message created 25 h ago) it does not match: the report stands alone.
    const old = deposit();
    const aged = await originatorCreate(old, { transactionBlockchainInfo: { destination: old.destination } });
    await sb.pool.query(`update transactions set created_at = now() - interval '25 hours' where id = $1`, [
      aged.body.id,
    ]);
    const alone = await notify(old);
    expect(alone.body.id).not.toBe(aged.body.id);
    expect(alone.body.status).toBe('INCOMPLETE');
    // A different amount does not match either.
    const other = deposit();
    const created = await originatorCreate(other, { transactionBlockchainInfo: { destination: other.destination } });
    expect((await notify({ ...other, transactionAmount: '1500000000000000001' })).body.id).not.toBe(created.body.id);
  });

  it('stores an INCOMPLETE message with the blockchain data only, listed for the beneficiary; a repeat answers the same one', async () => {
    const before = await countFor();
    const d = deposit({ origin: '0xunknown-sender', customerRef: 'cust-9', transactionAssetDecimals: 18 });
    const first = await notify(d);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      status: 'INCOMPLETE',
      transactionType: 'UNKNOWN',
      transactionAsset: 'ETH',
      transactionAmount: d.transactionAmount,
      beneficiaryVASPdid: group.subA,
      beneficiaryVASPname: 'Subsidiary A',
      beneficiaryRef: 'cust-9',
      transactionBlockchainInfo: { txHash: d.txHash, origin: '0xunknown-sender', destination: d.destination },
    });
    expect(first.body.beneficiaryDid).toMatch(/^did:/);
    // Nobody owns the origin address: the originator is unknown, and there is no personal data.
    for (const field of ['originatorVASPdid', 'originatorDid', 'pii', 'ivms101', 'ivms101Encrypted'])
      expect(first.body[field]).toBeUndefined();
    expect(first.body.actions.map((a: Tx) => [a.action, a.status])).toEqual([['notify', 'INCOMPLETE']]);

    const again = await notify(d);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.actions).toHaveLength(1);
    // Concurrent repeats too: the destination lock makes them find the one message.
    const burst = await Promise.all([1, 2, 3].map(() => notify(d)));
    expect(new Set(burst.map((r) => r.body.id))).toEqual(new Set([first.body.id]));
    expect(await countFor()).toBe(before + 1);

    const listed = await listedFor(d.destination as string);
    expect(listed.map((t) => [t.id, t.status])).toEqual([[first.body.id, 'INCOMPLETE']]);
    const incoming = await call('GET', `/tx/list?vaspDID=${group.subA}&status=INCOMPLETE&txDirection=incoming`);
    expect((incoming.body.transactions as Tx[]).map((t) => t.id)).toContain(first.body.id);
    expect((await call('GET', `/tx/info?id=${first.body.id}`)).body.status).toBe('INCOMPLETE');
    // The report is the beneficiary's: tx/update does not edit it.
    const edit = await call('POST', '/tx/update', { id: first.body.id, beneficiaryRef: 'x' });
    expect(edit.status).toBe(400);
    expect(edit.body.err.name).toBe('NotabeneTransactionInvalidStatusError');
  });

  it("completes the INCOMPLETE message with the originator's later create: one message, its id, the webhooks", async () => {
    const hook = await call('POST', '/webhook', { vaspDID: group.gateway, url: 'http://127.0.0.1:9/hook' });
    expect(hook.status).toBe(200);
    const d = deposit();
    const reported = await notify(d);
    expect(reported.body.status).toBe('INCOMPLETE');
    const deliveries = async (id: string) => {
      const r = await fetch(`${sb.url}/sandbox/webhooks/deliveries?transactionId=${id}`, { headers: sb.testHeaders() });
      return ((await r.json()) as Tx).deliveries as Tx[];
    };
    expect(await deliveries(reported.body.id)).toHaveLength(1);

    const created = await originatorCreate(d, { transactionRef: `ref-${randomBytes(6).toString('hex')}` });
    expect(created.status).toBe(200);
    expect(created.body.id).toBe(reported.body.id);
    expect(created.body).toMatchObject({
      originatorVASPdid: group.external,
      originatorRef: 'customer-77',
      transactionType: 'TRAVELRULE',
      transactionBlockchainInfo: { txHash: d.txHash, destination: d.destination },
    });
    expect(['SENT', 'ACK']).toContain(created.body.status);
    expect(created.body.actions.map((a: Tx) => a.action).slice(0, 3)).toEqual(['notify', 'create', 'approve']);
    expect(await listedFor(d.destination as string)).toHaveLength(1);
    const outgoing = await call(
      'GET',
      `/tx/list?vaspDID=${group.external}&transactionRef=${created.body.transactionRef}`,
      undefined,
      ext(),
    );
    expect((outgoing.body.transactions as Tx[]).map((t) => t.id)).toEqual([reported.body.id]);
    // The status change reaches the beneficiary's gateway by webhook.
    expect((await deliveries(reported.body.id)).length).toBeGreaterThanOrEqual(2);
    // Reporting the deposit again answers the completed message.
    expect((await notify(d)).body).toMatchObject({ id: reported.body.id, status: created.body.status });

    // Without its txHash, the create completes the report by destination, asset and amount.
    const late = deposit();
    const report = await notify(late);
    const byAmount = await originatorCreate(late, { transactionBlockchainInfo: { destination: late.destination } });
    expect(byAmount.body.id).toBe(report.body.id);
    expect(byAmount.body.transactionBlockchainInfo.txHash).toBe(late.txHash);
    expect(await listedFor(late.destination as string)).toHaveLength(1);
  });

  it('an originator that adds the txHash to its own message later supersedes the INCOMPLETE report', async () => {
    const d = deposit();
    // Its message names another amount (fees taken on the way): the report does not match it by amount.
    const own = await originatorCreate(d, {
      transactionAmount: '1500000000000000999',
      transactionBlockchainInfo: { destination: d.destination },
    });
    const report = await notify(d);
    expect(report.body.id).not.toBe(own.body.id);
    expect(report.body.status).toBe('INCOMPLETE');
    const updated = await call('POST', '/tx/update', { id: own.body.id, txHash: d.txHash }, ext());
    expect(updated.status).toBe(200);
    const superseded = await call('GET', `/tx/info?id=${report.body.id}`);
    expect(superseded.body.status).toBe('CANCELLED');
    expect(superseded.body.actions.at(-1)).toMatchObject({ action: 'supersede' });
    expect(superseded.body.actions.at(-1).actionData).toContain(own.body.id);
    expect((await notify(d)).body.id).toBe(own.body.id);
  });

  it('a simulated originator completes a reported deposit after N seconds, or never', async () => {
    const answers = address();
    const silent = address();
    const configure = await fetch(`${sb.url}/sandbox/counterparties/${group.external}/deposits`, {
      method: 'PUT',
      headers: sb.testHeaders({ 'content-type': 'application/json' }),
      body: JSON.stringify({ [answers]: { afterSeconds: 1, originatorName: ['Ada', 'Lovelace'] }, [silent]: 'never' }),
    });
    expect(configure.status).toBe(200);
    expect(((await configure.json()) as Tx).deposits).toEqual({
      [answers]: { afterSeconds: 1, originatorName: ['Ada', 'Lovelace'] },
      [silent]: { afterSeconds: null },
    });
    const bad = await fetch(`${sb.url}/sandbox/counterparties/${group.external}/deposits`, {
      method: 'PUT',
      headers: sb.testHeaders({ 'content-type': 'application/json' }),
      body: JSON.stringify({ [answers]: -1 }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Tx).err.message).toMatch(new RegExp(`^${answers}: must be a number of seconds`));

    const later = await notify(deposit({ destination: answers }));
    const never = await notify(deposit({ destination: silent }));
    // The network asks the originator the destination belongs to.
    expect(later.body).toMatchObject({ status: 'INCOMPLETE', originatorVASPdid: group.external });
    expect(never.body).toMatchObject({ status: 'INCOMPLETE', originatorVASPdid: group.external });

    const completed = await eventually(async () => {
      const info = await call('GET', `/tx/info?id=${later.body.id}`);
      return info.body.status === 'INCOMPLETE' ? undefined : info.body;
    }, 15_000);
    expect(['SENT', 'ACK']).toContain(completed.status);
    expect(completed.originatorVASPdid).toBe(group.external);
    // Its personal data came end to end (CIDs), not in the clear.
    expect(completed.pii?.originator).toBeDefined();
    expect(new Date(completed.updatedAt).getTime() - new Date(later.body.createdAt).getTime()).toBeGreaterThanOrEqual(
      1000,
    );
    expect(await listedFor(answers)).toHaveLength(1);
    // The silent one had the same time and more: still INCOMPLETE, and nothing is queued for it.
    expect((await call('GET', `/tx/info?id=${never.body.id}`)).body.status).toBe('INCOMPLETE');
    const { rows } = await sb.pool.query('select 1 from sim_counterparty_tasks where transaction_id = $1', [
      never.body.id,
    ]);
    expect(rows).toEqual([]);
  });
});
