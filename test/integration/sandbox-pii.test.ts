import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { createDidKeyRecord, Keyring } from '../../lib/crypto';
import { decryptIvms101, encryptIvms101, unflattenIvms101 } from '../../lib/ivms101';
import { groupSeed, randomSecret, startSandbox, type RunningSandbox, addOutsiderVasp } from '../harness/platform';

const fixture = JSON.parse(
  readFileSync(join(__dirname, '../fixtures/pii-sdk/ivms101-40-fields.json'), 'utf8'),
) as Record<string, unknown>;
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('sandbox: personal-data service (/pii/put, /pii/get)', () => {
  const group = groupSeed();
  const { did: third, user: thirdUser } = addOutsiderVasp(group.seed);
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox(group.seed);
  });
  afterAll(async () => sb?.close());

  const token = (c: { clientId: string; clientSecret: string }, audience: string) => sb.token(c, audience);
  const pii = async (
    path: string,
    body: unknown,
    who: { clientId: string; clientSecret: string } = group.gatewayUser,
  ) => {
    const r = await fetch(`${sb.url}/pii${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await token(who, `${sb.url}/pii`)}`,
        'content-type': 'application/json',
        'x-notabene-sdk': 'pii-sdk',
      },
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const api = async (path: string, body: unknown, who = group.gatewayUser) => {
    const r = await fetch(`${sb.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${await token(who, sb.url)}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Json };
  };
  const cidOf = async (data: string) =>
    CID.create(1, raw.code, await sha256.digest(new TextEncoder().encode(data))).toString();

  it('stores values and answers real CIDv1s (raw, sha2-256, base32) of the stored items, in order', async () => {
    const data = [
      {
        key: 'originator.originatorPersons[0].naturalPerson.name[0].nameIdentifier[0].primaryIdentifier',
        value: `jwe-${randomSecret()}`,
      },
      {
        key: 'beneficiary.beneficiaryPersons[0].naturalPerson.name[0].nameIdentifier[0].primaryIdentifier',
        value: `jwe-${randomSecret()}`,
      },
    ];
    const put = await pii('/put', { fromDID: group.subA, toDID: group.external, data });
    expect(put.status).toBe(200);
    expect(put.body.map((e: Json) => e.key)).toEqual(data.map((d) => d.key));
    for (const [i, entry] of (put.body as { key: string; value: string }[]).entries()) {
      expect(entry.value).toBe(await cidOf(JSON.stringify({ key: data[i]!.key, value: data[i]!.value })));
      expect(entry.value).toMatch(/^bafkrei/);
    }
    const got = await pii(
      '/get',
      put.body.map((e: Json) => e.value),
    );
    expect(got.status).toBe(200);
    expect(got.body).toEqual(put.body.map((e: Json, i: number) => ({ cid: e.value, data: JSON.stringify(data[i]) })));
    // Putting the same bytes again answers the same CID.
    expect((await pii('/put', { fromDID: group.subA, toDID: group.external, data: [data[0]] })).body[0].value).toBe(
      put.body[0].value,
    );
  });

  it('gives items only to their owners: knowing a CID grants nothing', async () => {
    const put = await pii('/put', {
      fromDID: group.subA,
      toDID: group.external,
      data: [{ key: 'originator.x', value: `secret-${randomSecret()}` }],
    });
    const cid = put.body[0].value as string;
    expect((await pii('/get', [cid], group.externalUser)).body).toHaveLength(1); // toDID owner
    expect((await pii('/get', [cid], group.gatewayUser)).body).toHaveLength(1); // fromDID's gateway user
    const stranger = await pii('/get', [cid], thirdUser);
    expect(stranger).toEqual({ status: 200, body: [] }); // absent, exactly like an unknown CID
    const unknown = await pii('/get', [await cidOf('{"key":"a","value":"never stored"}'), cid]);
    expect(unknown.body.map((i: Json) => i.cid)).toEqual([cid]);
    // Storing for VASPs one cannot act for is refused.
    const foreign = await pii('/put', { fromDID: third, toDID: group.external, data: [{ key: 'k', value: 'v' }] });
    expect(foreign.status).toBe(403);
    expect((await pii('/put', { fromDID: group.subA, toDID: group.external, data: [] })).status).toBe(400);
    expect((await pii('/get', { cids: [cid] })).status).toBe(400);
    // The API audience does not open the personal-data service.
    const wrong = await fetch(`${sb.url}/pii/get`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await token(group.gatewayUser, sb.url)}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify([cid]),
    });
    expect(wrong.status).toBe(401);
  });

  it('end-to-end: the originator puts encrypted values, creates with the CID tree, the beneficiary gets and decrypts them', async () => {
    const originatorKey = createDidKeyRecord();
    const beneficiaryKey = createDidKeyRecord();
    const record = { originator: fixture.originator, beneficiary: fixture.beneficiary };
    const entries = encryptIvms101(record, originatorKey, [beneficiaryKey.did]);
    const put = await pii('/put', { fromDID: group.subA, toDID: group.external, data: entries });
    const tree = unflattenIvms101(put.body);
    const tx = await api('/tx/create', {
      transactionAsset: 'BTC',
      transactionAmount: '1500',
      originatorVASPdid: group.subA,
      beneficiaryVASPdid: group.external,
      transactionBlockchainInfo: { destination: 'bc1qexample' },
      pii: tree,
      encrypted: 'opaque-blob',
    });
    expect(tx.status).toBe(200);
    expect(tx.body).toMatchObject({ pii: tree, ivms101Encrypted: 'opaque-blob', status: 'SENT' });
    expect(tx.body.ivms101).toBeUndefined();
    // The beneficiary reads the transaction, fetches the CIDs and decrypts with its own key.
    const info = await api(`/tx/info?id=${tx.body.id}`, undefined, group.externalUser);
    const cids = (put.body as { key: string; value: string }[]).map((e) => e.value);
    const got = await pii('/get', cids, group.externalUser);
    const items = (got.body as { cid: string; data: string }[]).map(
      (i) => JSON.parse(i.data) as { key: string; value: string },
    );
    expect(info.body.pii).toEqual(tree);
    expect(decryptIvms101(items, Keyring.from([beneficiaryKey])).record).toEqual(record);
    // A pii tree naming CIDs the caller cannot read is refused.
    const other = await pii(
      '/put',
      { fromDID: third, toDID: third, data: [{ key: 'originator.y', value: 'z' }] },
      thirdUser,
    );
    const bad = await api('/tx/create', {
      transactionAsset: 'BTC',
      transactionAmount: '1',
      originatorVASPdid: group.subA,
      transactionBlockchainInfo: { destination: 'bc1q' },
      pii: { originator: { y: other.body[0].value } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.err.message).toMatch(/^pii\.originator\.y: unknown content identifier/);
  });
});
