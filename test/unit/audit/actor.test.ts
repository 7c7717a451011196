import { stringify } from 'csv-stringify/sync';
import { auditActor, cliPrincipal, principalIn, systemPrincipal, type Principal } from '../../../lib/principal';
import { SPREADSHEET_SAFE, spreadsheetSafe } from '../../../lib/spreadsheet-csv';

const person = (over: Partial<Principal> = {}): Principal => ({
  kind: 'oidc',
  subject: 'user-1',
  name: 'Maya',
  roles: ['compliance'],
  credentialId: 'j',
  ...over,
});

describe('the audit actor', () => {
  it("is the kind's prefix and the stable subject, whatever the name says", () => {
    expect(auditActor(person({ name: 'system:screening' }))).toBe('oidc:user-1');
    expect(auditActor(person({ kind: 'api-key', subject: '6f1c', name: 'system:screening' }))).toBe('apikey:6f1c');
    expect(auditActor(cliPrincipal('alice'))).toBe('cli:alice');
    expect(auditActor(systemPrincipal('screening'))).toBe('system:screening');
    // A subject that itself reads like a component stays inside its kind's prefix.
    expect(auditActor(person({ subject: 'system:screening' }))).toBe('oidc:system:screening');
  });

  it('is read from details only when they hold a principal', () => {
    expect(principalIn(person())).toMatchObject({ subject: 'user-1' });
    for (const v of [
      undefined,
      null,
      'Maya',
      {},
      { kind: 'toString', subject: 'x' },
      { kind: 'oidc', subject: '' },
      { kind: 'oidc' },
    ]) {
      expect(principalIn(v)).toBeUndefined();
    }
  });
});

describe('CSV for spreadsheets', () => {
  it('prefixes a quote to cells a spreadsheet would evaluate, and nothing else', () => {
    for (const cell of ['=1+2', '+1', '-1', '@SUM(A1)', '\tx', '\rx', '=HYPERLINK("http://x")'])
      expect(spreadsheetSafe(cell)).toBe(`'${cell}`);
    for (const cell of ['', 'Maya', '{"a":1}', 'a=b', ' =1', '1-2', "'=already"])
      expect(spreadsheetSafe(cell)).toBe(cell);
  });

  it('applies to every string cell csv-stringify writes, quoted as CSV requires', () => {
    expect(stringify([['=1,2', 'ok', 3, -4]], SPREADSHEET_SAFE)).toBe(`"'=1,2",ok,3,-4\n`);
  });
});
