import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  eventually,
  groupSeed,
  randomSecret,
  startSandbox,
  type RunningSandbox,
  addOutsiderVasp,
} from '../harness/platform';
import { TRANSITIONS, STATUSES, type TransactionActionName, type TransactionStatus } from '../../sandbox/transactions';

const fixture = JSON.parse(
  readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8'),
) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

type Tx = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('sandbox: transactions (tx/create, info, update, list and the actions)', () => {
  const group = groupSeed();
  // A third VASP with its own user: it must see nothing of the others' transactions.
  const { did: third, user: thirdUser } = addOutsiderVasp(group.seed);
  let sb: RunningSandbox;

  beforeAll(async () => {
    sb = await startSandbox(group.seed);
  });
  afterAll(async () => sb?.close());

  const token = (c: { clientId: string; clientSecret: string }, audience = sb.url) => sb.token(c, audience);
  const gw = () => group.gatewayUser;
  const ext = () => group.externalUser;

  async function call(method: string, path: string, body?: unknown, who = gw()): Promise<{ status: number; body: Tx }> {
    const r = await fetch(`${sb.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await token(who)}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Tx };
  }

  const address = () =>
    `0x${randomSecret()
      .replace(/[^a-f0-9]/gi, 'a')
      .slice(0, 20)}${Date.now().toString(16)}`;
  const createBody = (over: Record<string, unknown> = {}) => ({
    transactionAsset: 'ETH',
    transactionAmount: '1000000000000000000',
    originatorVASPdid: group.subA,
    beneficiaryVASPdid: group.external,
    transactionBlockchainInfo: { origin: '0xorigin', destination: address() },
    ...over,
  });
  const create = async (over: Record<string, unknown> = {}, who = gw()) =>
    call('POST', '/tx/create', createBody(over), who);
  const countFor = async (vasp: string, who = gw()) =>
    (await call('GET', `/tx/list?vaspDID=${vasp}`, undefined, who)).body.paginateInfo.totalItems as number;

  it('validates the required fields, naming them, and creates nothing', async () => {
    const before = await countFor(group.subA);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ transactionAmount: undefined }, /List of missing fields: transactionAmount/],
      [{ transactionAsset: undefined, originatorVASPdid: undefined }, /transactionAsset, originatorVASPdid/],
      [{ transactionBlockchainInfo: { origin: 'x' } }, /transactionBlockchainInfo\.destination/],
      [{ transactionBlockchainInfo: undefined }, /transactionBlockchainInfo/],
      [{ transactionAmount: '1.5' }, /^transactionAmount: /],
      [{ transactionAmount: '0' }, /^transactionAmount: /],
      [{ transactionAmount: 100 }, /^transactionAmount: must be a string/],
      [{ beneficiaryVASPdid: 'not-a-did' }, /^beneficiaryVASPdid: /],
      [
        { originator: { originatorPersons: [{ naturalPerson: { nickname: 'x' } }] } },
        /^originator\.originatorPersons\[0\]/,
      ],
    ];
    for (const [over, message] of cases) {
      const r = await create(over);
      expect(r.status).toBe(400);
      expect(r.body.err).toMatchObject({ name: 'NotabeneTransactionValidationError', code: 400 });
      expect(r.body.err.message).toMatch(message);
    }
    expect(await countFor(group.subA)).toBe(before);
  });

  it('returns the Transaction: SENT at once when the beneficiary VASP is known (status jump), NEW otherwise', async () => {
    const sent = await create({ transactionRef: `ref-${randomSecret()}`, originatorRef: 'cust-1' });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({
      status: 'SENT',
      transactionType: 'TRAVELRULE',
      transactionAsset: 'ETH',
      transactionAmount: '1000000000000000000',
      originatorVASPdid: group.subA,
      beneficiaryVASPdid: group.external,
      beneficiaryVASPname: 'External VASP',
      chargedQuantity: 1,
      originatorRef: 'cust-1',
      transactionBlockchainInfo: { txHash: '', origin: '0xorigin' },
    });
    expect(sent.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent.body.actions.map((a: Tx) => [a.action, a.status])).toEqual([
      ['create', 'NEW'],
      ['approve', 'SENT'],
    ]);
    expect(sent.body.actions[0]).toMatchObject({
      issuerDID: group.gatewayUser.did,
      hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });

    const unknown = await create({ beneficiaryVASPdid: undefined });
    expect(unknown.body).toMatchObject({ status: 'NEW' });
    expect(unknown.body.beneficiaryVASPdid).toBeUndefined();
    const approved = await call('POST', `/tx/approve?id=${unknown.body.id}`);
    expect(approved.body.status).toBe('WAITING_FOR_INFORMATION');
    // The beneficiary becomes known: the network sends it.
    const updated = await call('POST', '/tx/update', {
      id: unknown.body.id,
      beneficiaryVASPdid: group.external,
      txHash: '0xabc',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      status: 'SENT',
      beneficiaryVASPdid: group.external,
      transactionBlockchainInfo: { txHash: '0xabc' },
    });
    const info = await call('GET', `/tx/info?id=${unknown.body.id}`, undefined, ext());
    expect(info.body).toMatchObject({ id: unknown.body.id, status: 'SENT' });
  });

  it('resolves the beneficiary VASP from the address book and confirms the address at once (SENT → ACK)', async () => {
    const dest = address();
    const reg = await call(
      'POST',
      '/address/registerCustomer',
      { vaspDID: group.external, asset: 'ETH', address: dest, customerRef: 'c-9' },
      ext(),
    );
    expect(reg.status).toBeLessThan(300);
    const r = await create({ beneficiaryVASPdid: undefined, transactionBlockchainInfo: { destination: dest } });
    expect(r.body).toMatchObject({
      status: 'ACK',
      beneficiaryVASPdid: group.external,
      beneficiaryVASPname: 'External VASP',
    });
    expect(r.body.actions.map((a: Tx) => a.action)).toEqual(['create', 'approve', 'confirm']);
  });

  it('refuses a gateway VASP as originator, and a VASP the caller cannot act for', async () => {
    const r = await create({ originatorVASPdid: group.gateway });
    expect(r.status).toBe(400);
    expect(r.body.err.name).toBe('NotabeneTransactionError');
    expect(r.body.err.message).toMatch(/gateway/);
    const other = await create({ originatorVASPdid: group.external });
    expect(other.status).toBe(400);
    expect(other.body.err.name).toBe('UserDIDNotAdminforVASPError');
  });

  it('is idempotent on transactionRef: 409 while the first request is in flight, the same transaction afterwards; 422 for another body (issue 15, item 14)', async () => {
    const ref = `ref-${randomSecret()}`;
    const body = createBody({ transactionRef: ref });
    // Hold the transactions table so the first request stops after claiming the reference.
    const blocker = await sb.pool.connect();
    await blocker.query('begin');
    await blocker.query('lock table transactions in exclusive mode');
    const first = call('POST', '/tx/create', body);
    try {
      // Only once the first request holds the claim may the second go: sent earlier (a busy machine can delay the
      // first), the second would own the claim itself and wait on the lock like the first.
      await eventually(
        async () => {
          const { rowCount } = await sb.pool.query('select 1 from transaction_ref_claims where transaction_ref = $1', [
            ref,
          ]);
          return rowCount ? true : undefined;
        },
        30_000,
        20,
      );
      const second = await call('POST', '/tx/create', body);
      expect(second.status).toBe(409);
      expect(second.body.err.code).toBe(409);
      // Another body under a claimed reference is refused at once, in flight or not.
      const otherInFlight = await call('POST', '/tx/create', { ...body, transactionAmount: '5' });
      expect(otherInFlight.status).toBe(422);
    } finally {
      await blocker.query('commit');
      blocker.release();
    }
    const done = await first;
    expect(done.status).toBe(200);
    // The same request again (its keys in another order) answers the transaction it made.
    const again = await call('POST', '/tx/create', Object.fromEntries(Object.entries(body).reverse()));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(done.body);
    for (const other of [
      { transactionAmount: '5' },
      { beneficiaryVASPdid: group.subB },
      { transactionBlockchainInfo: { origin: '0xorigin', destination: '0xelsewhere' } },
    ]) {
      const refused = await call('POST', '/tx/create', { ...body, ...other });
      expect(refused.status).toBe(422);
      expect(refused.body.err).toMatchObject({ name: 'NotabeneTransactionValidationError', code: 422 });
      expect(refused.body.err.message).toMatch(/^transactionRef: /);
    }
    const listed = await call('GET', `/tx/list?vaspDID=${group.subA}&transactionRef=${ref}`);
    expect(listed.body.paginateInfo.totalItems).toBe(1);
    // A failed create releases the reference: the corrected request goes through.
    const ref2 = `ref-${randomSecret()}`;
    expect((await create({ transactionRef: ref2, transactionAmount: '-1' })).status).toBe(400);
    expect((await create({ transactionRef: ref2 })).status).toBe(200);
  });

  it('lets only the two VASPs (and their gateway users) read a transaction or act on it', async () => {
    const tx = (await create()).body;
    expect((await call('GET', `/tx/info?id=${tx.id}`, undefined, ext())).status).toBe(200);
    const denied = await call('GET', `/tx/info?id=${tx.id}`, undefined, thirdUser);
    expect(denied.status).toBe(403);
    expect(JSON.stringify(denied.body)).not.toContain(group.subA);
    expect((await call('POST', `/tx/confirm?id=${tx.id}`, undefined, thirdUser)).status).toBe(403);
    expect((await call('POST', '/tx/update', { id: tx.id, txHash: '0x1' }, thirdUser)).status).toBe(403);
    expect((await call('GET', `/tx/list?vaspDID=${group.subA}`, undefined, thirdUser)).status).toBe(403);
    expect(await countFor(third, thirdUser)).toBe(0);
    expect((await call('GET', '/tx/info?id=00000000-0000-4000-8000-000000000000')).status).toBe(404);
    // The beneficiary may change only its own side.
    const side = await call('POST', '/tx/update', { id: tx.id, txHash: '0x2' }, ext());
    expect(side.status).toBe(403);
    const own = await call('POST', '/tx/update', { id: tx.id, beneficiaryRef: 'b-1' }, ext());
    expect(own.body.beneficiaryRef).toBe('b-1');
  });

  describe('actions follow the transition table', () => {
    /** Brings a new transaction to `status` through the actions, as the right side. */
    async function txIn(status: TransactionStatus): Promise<string> {
      const paths: Partial<Record<TransactionStatus, [TransactionActionName, 'o' | 'b'][]>> = {
        NEW: [],
        WAITING_FOR_INFORMATION: [['approve', 'o']],
        SENT: [],
        ACK: [['confirm', 'b']],
        NOT_READY: [['notReady', 'b']],
        ACCEPTED: [
          ['confirm', 'b'],
          ['accept', 'b'],
        ],
        DECLINED: [['decline', 'b']],
        REJECTED: [['reject', 'b']],
        CANCELLED: [['cancel', 'o']],
      };
      const unknownBeneficiary = status === 'NEW' || status === 'WAITING_FOR_INFORMATION';
      const tx = (await create(unknownBeneficiary ? { beneficiaryVASPdid: undefined } : {})).body;
      for (const [action, side] of paths[status]!) {
        const r = await call('POST', `/tx/${action}`, { id: tx.id }, side === 'o' ? gw() : ext());
        expect(r.status).toBe(200);
      }
      expect((await call('GET', `/tx/info?id=${tx.id}`)).body.status).toBe(status);
      return tx.id as string;
    }
    const reachable: TransactionStatus[] = [
      'NEW',
      'WAITING_FOR_INFORMATION',
      'SENT',
      'ACK',
      'NOT_READY',
      'ACCEPTED',
      'DECLINED',
      'REJECTED',
      'CANCELLED',
    ];

    it.each(Object.keys(TRANSITIONS) as TransactionActionName[])(
      '%s: allowed exactly from its source statuses, refused otherwise',
      async (action) => {
        const rule = TRANSITIONS[action];
        const who = rule.by === 'originator' ? gw() : ext();
        for (const status of reachable) {
          const id = await txIn(status);
          const r = await call('POST', `/tx/${action}?id=${id}`, { reason: 'because' }, who);
          if (rule.by === 'beneficiary' && (status === 'NEW' || status === 'WAITING_FOR_INFORMATION')) {
            // No beneficiary VASP yet: nobody can act as one.
            expect([status, r.status]).toEqual([status, 403]);
          } else if (rule.from.includes(status)) {
            expect([status, r.status]).toEqual([status, 200]);
            expect(r.body.status).toBe(rule.to({ beneficiaryKnown: status !== 'NEW' }));
            expect(r.body.actions.at(-1)).toMatchObject({
              action,
              actionData: 'because',
              issuerDID: (who === gw() ? group.gatewayUser : group.externalUser).did,
            });
          } else {
            expect([status, r.status]).toEqual([status, 400]);
            const message = `${status} is not a valid status for action ${action}`;
            expect(r.body.err).toEqual({
              name: 'NotabeneTransactionInvalidStatusError',
              code: 400,
              message,
              stack: `NotabeneTransactionInvalidStatusError: ${message}`,
            });
          }
        }
      },
    );

    it('serialises concurrent actions on one transaction: exactly one of two conflicting answers wins', async () => {
      const id = await txIn('SENT');
      const [a, b] = await Promise.all([
        call('POST', `/tx/reject?id=${id}`, undefined, ext()),
        call('POST', `/tx/decline?id=${id}`, undefined, ext()),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 400]);
      const final = (await call('GET', `/tx/info?id=${id}`)).body;
      expect(['REJECTED', 'DECLINED']).toContain(final.status);
      expect(final.actions.map((x: Tx) => x.action)).toHaveLength(3);
    });

    it('refuses an action taken by the wrong side', async () => {
      const id = await txIn('SENT');
      const byOriginator = await call('POST', `/tx/confirm?id=${id}`, undefined, gw());
      expect(byOriginator.status).toBe(403);
      expect(byOriginator.body.err.name).toBe('UserDIDNotAdminforVASPError');
      expect((await call('POST', `/tx/cancel`, { id }, ext())).status).toBe(403);
      expect(STATUSES).toContain('NOT_READY');
    });
  });

  it('lists with paging and filters by status and direction', async () => {
    const vasp = group.subB;
    const made: Tx[] = [];
    for (let i = 0; i < 5; i++) made.push((await create({ originatorVASPdid: vasp })).body);
    await call('POST', `/tx/cancel`, { id: made[0]!.id });
    const page0 = await call('GET', `/tx/list?vaspDID=${vasp}&resultsPerPage=2&page=0&sort=createdAt:ASC`);
    expect(page0.body.paginateInfo).toEqual({
      totalItems: 5,
      itemCount: 2,
      itemsPerPage: 2,
      totalPages: 3,
      currentPage: 0,
    });
    expect(page0.body.transactions.map((t: Tx) => t.id)).toEqual([made[0]!.id, made[1]!.id]);
    const page2 = await call('GET', `/tx/list?vaspDID=${vasp}&resultsPerPage=2&page=2&sort=createdAt:ASC`);
    expect(page2.body.transactions.map((t: Tx) => t.id)).toEqual([made[4]!.id]);
    const cancelled = await call('GET', `/tx/list?vaspDID=${vasp}&status=CANCELLED`);
    expect(cancelled.body.transactions.map((t: Tx) => t.id)).toEqual([made[0]!.id]);
    const sentOrCancelled = await call('GET', `/tx/list?vaspDID=${vasp}&status=SENT&status=CANCELLED`);
    expect(sentOrCancelled.body.paginateInfo.totalItems).toBe(5);
    expect((await call('GET', `/tx/list?vaspDID=${vasp}&txDirection=incoming`)).body.paginateInfo.totalItems).toBe(0);
    expect((await call('GET', `/tx/list?vaspDID=${vasp}&txDirection=outgoing`)).body.paginateInfo.totalItems).toBe(5);
    const incoming = await call(
      'GET',
      `/tx/list?vaspDID=${group.external}&txDirection=incoming&resultsPerPage=100`,
      undefined,
      ext(),
    );
    expect(incoming.body.transactions.map((t: Tx) => t.id)).toEqual(expect.arrayContaining(made.map((t) => t.id)));
    expect((await call('GET', `/tx/list?vaspDID=${vasp}&resultsPerPage=101`)).status).toBe(400);
    expect((await call('GET', `/tx/list?vaspDID=${vasp}&status=BOGUS`)).status).toBe(400);
  });

  it('lists the transfers sent from or to an address (wallet): a hex address in any case, others as written', async () => {
    const hex = `0x${randomBytes(20).toString('hex')}`;
    const base58 = `1Wallet${randomBytes(8).toString('hex')}XyZ`;
    const toHex = (await create({ transactionBlockchainInfo: { origin: '0xorigin', destination: hex } })).body;
    const fromHex = (await create({ transactionBlockchainInfo: { origin: hex, destination: address() } })).body;
    const toBase58 = (await create({ transactionBlockchainInfo: { destination: base58 } })).body;
    await create();
    const listed = async (wallet: string) =>
      (await call('GET', `/tx/list?vaspDID=${group.subA}&wallet=${encodeURIComponent(wallet)}`)).body.transactions.map(
        (t: Tx) => t.id,
      );
    expect((await listed(hex)).sort()).toEqual([toHex.id, fromHex.id].sort());
    expect((await listed(`0x${hex.slice(2).toUpperCase()}`)).sort()).toEqual([toHex.id, fromHex.id].sort());
    expect(await listed(base58)).toEqual([toBase58.id]);
    expect(await listed(base58.toLowerCase())).toEqual([]);
    // With the other filters: the one sent to it among the VASP's outgoing ones.
    const sent = await call(
      'GET',
      `/tx/list?vaspDID=${group.subA}&txDirection=outgoing&status=${toHex.status}&wallet=${hex}&resultsPerPage=1`,
    );
    expect(sent.body.paginateInfo).toMatchObject({ totalItems: 2, itemCount: 1 });
    // Bounded as a transfer's destination is.
    const tooLong = await call('GET', `/tx/list?vaspDID=${group.subA}&wallet=0x${'a'.repeat(1023)}`);
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body)).toContain('wallet');
  });

  it('tx/update: flat txHash/origin/destination, field ownership by side, and status rules', async () => {
    const tx = (await create()).body;
    const moved = await call('POST', '/tx/update', { id: tx.id, beneficiaryVASPdid: group.subB });
    expect(moved.status).toBe(400);
    expect(moved.body.err.name).toBe('NotabeneTransactionInvalidStatusError');
    const renamed = await call('POST', '/tx/update', { id: tx.id, originatorVASPdid: group.subB });
    expect(renamed.body.err).toMatchObject({
      name: 'NotabeneTransactionValidationError',
      message: expect.stringMatching(/^originatorVASPdid: /),
    });
    expect((await call('POST', '/tx/update', { txHash: '0x1' })).body.err.message).toBe('List of missing fields: id');
    const hashed = await call('POST', '/tx/update', {
      id: tx.id,
      txHash: '0xfeed',
      origin: '0xfrom',
      originatorRef: 'o-2',
    });
    expect(hashed.body).toMatchObject({
      status: 'SENT',
      originatorRef: 'o-2',
      transactionBlockchainInfo: { txHash: '0xfeed', origin: '0xfrom' },
    });
    expect(hashed.body.actions.at(-1)).toMatchObject({ action: 'update', actionData: 'txHash,origin,originatorRef' });
    // A txHash may still be added once the transfer is final.
    await call('POST', `/tx/reject`, { id: tx.id }, ext());
    expect(
      (await call('POST', '/tx/update', { id: tx.id, txHash: '0xbeef' })).body.transactionBlockchainInfo.txHash,
    ).toBe('0xbeef');
  });

  it('hosted mode: the beneficiary adds its own IVMS101 with tx/update', async () => {
    const tx = (await create({ originator: fixture.originator })).body;
    const upd = await call('POST', '/tx/update', { id: tx.id, beneficiary: fixture.beneficiary }, ext());
    expect(upd.status).toBe(200);
    expect(upd.body.pii.beneficiary).toBeDefined();
    expect(upd.body.pii.originator).toEqual(tx.pii.originator);
    expect((await call('GET', `/tx/info?id=${tx.id}`)).body.ivms101).toEqual({
      originator: fixture.originator,
      beneficiary: fixture.beneficiary,
    });
    const bad = await call('POST', '/tx/update', { id: tx.id, beneficiary: { beneficiaryPersons: 'x' } }, ext());
    expect(bad.status).toBe(400);
  });

  it('hosted mode: encrypts plain IVMS101 with service-managed keys, stores CIDs, and decrypts for the owners only', async () => {
    const r = await create({ originator: fixture.originator, beneficiary: fixture.beneficiary });
    expect(r.status).toBe(200);
    expect(r.body.ivms101).toBeUndefined();
    const leaf = r.body.pii.originator.originatorPersons[0].naturalPerson.name[0].nameIdentifier[0]
      .primaryIdentifier as string;
    expect(leaf).toMatch(/^bafkrei[a-z2-7]+$/);
    expect(JSON.stringify(r.body)).not.toContain(
      fixture.originator.originatorPersons[0].naturalPerson.name[0].nameIdentifier[0].primaryIdentifier,
    );
    const asOriginator = await call('GET', `/tx/info?id=${r.body.id}`);
    expect(asOriginator.body.ivms101).toEqual({ originator: fixture.originator, beneficiary: fixture.beneficiary });
    const asBeneficiary = await call('GET', `/tx/info?id=${r.body.id}`, undefined, ext());
    expect(asBeneficiary.body.ivms101).toEqual({ originator: fixture.originator, beneficiary: fixture.beneficiary });
    // Stored at rest: neither the record nor the list carries the plain data.
    const { rows } = await sb.pool.query<{ body: unknown }>('select body from transactions where id = $1', [r.body.id]);
    expect(JSON.stringify(rows[0]!.body)).not.toContain(
      fixture.originator.originatorPersons[0].naturalPerson.name[0].nameIdentifier[0].primaryIdentifier,
    );
    // The key rotates; data written before stays readable.
    const rotate = await fetch(`${sb.url}/pii/rotate-escrow-didkey?vaspDID=${group.subA}`, {
      headers: { authorization: `Bearer ${await token(gw(), `${sb.url}/pii`)}` },
    });
    expect(rotate.status).toBe(200);
    expect((await call('GET', `/tx/info?id=${r.body.id}`)).body.ivms101).toEqual({
      originator: fixture.originator,
      beneficiary: fixture.beneficiary,
    });
    const later = await create({ originator: fixture.originator });
    expect((await call('GET', `/tx/info?id=${later.body.id}`)).body.ivms101).toEqual({
      originator: fixture.originator,
    });
  });
});
