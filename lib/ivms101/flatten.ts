/**
 * The network's flattened form of IVMS101: one `{key, value}` per non-empty string leaf, keyed by a path such as
 * `originator.originatorPersons[0].naturalPerson.name[0].nameIdentifier[0].primaryIdentifier`. Reproduces the vendor
 * SDK's `flattenPII`/`unflattenPII` (lodash transform/set) exactly, including their order and what they drop, because
 * the network and counterparties exchange these keys; the differences are that unflattening refuses paths that lodash
 * would resolve in surprising ways (prototype keys, conflicting or repeated paths, absurd indexes) instead of
 * guessing, and that `lossyLeaves` lets callers refuse data flattening would lose.
 */
import { ValidationError } from '../errors';

export interface FlatEntry {
  key: string;
  value: string;
}

const NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const FORBIDDEN_NAMES = new Set(['__proto__', 'prototype', 'constructor']);
const MAX_ARRAY_INDEX = 999;

/**
 * Flattens like the SDK: objects and arrays are walked in key order, and only string leaves of length > 0 survive —
 * numbers, booleans, null, empty strings and empty containers vanish. (An array directly inside an array, which
 * IVMS101 never has, is where the SDK's output is malformed, `a[0[1]]`; here it is `a[0][1]`.)
 */
export function flattenIvms101(tree: unknown): FlatEntry[] {
  const out: FlatEntry[] = [];
  walk(tree, '', out);
  return out;
}

function walk(value: unknown, path: string, out: FlatEntry[]): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walk(value[i], `${path}[${i}]`, out);
  } else if (typeof value === 'object' && value !== null) {
    for (const [name, child] of Object.entries(value)) {
      if (!NAME.test(name)) throw new ValidationError(path ? `${path}.${name}` : name, 'is not a valid field name');
      walk(child, path ? `${path}.${name}` : name, out);
    }
  } else if (typeof value === 'string' && value.length > 0 && path) {
    out.push({ key: path, value });
  }
}

/** Paths of leaves that carry data the flattened form cannot (numbers and booleans). */
export function lossyLeaves(tree: unknown, path = ''): string[] {
  if (typeof tree === 'number' || typeof tree === 'boolean' || typeof tree === 'bigint') return [path || '(root)'];
  if (Array.isArray(tree)) return tree.flatMap((child, i) => lossyLeaves(child, `${path}[${i}]`));
  if (typeof tree === 'object' && tree !== null) {
    return Object.entries(tree).flatMap(([name, child]) => lossyLeaves(child, path ? `${path}.${name}` : name));
  }
  return [];
}

type Segment = string | number;

/** Splits `a.b[0].c` into `['a', 'b', 0, 'c']`, or returns undefined if it is not a path flattening can produce. */
export function parseFlatKey(key: unknown): Segment[] | undefined {
  if (typeof key !== 'string') return undefined;
  const segments: Segment[] = [];
  const token = /\.?([A-Za-z_$][A-Za-z0-9_$]*)|\[(0|[1-9][0-9]{0,8})\]/y;
  let at = 0;
  while (at < key.length) {
    token.lastIndex = at;
    const match = token.exec(key);
    if (!match) return undefined;
    const [text, name, index] = match;
    const dotted = text.startsWith('.');
    if (name !== undefined) {
      // A name needs a dot unless it starts the key; the first segment must be a name.
      if (dotted === (at === 0) || FORBIDDEN_NAMES.has(name)) return undefined;
      segments.push(name);
    } else {
      if (at === 0) return undefined;
      segments.push(Number(index));
    }
    at += text.length;
  }
  return segments.length > 0 ? segments : undefined;
}

/**
 * Rebuilds the tree from flattened entries as the SDK's lodash `set` does: an index segment makes an array, a name an
 * object. Array slots that were empty strings when flattened stay holes, as with the SDK.
 */
export function unflattenIvms101(entries: readonly FlatEntry[], field = 'entries'): Record<string, unknown> {
  if (!Array.isArray(entries)) throw new ValidationError(field, 'must be an array of {key, value}');
  const root: Record<string, unknown> = {};
  entries.forEach((entry, i) => {
    const at = `${field}[${i}]`;
    if (typeof entry !== 'object' || entry === null) throw new ValidationError(at, 'must be an object {key, value}');
    const path = parseFlatKey(entry.key);
    if (!path)
      throw new ValidationError(`${at}.key`, 'must be an IVMS101 path such as originator.originatorPersons[0]');
    if (typeof entry.value !== 'string') throw new ValidationError(`${at}.value`, 'must be a string');
    setPath(root, path, entry.value, at);
  });
  return root;
}

function setPath(root: Record<string, unknown>, path: Segment[], value: string, at: string): void {
  let node: Record<string, unknown> | unknown[] = root;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    const last = i === path.length - 1;
    if (typeof segment === 'number') {
      if (!Array.isArray(node)) throw conflict(at);
      // Holes are legitimate (dropped empty strings), but an index far beyond any IVMS101 list would make a
      // huge sparse array for whoever iterates it next.
      if (segment > MAX_ARRAY_INDEX) throw new ValidationError(`${at}.key`, `has an index above ${MAX_ARRAY_INDEX}`);
    } else if (Array.isArray(node)) {
      throw conflict(at);
    }
    const slots = node as Record<Segment, unknown>;
    const existing = slots[segment];
    if (last) {
      if (existing !== undefined) throw conflict(at);
      slots[segment] = value;
      return;
    }
    const wantArray = typeof path[i + 1] === 'number';
    if (existing === undefined) {
      slots[segment] = wantArray ? [] : {};
    } else if (typeof existing !== 'object' || existing === null || Array.isArray(existing) !== wantArray) {
      throw conflict(at);
    }
    node = slots[segment] as Record<string, unknown> | unknown[];
  }
}

function conflict(at: string): ValidationError {
  return new ValidationError(`${at}.key`, 'repeats or contradicts the path of another entry');
}
