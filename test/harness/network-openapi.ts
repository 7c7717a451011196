/**
 * The network's public v1 OpenAPI (../shared/spec/notabene-v1-openapi.yaml beside the repository) as a validator of
 * the sandbox's answers (test/integration/sandbox-openapi-fidelity.test.ts): each response body is checked with ajv
 * against the schema the spec gives for its path, method and status, `$ref`s resolved inside the spec itself.
 *
 * OpenAPI 3.0 schemas are read as JSON Schema with what ajv knows of 3.0 (`nullable`); the spec's own annotations
 * (`example`, `x-…`, `deprecated`) are ignored, its formats checked by ajv-formats (`int64` and `binary`, OpenAPI's
 * own, are not checked). Where the spec is wrong, contradicts itself or contradicts interface.md (which wins), the
 * exceptions below change a copy of it, each narrowly and with its reason; nothing else about the sandbox is
 * hand-checked here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

// The spec is plain JSON read field by field.
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The spec folder lies beside the repository (shared/ in the workplace and in CI). */
export const NETWORK_OPENAPI_PATH = join(__dirname, '..', '..', '..', 'shared', 'spec', 'notabene-v1-openapi.yaml');

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

export interface SpecOperation {
  /** Upper case: GET, POST, … */
  method: string;
  /** As the spec writes it: /tf/simple/vasps/{vaspDID} */
  path: string;
  /** The statuses the spec documents for it, as numbers. */
  statuses: number[];
}

/** A change to the spec before validating, where interface.md or the spec's own evidence says otherwise. */
export interface SpecException {
  /** JSON pointer into the spec. */
  at: string;
  why: string;
  replace: (schema: Json) => Json;
}

/**
 * interface.md wins where it and the spec differ; where the spec contradicts itself, the reading its own evidence
 * supports. Each exception names the one schema it changes.
 */
export const EXCEPTIONS: SpecException[] = [
  ...['Transaction', 'TransactionResolved'].map((schema) => ({
    at: `/components/schemas/${schema}/properties/amountInLocalCurrency`,
    why: 'interface.md\'s Transaction record: "amountInLocalCurrency | number or null"; the spec says an object {amountInLocalCurrency, currency}',
    replace: () => ({ type: 'number', nullable: true }),
  })),
  {
    at: '/components/schemas/common_IdentityFields/items/properties/values/items/properties/issuanceDate',
    why: 'interface.md gives these value objects {value, issuer, issuanceDate, expirationDate} as "issuanceDate: ISO 8601 timestamp"; the spec says format date',
    replace: () => ({ type: 'string', format: 'date-time' }),
  },
  {
    at: '/components/schemas/common_IdentityFields/items/properties/values/items/properties/expirationDate',
    why: 'interface.md: "expirationDate: ISO 8601 timestamp or null"; the spec says format date, not nullable',
    replace: () => ({ type: 'string', format: 'date-time', nullable: true }),
  },
  {
    at: '/components/schemas/TransactionValidateErrors',
    why: "the spec puts the error names' enum beside `type: array`, where no array can equal a string; its description and `items: string` say each item is one of them",
    replace: (schema) => ({
      type: 'array',
      items: { type: 'string', enum: schema.enum },
      description: schema.description,
    }),
  },
  {
    at: '/components/schemas/Settings/properties/statusToProcessBlockchain',
    why: "the spec's enum lists null (unset) but its type string lacks `nullable: true`, without which OpenAPI 3.0 refuses null",
    replace: (schema) => ({ ...schema, nullable: true }),
  },
];

/**
 * The spec's named errors (`{err: {name, code, message, stack}}`, one schema per error class, e.g.
 * NotabeneTransactionValidationError) differ only in the `example` of `err.name`, so the unions that list them
 * (`oneOf`, e.g. TransactionsCreateTransferResponse) match every branch and no body could pass: each branch is told
 * apart by its `err.name`, pinned to the class name its example gives. Their `err.code` says `type: string`, but its
 * own example is the number 400, the generic Error schema's code is a number, and integrators read it as one: a
 * number is taken.
 */
function pinNamedErrors(doc: Json): string[] {
  const pinned: string[] = [];
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
    const err = schema?.properties?.err?.properties;
    if (!err?.name || typeof err.name.example !== 'string' || err.name.example !== name) continue;
    err.name = { ...err.name, const: err.name.example };
    if (err.code?.type === 'string' && typeof err.code.example === 'number') err.code = { ...err.code, type: 'number' };
    pinned.push(name);
  }
  return pinned;
}

const pointerSegments = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
const pointerOf = (...segments: string[]) =>
  segments.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

function at(doc: Json, pointer: string): Json {
  let node = doc;
  for (const s of pointerSegments(pointer)) node = node?.[s];
  return node;
}

