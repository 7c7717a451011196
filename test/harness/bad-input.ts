/**
 * Invalid requests generated from an OpenAPI document (test/integration/bad-input-corpus.test.ts): each route's
 * parameters and body schema give a valid baseline request and, with fast-check, requests that break it in exactly
 * one place the schema forbids (wrong type, missing, extra, out of range, too long, pattern, format, enum), plus the
 * domain's own kinds of garbage chosen by field name (DIDs, did:keys, JWEs, amounts, IVMS101) and whole-request faults
 * (malformed or oversized JSON, wrong content type, path tricks in ids).
 */
import fc from 'fast-check';

// OpenAPI schemas are plain JSON read field by field.
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Route {
  target: 'api' | 'sandbox';
  method: string;
  /** OpenAPI form: /v1/transfers/{id} */
  path: string;
  params: { name: string; in: 'path' | 'query' | 'header'; required: boolean; schema: Json }[];
  body?: { contentType: string; schema: Json; required: boolean };
  /** The roles the description names ("Roles: a, b."); undefined: public or not role-checked. */
  roles?: string[];
}

export interface Case {
  /** What was broken and how, e.g. `body.transactionAmount: pattern`. */
  label: string;
  /** The field a 400 must name ('' when the whole request is at fault). */
  field: string;
  path: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  body?: { contentType: string; payload: string | Buffer };
}

export function routesOf(doc: Json, target: Route['target']): Route[] {
  const out: Route[] = [];
  for (const [path, ops] of Object.entries<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(ops)) {
      if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
      const content = op.requestBody?.content ?? {};
      const contentType = Object.keys(content)[0];
      const roles = /Roles: ([a-z, ]+)\./.exec(op.description ?? '')?.[1]?.split(', ');
      out.push({
        target,
        method: method.toUpperCase(),
        path,
        roles,
        params: (op.parameters ?? []).map((p: Json) => ({
          name: p.name,
          in: p.in,
          required: !!p.required,
          schema: p.schema ?? {},
        })),
        body: contentType
          ? { contentType, schema: content[contentType].schema ?? {}, required: !!op.requestBody.required }
          : undefined,
      });
    }
  }
  return out;
}

/** Values the baseline uses for fields whose pattern or name asks for a kind of thing. */
export interface Samples {
  did: string;
  uuid: string;
  /** By field name: whole valid values (IVMS101 parties, …). */
  byName: Record<string, unknown>;
  /** By route path, then field name: what one route's baseline needs instead. */
  byRoute?: Record<string, Record<string, unknown>>;
}

const typesOf = (s: Json): string[] => {
  if (s.anyOf || s.oneOf) return [...new Set<string>((s.anyOf ?? s.oneOf).flatMap(typesOf))];
  if (s.const !== undefined) return [typeof s.const === 'number' ? 'number' : typeof s.const];
  if (Array.isArray(s.type)) return s.type;
  if (s.type) return [s.type];
  if (s.enum) return [...new Set<string>(s.enum.map((v: unknown) => (v === null ? 'null' : typeof v)))];
  return [];
};

const regex = (s: Json) => (s.pattern ? new RegExp(s.pattern, 'u') : undefined);

function validString(s: Json, name: string, samples: Samples): string {
  if (s.enum) return s.enum[0];
  if (s.const !== undefined) return s.const;
  if (s.format === 'uuid') return samples.uuid;
  if (s.format === 'date-time') return '2026-01-01T00:00:00Z';
  if (s.format === 'uri') return 'https://example.com/hook';
  const re = regex(s);
  // A pattern that starts with a literal prefix (`^address-book-`) takes the prefix and a little more.
  const prefix = /^\^([A-Za-z0-9_:-]+)/.exec(s.pattern ?? '')?.[1];
  const candidates = [
    ...(prefix ? [`${prefix}x`, `${prefix}00000000-0000-4000-8000-000000000000`] : []),
    ...(s.pattern?.includes('did:') || /did$/i.test(name) ? [samples.did] : []),
    'abc',
    'ETH',
    '1000',
    'ok-1',
    'ADDRESS_GRAPH',
    '?',
    'x',
    samples.did,
    samples.uuid,
  ].map((c) => (s.minLength && c.length < s.minLength ? c.padEnd(s.minLength, 'x') : c));
  return candidates.find((c) => (!re || re.test(c)) && (!s.maxLength || c.length <= s.maxLength)) ?? 'x';
}

