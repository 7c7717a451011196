import Ajv from 'ajv';
import { Value } from 'typebox/value';
import { FREE_TEXT_PATTERN, FreeText, isFreeText } from '../../../lib/text';

const refused = [
  'a\u0000b',
  'bell\u0007',
  'esc\u001b[31m',
  'del\u007f',
  'c1\u0085',
  'lone \ud800 high',
  'lone \udfff low',
];
const accepted = ['plain', 'tab\there', 'two\nlines\r\n', 'é ü ß', '日本語', '😀 pair'];

describe('free text rule', () => {
  const schema = FreeText({ maxLength: 100 });
  const ajvCheck = new Ajv().compile({ type: 'string', pattern: FREE_TEXT_PATTERN });

  it.each(refused)('refuses %j in the schema (TypeBox and Ajv) and by hand', (text) => {
    expect(Value.Check(schema, text)).toBe(false);
    expect(ajvCheck(text)).toBe(false);
    expect(isFreeText(text)).toBe(false);
  });

  it.each(accepted)('accepts %j', (text) => {
    expect(Value.Check(schema, text)).toBe(true);
    expect(ajvCheck(text)).toBe(true);
    expect(isFreeText(text)).toBe(true);
  });

  it('keeps the bounds it is given', () => {
    expect(Value.Check(FreeText({ minLength: 1, maxLength: 3 }), '')).toBe(false);
    expect(Value.Check(FreeText({ minLength: 1, maxLength: 3 }), 'abcd')).toBe(false);
  });
});
