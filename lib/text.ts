import { Type, type TString } from 'typebox';

/**
 * The one rule for free text that callers send (reasons, names, references, search terms): no C0 or C1 control
 * characters except tab, line feed and carriage return, and no lone UTF-16 surrogates. PostgreSQL refuses U+0000 in
 * `text`, and `pg` would silently turn a lone surrogate into U+FFFD, so either would be accepted and then fail or
 * change on the way to storage. Fastify's Ajv and TypeBox's `Value` both compile `pattern` with the `u` flag.
 */
export const FREE_TEXT_PATTERN = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]*$';
const FREE_TEXT = new RegExp(FREE_TEXT_PATTERN, 'u');

/** What the rule says, for error messages. */
export const FREE_TEXT_RULE =
  'must not contain control characters (other than tab and line breaks) or unpaired surrogates';

export interface FreeTextOptions {
  maxLength: number;
  minLength?: number;
  description?: string;
}

/** A TypeBox string schema with the free-text rule and explicit bounds: every free-text field states its length. */
export function FreeText(options: FreeTextOptions): TString {
  return Type.String({ ...options, pattern: FREE_TEXT_PATTERN });
}

/** The same rule for text that does not pass through a schema (CSV cells, query strings read by hand, headers). */
export function isFreeText(value: string): boolean {
  return FREE_TEXT.test(value);
}