/** A value the schema accepts (the first branch of a union, required properties only). */
export function validValue(s: Json, name: string, samples: Samples, all = false): unknown {
  if (name in samples.byName) return structuredClone(samples.byName[name]);
  if (s.anyOf || s.oneOf)
    return validValue((s.anyOf ?? s.oneOf).find((b: Json) => b.type !== 'null') ?? {}, name, samples);
  const type = typesOf(s)[0];
  switch (type) {
    case 'object': {
      // Required properties; all of them when none is (what the handler needs is then not in the schema).
      const o: Record<string, unknown> = {};
      const names = s.required?.length || !all ? (s.required ?? []) : Object.keys(s.properties ?? {});
      for (const k of names) o[k] = validValue(s.properties?.[k] ?? {}, k, samples);
      return o;
    }
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => validValue(s.items ?? {}, name, samples));
    case 'integer':
    case 'number':
      return s.minimum ?? (s.maximum !== undefined && s.maximum < 1 ? s.maximum : 1);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return validString(s, name, samples);
    default:
      return 'x';
  }
}

const OTHER_TYPES: Record<string, unknown[]> = {
  string: [123, -1, 1.5, true, null, [], {}, ['a'], { a: 'b' }],
  integer: ['1', 'abc', 1.5, true, null, [], {}],
  number: ['1', 'abc', true, null, [], {}],
  boolean: ['true', 1, 0, null, [], {}],
  object: ['x', 1, true, null, [], [{}]],
  array: ['x', 1, true, null, {}, { 0: 'a' }],
  null: ['x', 1, {}],
};

const BAD_DIDS = [
  'did',
  'did:',
  'did::x',
  'did:ethr',
  'did:ethr:',
  'not-a-did',
  'DID:ethr:0x1',
  'did:ethr:0x1 ',
  ' did:ethr:0x1',
  'did:e th:0x1',
  'did:ethr:0x1\u0000',
  'did:ethr:\u202e1x0',
  `did:ethr:0x${'a'.repeat(5000)}`,
  'did:web:%00',
  'did:ethr:0x1/../../admin',
];
const BAD_DIDKEYS = [
  'did:key:',
  'did:key:z',
  'did:key:z6Mk',
  `did:key:z6Mk${'1'.repeat(44)}`,
  `did:key:z6Mk${'0OIl'.repeat(11)}`,
  `did:key:z${'z'.repeat(100_000)}`,
  'did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme',
  'did:key:m6Mk',
  'did:key:z6Mk\u0000',
];
const BAD_JWES = [
  '{',
  '{}',
  '[]',
  'null',
  '{"protected":1}',
  '{"protected":"x","iv":"x","ciphertext":"x","tag":"x"}',
  'a.b.c.d.e',
  'a.b.c.d',
  `{"protected":"${'A'.repeat(5000)}","recipients":[{"header":{"skid":"did:key:z${'z'.repeat(5000)}"}}]}`,
  'eyJ\u0000',
  '\u0000',
];
const BAD_AMOUNTS = [
  '1.5',
  '-1',
  '1e20',
  '0',
  '00',
  '0x1f',
  '1,000',
  ' 1',
  '1 ',
  '١٢',
  '+1',
  '',
  `1${'0'.repeat(80)}`,
  'NaN',
  'Infinity',
  1.5,
  1e20,
  -1,
  0,
];
const BAD_IVMS = [
  {},
  { originatorPersons: 'x' },
  { originatorPersons: [] },
  { beneficiaryPersons: [{}] },
  { originatorPersons: [{ naturalPerson: { name: 'x' } }] },
  {
    originatorPersons: [
      { naturalPerson: { name: [{ nameIdentifier: [{ primaryIdentifier: 123, nameIdentifierType: 'LEGL' }] }] } },
    ],
  },
  {
    beneficiaryPersons: [
      {
        naturalPerson: {
          name: [{ nameIdentifier: [{ primaryIdentifier: 'x'.repeat(101), nameIdentifierType: 'XXXX' }] }],
        },
      },
    ],
  },
  { originatorPersons: [{ legalPerson: { name: { nameIdentifier: [] } }, naturalPerson: {} }], accountNumber: [1] },
];
const BAD_UUIDS = [
  'not-a-uuid',
  '-'.repeat(36),
  'g'.repeat(36),
  '00000000-0000-0000-0000-00000000000',
  '00000000000000000000000000000000',
  '{00000000-0000-4000-8000-000000000000}',
  ' 00000000-0000-4000-8000-000000000000',
];
/** Path parameter values: unknown ids and traversal/encoding tricks (URL-encoded once by the caller). */
export const PATH_TRICKS = [
  '..',
  '../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e',
  '%00',
  '\u0000',
  '-'.repeat(36),
  'a'.repeat(5000),
  ' ',
  'constructor',
  '__proto__',
  'toString',
  '*',
  '%',
  '{id}',
  'null',
  'undefined',
  '0',
  '-1',
  '1e20',
  'did:ethr:0x0000000000000000000000000000000000000000',
  '00000000-0000-4000-8000-000000000000',
];
// Not ' 1' or '0x10': the sandbox directory's schema coercion reads them as 1 and 16, which is lenient, not harmful.
const BAD_INTEGER_TEXT = [
  'abc',
  '1.5',
  '1e20',
  '-1',
  '１',
  '99999999999999999999999',
  'NaN',
  'Infinity',
  'true',
  '[]',
  '1,2',
];

