import { normalizeName } from '../../../screening/normalize';
import { addressesInRemarks, parseSdnRow } from '../../../screening/sdn-csv';

describe('normalizeName', () => {
  it('folds case, diacritics, punctuation and word order, and drops honorifics', () => {
    expect(normalizeName('PETROV, Ivan Sergeyevich')).toBe(normalizeName('ivan sergeyevich petrov'));
    expect(normalizeName('Dr. José Müller-Lüdenscheidt')).toBe('JOSE LUDENSCHEIDT MULLER');
    expect(normalizeName('  ')).toBe('');
  });
});

describe('the SDN CSV format', () => {
  const row = [
    '36',
    'AEROCARIBBEAN AIRLINES',
    'entity',
    '[CUBA] [SDGT]',
    '-0- ',
    '-0- ',
    '-0- ',
    '-0- ',
    '-0- ',
    '-0- ',
    '-0- ',
    'Havana, Cuba; Digital Currency Address - XBT 1AbcDef; alt. Digital Currency Address - ETH 0xAbC.',
  ];
  it('reads an entry, its programs and the addresses in its remarks', () => {
    expect(parseSdnRow(row, 1)).toEqual({
      entNum: 36,
      name: 'AEROCARIBBEAN AIRLINES',
      type: 'entity',
      programs: ['CUBA', 'SDGT'],
      remarks: row[11],
      addresses: [
        { asset: 'XBT', address: '1AbcDef' },
        { asset: 'ETH', address: '0xAbC' },
      ],
    });
  });
  it('names the column that breaks the format', () => {
    expect(() => parseSdnRow(row.slice(0, 5), 7)).toThrow('line 7: expected 12 columns of the SDN format, found 5');
    expect(() => parseSdnRow(['x', ...row.slice(1)], 3)).toThrow('line 3: ent_num "x" is not a positive integer');
    expect(() => parseSdnRow([row[0]!, '-0- ', ...row.slice(2)], 4)).toThrow('line 4: SDN_Name is empty');
  });
  it('finds no address where the remarks name none', () => {
    expect(addressesInRemarks('DOB 1970; Passport 123.')).toEqual([]);
  });
});
