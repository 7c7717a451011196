import { ValidationError } from '../../../lib/errors';
import { flattenIvms101, lossyLeaves, parseFlatKey, unflattenIvms101 } from '../../../lib/ivms101';
import record from '../../fixtures/pii-sdk/ivms101-40-fields.json';
import { startPiiSdk } from '../crypto/pii-sdk';

const sdk = startPiiSdk();
afterAll(() => sdk.stop());

describe('flattenIvms101 keeps exactly what the SDK keeps', () => {
  const edgeCases: Record<string, unknown> = {
    'empty strings, null, numbers and booleans (all dropped)': {
      a: '',
      b: null,
      c: 0,
      d: 1.5,
      e: true,
      f: false,
      g: 'kept',
      h: { i: '', j: 'kept too' },
    },
    'empty arrays and objects (dropped)': { a: [], b: {}, c: { d: [] }, e: 'x' },
    'arrays of strings, with an empty slot': { addressLine: ['one', '', 'three'] },
    'arrays of objects in arrays of objects': {
      name: [{ nameIdentifier: [{ p: 'a' }, { p: 'b' }] }, { nameIdentifier: [{ p: 'c' }] }],
    },
    'non-ASCII text and whitespace': { a: '  ', b: 'Фродо', c: '株式会社', d: '😀', e: 'line\nbreak' },
    'key order as given': { z: 'first', a: 'second', m: { y: '1', b: '2' } },
    'the 40-field record': record,
  };

  it.each(Object.entries(edgeCases))('%s', async (_name, tree) => {
    expect(flattenIvms101(tree)).toEqual(await sdk.flattenPII(tree));
  });

  it('produces the network path format', () => {
    expect(flattenIvms101(record)[0]).toEqual({
      key: 'originator.originatorPersons[0].naturalPerson.name[0].nameIdentifier[0].primaryIdentifier',
      value: 'Baggins',
    });
    expect(flattenIvms101(record).map((e) => e.key)).toContain(
      'originator.originatorPersons[0].naturalPerson.geographicAddress[0].addressLine[0]',
    );
  });

  it('refuses field names the path format cannot represent', () => {
    expect(() => flattenIvms101({ a: { 'b.c': 'x' } })).toThrow(ValidationError);
    expect(() => flattenIvms101({ 'a[0]': 'x' })).toThrow(ValidationError);
  });
});

describe('lossyLeaves', () => {
  it('lists the leaves flattening would lose', () => {
    expect(lossyLeaves({ a: 1, b: [true, 'x', { c: 0 }], d: '', e: null, f: 'y' })).toEqual(['a', 'b[0]', 'b[2].c']);
    expect(lossyLeaves(record)).toEqual([]);
  });
});

describe('parseFlatKey', () => {
  it.each<[string, Array<string | number>]>([
    ['originator', ['originator']],
    ['a.b[0].c', ['a', 'b', 0, 'c']],
    ['a[10][2]', ['a', 10, 2]],
    [
      'originator.originatorPersons[0].naturalPerson.name[0].nameIdentifier[0].primaryIdentifier',
      ['originator', 'originatorPersons', 0, 'naturalPerson', 'name', 0, 'nameIdentifier', 0, 'primaryIdentifier'],
    ],
  ])('parses %s', (key, path) => {
    expect(parseFlatKey(key)).toEqual(path);
  });

  it.each([
    '',
    '.a',
    'a.',
    'a..b',
    '[0]',
    'a[01]',
    'a[-1]',
    'a[x]',
    'a b',
    'a["b"]',
    'a.__proto__.b',
    'constructor',
    'a.prototype',
    'a[0]b',
    'a[1234567890]',
    42,
  ])('refuses %p', (key) => {
    expect(parseFlatKey(key)).toBeUndefined();
  });
});

describe('unflattenIvms101', () => {
  it('inverts flattening and agrees with the SDK', async () => {
    const flat = flattenIvms101(record);
    expect(unflattenIvms101(flat)).toEqual(record);
    expect(unflattenIvms101(flat)).toEqual(await sdk.unflattenPII(flat));
  });

  it('accepts indexes up to 999, holes included', () => {
    expect((unflattenIvms101([{ key: 'a[999]', value: 'x' }]).a as string[])[999]).toBe('x');
  });

  it('leaves a hole where the SDK does (an empty string dropped from an array)', () => {
    const tree = unflattenIvms101(flattenIvms101({ addressLine: ['one', '', 'three'] }));
    const lines = tree.addressLine as string[];
    expect(lines).toHaveLength(3);
    expect(1 in lines).toBe(false);
  });

  it.each<[string, Array<{ key: unknown; value: unknown }>, string]>([
    ['a prototype key', [{ key: '__proto__.polluted', value: 'x' }], 'entries[0].key'],
    ['a constructor path', [{ key: 'a.constructor.prototype', value: 'x' }], 'entries[0].key'],
    [
      'a repeated key',
      [
        { key: 'a.b', value: 'x' },
        { key: 'a.b', value: 'y' },
      ],
      'entries[1].key',
    ],
    [
      'a value under a value',
      [
        { key: 'a', value: 'x' },
        { key: 'a.b', value: 'y' },
      ],
      'entries[1].key',
    ],
    [
      'a value over a subtree',
      [
        { key: 'a.b', value: 'x' },
        { key: 'a', value: 'y' },
      ],
      'entries[1].key',
    ],
    [
      'an index under an object',
      [
        { key: 'a.b', value: 'x' },
        { key: 'a[0]', value: 'y' },
      ],
      'entries[1].key',
    ],
    [
      'a name under an array',
      [
        { key: 'a[0]', value: 'x' },
        { key: 'a.b', value: 'y' },
      ],
      'entries[1].key',
    ],
    ['an absurd index', [{ key: 'a[1000]', value: 'x' }], 'entries[0].key'],
    ['a non-string value', [{ key: 'a', value: 1 }], 'entries[0].value'],
    ['a malformed key', [{ key: 'a..b', value: 'x' }], 'entries[0].key'],
  ])('refuses %s', (_name, entries, field) => {
    let error: unknown;
    try {
      unflattenIvms101(entries as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details.field).toBe(field);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