/** Strings that break a string schema (pattern, length, format, enum), as query/path text or a JSON value. */
function badStrings(s: Json, name: string): fc.Arbitrary<[string, string]> | undefined {
  const arbs: fc.Arbitrary<[string, string]>[] = [];
  const re = regex(s);
  const inEnum = (v: string) => (s.enum ? s.enum.includes(v) : s.const !== undefined ? v === s.const : true);
  if (s.maxLength !== undefined)
    arbs.push(fc.integer({ min: s.maxLength + 1, max: s.maxLength + 2000 }).map((n) => ['overlong', 'a'.repeat(n)]));
  if (s.minLength) arbs.push(fc.constant<[string, string]>(['empty', '']));
  const known = [
    ...(s.pattern?.includes('did:') || /did$/i.test(name) ? BAD_DIDS : []),
    ...(/didkey|did_key|key$/i.test(name) ? BAD_DIDKEYS : []),
    ...(s.format === 'uuid' || /id$/i.test(name) ? BAD_UUIDS : []),
    ...(/amount/i.test(name) ? BAD_AMOUNTS.filter((a): a is string => typeof a === 'string') : []),
    ...(/encrypted|jwe|^value$|data/i.test(name) ? BAD_JWES : []),
    'x\u0000y',
    '\u0000',
    'a\u0085b',
    '\ud800',
    '',
    ' ',
    '%',
    'constructor',
    '__proto__',
  ];
  const rejected = (v: string) =>
    (re && !re.test(v)) ||
    (s.maxLength !== undefined && v.length > s.maxLength) ||
    (s.minLength !== undefined && v.length < s.minLength) ||
    (s.format === 'uuid' && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)) ||
    !inEnum(v);
  const pick = known.filter(rejected);
  if (pick.length) {
    arbs.push(fc.constantFrom(...pick).map((v) => ['known bad', v]));
    // Random text around a refused piece: rarely accepted, so the filter passes almost always.
    arbs.push(
      fc
        .tuple(
          fc.string({ maxLength: 30, unit: 'binary' }),
          fc.constantFrom(...pick),
          fc.string({ maxLength: 10, unit: 'binary' }),
        )
        .map(([a, bad, b]) => `${a}${bad}${b}`)
        .filter(rejected)
        .map((v) => ['random', v]),
    );
  }
  return arbs.length ? fc.oneof(...arbs) : undefined;
}

/** Number texts a query/path integer refuses. */
function badIntegerTexts(s: Json): fc.Arbitrary<[string, string]> {
  const extra = [
    ...(s.minimum !== undefined ? [String(s.minimum - 1), String(-1e20)] : []),
    ...(s.maximum !== undefined ? [String(s.maximum + 1), '1e20'] : []),
  ];
  return fc
    .constantFrom(...BAD_INTEGER_TEXT, ...extra)
    .filter((v) => {
      if (!/^-?\d+$/.test(v)) return true;
      const n = Number(v);
      return (
        (s.minimum !== undefined && n < s.minimum) ||
        (s.maximum !== undefined && n > s.maximum) ||
        !Number.isSafeInteger(n)
      );
    })
    .map((v) => ['number', v]);
}

