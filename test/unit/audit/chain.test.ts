import { createHash } from 'node:crypto';
import {
  auditRowHash,
  canonicalJson,
  ChainChecker,
  chainOf,
  GENESIS_HASH,
  type AuditChainRow,
} from '../../../audit/chain';

/** A chain of `n` rows built with the module's own hash, each linked to the one before. */
function chain(name: string, n: number): AuditChainRow[] {
  const rows: AuditChainRow[] = [];
  let prevHash = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const row = {
      chain: name,
      seq,
      at: `2026-11-25T12:00:0${seq}.000001Z`,
      actor: 'ops',
      action: `${name}.x`,
      subject: 's',
      details: { seq },
      prevHash,
    };
    const hash = auditRowHash(row);
    rows.push({ id: `${name}-${seq}`, ...row, hash });
    prevHash = hash;
  }
  return rows;
}
const check = (rows: AuditChainRow[], complete = true) => {
  const c = new ChainChecker(complete);
  for (const r of rows) if (!c.add(r)) break;
  return c.report();
};

describe('the audit hash chain', () => {
  it('hashes SHA-256 over the canonical JSON of the record (version included): sorted keys, no white space', () => {
    const row = {
      chain: 'key',
      seq: 1,
      at: '2026-11-25T12:00:00.000000Z',
      actor: 'ops',
      action: 'key.created',
      subject: 'did:x',
      details: { b: 2, a: [1, 'x'] },
      prevHash: GENESIS_HASH,
    };
    const text = `{"action":"key.created","actor":"ops","at":"2026-11-25T12:00:00.000000Z","chain":"key","details":{"a":[1,"x"],"b":2},"prevHash":"${GENESIS_HASH}","seq":1,"subject":"did:x","v":1}`;
    expect(auditRowHash(row)).toBe(createHash('sha256').update(text).digest('hex'));
    // Key order does not matter; undefined members are left out as JSON leaves them out.
    expect(canonicalJson({ b: 1, a: undefined, c: { y: null, x: true } })).toBe('{"b":1,"c":{"x":true,"y":null}}');
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(/finite/);
    expect(chainOf('incoming.screening.hit')).toBe('incoming');
  });

  it('passes an intact chain and names the first changed, missing, repeated or relinked row', () => {
    const rows = chain('key', 4);
    expect(check(rows)).toEqual({ rows: 4, heads: [{ chain: 'key', seq: 4, hash: rows[3]!.hash }] });

    expect(check(rows.map((r) => (r.seq === 2 ? { ...r, actor: 'someone else' } : r))).broken).toEqual({
      id: 'key-2',
      chain: 'key',
      seq: 2,
      problem: 'its hash does not match its contents (the row was changed)',
    });
    expect(check(rows.filter((r) => r.seq !== 2)).broken).toMatchObject({
      id: 'key-3',
      seq: 3,
      problem: 'row seq 2 is missing before it (deleted)',
    });
    expect(check([rows[0]!, rows[1]!, rows[1]!, rows[2]!]).broken).toMatchObject({
      id: 'key-2',
      seq: 2,
      problem: expect.stringMatching(/out of order or repeated/),
    });
    // A row changed and rehashed: the next row's link shows it.
    const changed = { ...rows[1]!, subject: 'other' };
    changed.hash = auditRowHash(changed);
    expect(check([rows[0]!, changed, rows[2]!, rows[3]!]).broken).toMatchObject({
      id: 'key-3',
      problem: expect.stringMatching(/previous hash is not the hash of seq 2/),
    });
    // From the database a chain starts at seq 1 after the genesis hash; an export may start anywhere.
    expect(check(rows.slice(1)).broken).toMatchObject({
      id: 'key-2',
      problem: 'row seq 1 is missing before it (deleted)',
    });
    expect(check(rows.slice(1), false).broken).toBeUndefined();
  });

  it("compares each chain's end with its recorded head: rows deleted from the end, or a chain without a head", () => {
    const rows = chain('key', 3);
    const c = new ChainChecker(true);
    rows.slice(0, 2).forEach((r) => c.add(r));
    c.checkHeads([{ chain: 'key', seq: 3, hash: rows[2]!.hash }]);
    expect(c.report().broken).toMatchObject({
      id: null,
      chain: 'key',
      seq: 3,
      problem: expect.stringMatching(/^the chain's recorded head is seq 3 .* but its rows end at seq 2/),
    });

    const other = new ChainChecker(true);
    rows.forEach((r) => other.add(r));
    other.checkHeads([]);
    expect(other.report().broken).toMatchObject({ chain: 'key', problem: 'the chain has rows but no recorded head' });
  });
});
