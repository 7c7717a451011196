/** The rules engine's SQL: a VASP's rules per direction, replaced whole per direction, deleted by id. */
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

type Db = Pool | PoolClient;

export type Direction = 'incoming' | 'outgoing';

export interface RuleInput {
  order: number;
  actionRule: string;
  ruleCheck: string;
  ruleValue: string;
  source?: string | null;
}

export interface StoredRule extends RuleInput {
  id: string;
  vaspDID: string;
  direction: Direction;
  source: string | null;
  createdAt: string;
  createdBy: string;
}

interface Row {
  id: string;
  vasp_did: string;
  direction: Direction;
  order: number;
  action_rule: string;
  rule_check: string;
  rule_value: string;
  source: string | null;
  created_at: Date;
  created_by: string;
}

const toRule = (r: Row): StoredRule => ({
  id: r.id,
  vaspDID: r.vasp_did,
  direction: r.direction,
  order: r.order,
  actionRule: r.action_rule,
  ruleCheck: r.rule_check,
  ruleValue: r.rule_value,
  source: r.source,
  createdAt: r.created_at.toISOString(),
  createdBy: r.created_by,
});

/** The VASP's rules, incoming first, each direction in order. */
export async function listRules(db: Db, vaspDid: string): Promise<StoredRule[]> {
  const { rows } = await db.query<Row>(
    `select id::text as id, vasp_did, direction, "order", action_rule, rule_check, rule_value, source, created_at, created_by
       from rules where vasp_did = $1 order by direction, "order", created_at, id`,
    [vaspDid],
  );
  return rows.map(toRule);
}

/** Replaces the VASP's rules of one direction with `rules` (new ids). */
export async function replaceRules(
  db: PoolClient,
  vaspDid: string,
  direction: Direction,
  rules: RuleInput[],
  createdBy: string,
): Promise<void> {
  await db.query('delete from rules where vasp_did = $1 and direction = $2', [vaspDid, direction]);
  if (rules.length === 0) return;
  await db.query(
    `insert into rules (id, vasp_did, direction, "order", action_rule, rule_check, rule_value, source, created_by)
     select r.id, $1, $2, r.o, r.a, r.c, r.v, r.s, $3
       from unnest($4::uuid[], $5::float8[], $6::text[], $7::text[], $8::text[], $9::text[]) as r(id, o, a, c, v, s)`,
    [
      vaspDid,
      direction,
      createdBy,
      rules.map(() => randomUUID()),
      rules.map((r) => r.order),
      rules.map((r) => r.actionRule),
      rules.map((r) => r.ruleCheck),
      rules.map((r) => r.ruleValue),
      rules.map((r) => r.source ?? null),
    ],
  );
}

/** Deletes the VASP's rules with these ids, all or none: the ids that are not the VASP's rules when any is missing. */
export async function deleteRules(db: PoolClient, vaspDid: string, ids: string[]): Promise<{ missing: string[] }> {
  const { rows } = await db.query<{ id: string }>(
    `select id::text as id from rules where vasp_did = $1 and id::text = any($2::text[]) for update`,
    [vaspDid, ids.map((id) => id.toLowerCase())],
  );
  const found = new Set(rows.map((r) => r.id));
  const missing = [...new Set(ids.filter((id) => !found.has(id.toLowerCase())))];
  if (missing.length) return { missing };
  await db.query('delete from rules where vasp_did = $1 and id::text = any($2::text[])', [vaspDid, [...found]]);
  return { missing: [] };
}

/** Names of the directory's VASPs, for the rules that list them. */
export async function vaspNames(db: Db, dids: string[]): Promise<Map<string, string>> {
  if (dids.length === 0) return new Map();
  const { rows } = await db.query<{ did: string; name: string }>(
    'select did, name from vasps where did = any($1::text[])',
    [dids],
  );
  return new Map(rows.map((r) => [r.did, r.name]));
}