function canBreak(s: Json): boolean {
  const types = typesOf(s);
  if (!types.length) return false;
  if (types.length === 1 && types[0] === 'string') {
    return !!(
      s.pattern ||
      s.maxLength !== undefined ||
      s.minLength ||
      s.enum ||
      s.const !== undefined ||
      s.format === 'uuid'
    );
  }
  return true;
}

/** A JSON value breaking `s` in one way, with what it is. */
function badJson(s: Json, name: string): fc.Arbitrary<[string, unknown]> | undefined {
  const types = typesOf(s);
  const arbs: fc.Arbitrary<[string, unknown]>[] = [];
  const others = Object.entries(OTHER_TYPES)
    .filter(([t]) => !types.includes(t) && !(t === 'integer' && types.includes('number')))
    .flatMap(([, vs]) => vs)
    .filter(
      (v) =>
        !types.includes(
          v === null
            ? 'null'
            : Array.isArray(v)
              ? 'array'
              : typeof v === 'number'
                ? Number.isInteger(v) && types.includes('integer')
                  ? 'integer'
                  : 'number'
                : typeof v,
        ),
    );
  const ownOther = OTHER_TYPES[types[0] ?? 'string']!.filter(
    (v) =>
      !types.includes(v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v),
  );
  const wrong = types.length ? ownOther.filter((v) => others.includes(v)) : [];
  if (wrong.length) arbs.push(fc.constantFrom(...wrong).map((v) => ['wrong type', v]));
  const strings = types.length === 1 && types[0] === 'string' ? badStrings(s, name) : undefined;
  if (strings) arbs.push(strings);
  if (types.includes('integer') || (types.length === 1 && types[0] === 'number')) {
    const nums = [
      ...(types.includes('integer') && !types.includes('number') ? [1.5, 0.1, 1e20 + 0.5] : []),
      ...(s.minimum !== undefined ? [s.minimum - 1, -1e20] : []),
      ...(s.maximum !== undefined ? [s.maximum + 1, 1e20, Number.MAX_SAFE_INTEGER + 2] : []),
    ];
    if (nums.length) arbs.push(fc.constantFrom(...nums).map((v) => ['number', v]));
  }
  if (types.includes('array') && types.length === 1) {
    if (s.maxItems !== undefined)
      arbs.push(
        fc.constant([
          'too many items',
          Array.from({ length: s.maxItems + 1 }, () =>
            validValue(s.items ?? {}, name, {
              did: 'did:x:y',
              uuid: '00000000-0000-4000-8000-000000000000',
              byName: {},
            }),
          ),
        ]),
      );
    if (s.minItems) arbs.push(fc.constant(['empty array', []]));
  }
  if (types.includes('object') && types.length === 1 && s.additionalProperties === false) {
    arbs.push(fc.constant(['extra property', { __extra: 1 }]));
  }
  if (/amount/i.test(name)) arbs.push(fc.constantFrom(...BAD_AMOUNTS).map((v) => ['amount', v]));
  if (/^(originator|beneficiary)$/.test(name)) arbs.push(fc.constantFrom(...BAD_IVMS).map((v) => ['IVMS101', v]));
  return arbs.length ? fc.oneof(...arbs) : undefined;
}

/**
 * The body with a valid object at the slot: an optional object the baseline leaves out is filled in, so that an extra
 * property inside it is the only thing wrong.
 */
function withObjectAt(body: unknown, slot: Slot, samples: Samples): unknown {
  let node = body as Record<string | number, unknown> | undefined;
  for (const p of slot.path) node = node?.[p] as Record<string | number, unknown> | undefined;
  return node === undefined ? setAt(body, slot.path, validValue(slot.schema, slot.name, samples, true)) : body;
}

/** Sets `value` at `path` (property names and array indexes) inside a copy of `root`; undefined deletes. */
function setAt(root: unknown, path: (string | number)[], value: unknown): unknown {
  if (!path.length) return value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const p of path.slice(0, -1)) node = node[p] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else if (last === '__extra' && typeof value === 'object') Object.assign(node, value);
  else node[last] = value;
  return copy;
}

interface Slot {
  path: (string | number)[];
  schema: Json;
  required: boolean;
  name: string;
}