function replaceAt(doc: Json, pointer: string, replace: (schema: Json) => Json): void {
  const segments = pointerSegments(pointer);
  const last = segments.pop()!;
  let parent = doc;
  for (const s of segments) parent = parent?.[s];
  if (parent?.[last] === undefined)
    throw new Error(`spec exception ${pointer}: the spec has no such schema (it changed: review the exception)`);
  parent[last] = replace(parent[last]);
}

const formatErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? [])
    .slice(0, 12)
    .map(
      (e) =>
        `${e.instancePath || '(body)'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`,
    );

export class NetworkOpenApi {
  /** The spec as published. */
  readonly published: Json;
  /** The spec with the exceptions applied: what bodies are validated against. */
  private readonly doc: Json;
  /** The named error schemas whose `err.name` was pinned (see pinNamedErrors). */
  readonly pinnedErrors: string[];
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(text: string) {
    this.published = parseYaml(text);
    this.doc = structuredClone(this.published);
    for (const e of EXCEPTIONS) replaceAt(this.doc, e.at, e.replace);
    this.pinnedErrors = pinNamedErrors(this.doc);
    this.ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, unicodeRegExp: false });
    addFormats(this.ajv);
    for (const openApiOnly of ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password'])
      this.ajv.addFormat(openApiOnly, true);
    this.ajv.addSchema(this.doc, 'network-v1');
  }

  static load(path = NETWORK_OPENAPI_PATH): NetworkOpenApi {
    return new NetworkOpenApi(readFileSync(path, 'utf8'));
  }

  operations(): SpecOperation[] {
    const out: SpecOperation[] = [];
    for (const [path, item] of Object.entries<Json>(this.published.paths ?? {})) {
      for (const m of METHODS) {
        const op = item?.[m];
        if (!op) continue;
        out.push({
          method: m.toUpperCase(),
          path,
          statuses: Object.keys(op.responses ?? {})
            .map(Number)
            .filter(Number.isInteger),
        });
      }
    }
    return out;
  }

  private operation(method: string, path: string): Json {
    const op = this.published.paths?.[path]?.[method.toLowerCase()];
    if (!op) throw new Error(`${method} ${path} is not an operation of the network's spec`);
    return op;
  }

  /** Request bodies the spec gives as examples (`examples` and `example` of the JSON body). */
  requestExamples(method: string, path: string): { name: string; value: unknown }[] {
    const json = this.operation(method, path).requestBody?.content?.['application/json'];
    if (!json) return [];
    const named = Object.entries<Json>(json.examples ?? {}).map(([name, e]) => ({ name, value: e?.value }));
    return json.example !== undefined ? [...named, { name: 'example', value: json.example }] : named;
  }

  private validator(pointer: string): ValidateFunction {
    let v = this.compiled.get(pointer);
    if (!v) {
      const fragment = pointerSegments(pointer)
        .map((s) => `/${encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))}`)
        .join('');
      v = this.ajv.compile({ $ref: `network-v1#${fragment}` });
      this.compiled.set(pointer, v);
    }
    return v;
  }

  /**
   * Checks a response: `undocumented` when the spec lists no such status for the operation; otherwise the schema
   * errors (none when the body validates, or when the spec gives that status no JSON body schema).
   */
  checkResponse(
    method: string,
    path: string,
    status: number,
    body: unknown,
  ): { undocumented: true } | { undocumented: false; schema?: string; errors: string[] } {
    const op = this.operation(method, path);
    if (!op.responses?.[String(status)]) return { undocumented: true };
    if (!op.responses[String(status)].content?.['application/json']?.schema) return { undocumented: false, errors: [] };
    const pointer = pointerOf(
      'paths',
      path,
      method.toLowerCase(),
      'responses',
      String(status),
      'content',
      'application/json',
      'schema',
    );
    const v = this.validator(pointer);
    const ok = v(body);
    const ref = at(this.published, pointer)?.$ref as string | undefined;
    return {
      undocumented: false,
      schema: ref?.split('/').pop() ?? 'inline schema',
      errors: ok ? [] : formatErrors(v.errors),
    };
  }

  /** Checks a JSON request body against the operation's request schema (none: no errors). */
  checkRequest(method: string, path: string, body: unknown): string[] {
    if (!this.operation(method, path).requestBody?.content?.['application/json']?.schema) return [];
    const v = this.validator(
      pointerOf('paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'),
    );
    return v(body) ? [] : formatErrors(v.errors);
  }
}

/** `/tf/simple/vasps/{vaspDID}` → `/tf/simple/vasps/:vaspDID`, as fastify registers it. */
export const fastifyPath = (specPath: string) => specPath.replace(/\{([^}]+)\}/g, ':$1');