/** Every property of a body schema down to `depth`, present in the baseline (arrays: their first item). */
function slots(s: Json, base: unknown, path: (string | number)[] = [], depth = 4): Slot[] {
  if (depth === 0 || typeof base !== 'object' || base === null) return [];
  const out: Slot[] = [];
  if (Array.isArray(base)) {
    if (base.length && s.items) {
      out.push({ path: [...path, 0], schema: s.items, required: true, name: String(path[path.length - 1] ?? '') });
      out.push(...slots(s.items, base[0], [...path, 0], depth - 1));
    }
    return out;
  }
  const props: Record<string, Json> = s.properties ?? {};
  for (const [k, ps] of Object.entries(props)) {
    const required = (s.required ?? []).includes(k);
    out.push({ path: [...path, k], schema: ps, required, name: k });
    const child = (base as Record<string, unknown>)[k];
    if (child !== undefined)
      out.push(
        ...slots(
          ps.anyOf
            ? (ps.anyOf.find((b: Json) => typesOf(b)[0] === (Array.isArray(child) ? 'array' : typeof child)) ?? ps)
            : ps,
          child,
          [...path, k],
          depth - 1,
        ),
      );
  }
  return out;
}

const fieldName = (path: (string | number)[]) =>
  path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
    .join('')
    .replace(/^\./, '');

export interface Baseline {
  path: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
}

export function baselineOf(route: Route, general: Samples): Baseline {
  const samples = { ...general, byName: { ...general.byName, ...general.byRoute?.[route.path] } };
  const b: Baseline = { path: {}, query: {}, headers: {}, body: undefined };
  for (const p of route.params) {
    if (p.in === 'header' && p.name === 'idempotency-key') b.headers[p.name] = samples.uuid;
    if (!p.required) continue;
    const v = String(validValue(p.schema, p.name, samples));
    if (p.in === 'path') b.path[p.name] = v;
    else if (p.in === 'query') b.query[p.name] = v;
    else b.headers[p.name] = v;
  }
  for (const m of route.path.matchAll(/\{(\w+)\}/g)) b.path[m[1]!] ??= samples.uuid;
  if (route.body) b.body = validValue(route.body.schema, '', samples, true);
  // What the route's handler needs besides the schema's required fields.
  const own = general.byRoute?.[route.path] ?? {};
  if (typeof b.body === 'object' && b.body !== null && !Array.isArray(b.body)) {
    for (const [k, v] of Object.entries(own))
      if (k in (route.body?.schema.properties ?? {})) (b.body as Record<string, unknown>)[k] = v;
  }
  return b;
}

const json = (v: unknown) => ({ contentType: 'application/json', payload: JSON.stringify(v) });

/** All the ways to break this route's request, as one arbitrary of cases. */
export function caseArbitrary(route: Route, general: Samples, bodyLimit: number): fc.Arbitrary<Case> | undefined {
  const base = baselineOf(route, general);
  const samples = { ...general, byName: { ...general.byName, ...general.byRoute?.[route.path] } };
  const make = (
    label: string,
    field: string,
    over: Partial<{
      path: Record<string, string>;
      query: Record<string, string | string[]>;
      body: Case['body'] | null;
      headers: Record<string, string>;
    }>,
  ): Case => {
    const query = Object.entries(over.query ?? base.query).flatMap(([k, v]) =>
      Array.isArray(v) ? v.map((x) => [k, x] as [string, string]) : [[k, v] as [string, string]],
    );
    const body =
      over.body === null ? undefined : (over.body ?? (base.body === undefined ? undefined : json(base.body)));
    return { label, field, path: over.path ?? base.path, query, headers: { ...base.headers, ...over.headers }, body };
  };
  const arbs: { weight: number; arbitrary: fc.Arbitrary<Case> }[] = [];
  const add = (weight: number, arbitrary: fc.Arbitrary<Case>) => arbs.push({ weight, arbitrary });

  for (const p of route.params.filter((x) => x.in === 'path' || x.in === 'query')) {
    const where = p.in === 'path' ? 'path' : 'query';
    // A body field of the same name would be read instead of the query's (DELETE /webhook takes either): leave it out.
    const bodyWithout =
      typeof base.body === 'object' && base.body !== null && p.name in base.body
        ? { body: json(Object.fromEntries(Object.entries(base.body).filter(([k]) => k !== p.name))) }
        : {};
    const set = (v: string | string[]) =>
      where === 'path'
        ? { path: { ...base.path, [p.name]: v as string } }
        : { query: { ...base.query, [p.name]: v }, ...bodyWithout };
    const types = typesOf(p.schema);
    if (where === 'path')
      add(
        2,
        fc.constantFrom(...PATH_TRICKS).map((v) => make(`${p.name}: path trick or unknown id`, p.name, set(v))),
      );
    if (types.length === 1 && types[0] === 'boolean')
      add(
        1,
        fc
          .constantFrom('maybe', '2', 'TRUE1', '', 'constructor')
          .map((v) => make(`${p.name}: not a boolean`, p.name, set(v))),
      );
    else if (types.includes('integer') || types.includes('number'))
      add(
        2,
        badIntegerTexts(p.schema).map(([k, v]) =>
          make(`${p.name}: ${k} ${JSON.stringify(v).slice(0, 30)}`, p.name, set(v)),
        ),
      );
    else {
      const strings = badStrings(p.schema, p.name);
      // A lone surrogate cannot travel in a URL (it is sent as U+FFFD, which is valid): left to JSON bodies.
      if (strings)
        add(
          3,
          strings.filter(([, v]) => !/\p{Surrogate}/u.test(v)).map(([k, v]) => make(`${p.name}: ${k}`, p.name, set(v))),
        );
    }
    if (where === 'query' && p.required) {
      add(
        1,
        fc.constant(
          make(`${p.name}: missing`, p.name, {
            query: Object.fromEntries(Object.entries(base.query).filter(([k]) => k !== p.name)),
          }),
        ),
      );
    }
    if (where === 'query' && types.length === 1 && types[0] !== 'array' && canBreak(p.schema)) {
      add(
        1,
        fc.constant(
          make(`${p.name}: given twice`, p.name, {
            query: { ...base.query, [p.name]: [String(validValue(p.schema, p.name, samples)), 'x'] },
            ...bodyWithout,
          }),
        ),
      );
    }
  }

  // Other content types (the sandbox's multipart upload) have hand-written cases of their own.
  if (route.body?.contentType === 'application/json') {
    const isJson = true;
    for (const slot of slots(route.body.schema, base.body)) {
      const f = fieldName(slot.path);
      const bad = badJson(slot.schema, slot.name);
      if (bad)
        add(
          3,
          bad.map(([k, v]) =>
            make(`body.${f}: ${k}`, k === 'extra property' ? '__extra' : slot.name, {
              body: json(
                k === 'extra property'
                  ? setAt(withObjectAt(base.body, slot, samples), [...slot.path, '__extra'], v)
                  : setAt(base.body, slot.path, v),
              ),
            }),
          ),
        );
      if (slot.required)
        add(
          1,
          fc.constant(make(`body.${f}: missing`, slot.name, { body: json(setAt(base.body, slot.path, undefined)) })),
        );
    }
    if (typesOf(route.body.schema).includes('object') && route.body.schema.additionalProperties === false) {
      add(
        1,
        fc
          .constantFrom('__extra', 'actor')
          .map((k) => make(`body: extra property ${k}`, k, { body: json({ ...(base.body as object), [k]: 'x' }) })),
      );
    }
    const wholeTypes = typesOf(route.body.schema);
    add(
      1,
      fc
        .constantFrom<unknown>([], 'text', 1, null, true, {})
        .filter(
          (v) =>
            !(Array.isArray(v)
              ? wholeTypes.includes('array')
              : v !== null && typeof v === 'object'
                ? !route.body!.schema.required?.length
                : false),
        )
        .map((v) => make(`body: ${JSON.stringify(v)} instead of the body`, '', { body: json(v) })),
    );
    if (isJson) {
      add(
        1,
        fc
          .constantFrom('{', '{"a":', '[1,]', "{'a':1}", '{"a":1}}', '\u0000', '', 'null null', '{"a":1,"a":')
          .map((t) =>
            make(`body: malformed JSON ${JSON.stringify(t).slice(0, 20)}`, '', {
              body: { contentType: 'application/json', payload: t },
            }),
          ),
      );
      add(
        1,
        fc
          .constantFrom(
            'text/plain',
            'application/xml',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/octet-stream',
            'application/jsonp',
          )
          .map((ct) =>
            make(`body: content type ${ct}`, '', {
              body: {
                contentType: ct,
                payload: ct.startsWith('application/x-www') ? 'a=1&b=2' : JSON.stringify(base.body),
              },
            }),
          ),
      );
      add(
        1,
        fc.constant(
          make('body: oversized', '', {
            body: { contentType: 'application/json', payload: Buffer.alloc(bodyLimit + 1, 0x20) },
          }),
        ),
      );
    }
  }
  if (!arbs.length) return undefined;
  return fc.oneof(...arbs);
}
