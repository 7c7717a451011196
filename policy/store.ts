/**
 * Policies' SQL: immutable versions per VASP (a subsidiary's DID, or the gateway's for the group's policy), which
 * version is active and which runs in shadow, and the decisions they took (policy_decisions).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { canonicalJson } from '../audit/chain';
import { withTransaction } from '../db/transaction';
import { exactTimestamp } from '../db/listing';
import { NotFoundError } from '../lib/errors';
import type { Direction, PolicyDecision, PolicyDocument, PolicyFacts, PolicyRule, PolicyVersion } from './types';

type Db = Pool | PoolClient;

const isPool = (db: Db): db is Pool => 'totalCount' in db;

/**
 * Runs `work` in a transaction holding the VASP's policy lock: in a new one on a pool, or in the caller's (a client
 * is taken to be in one already, so its route can save, activate and audit atomically).
 */
async function locked<T>(db: Db, vaspDid: string, work: (tx: PoolClient) => Promise<T>): Promise<T> {
  const key = `policy:${vaspDid}`;
  if (isPool(db)) return withTransaction(db, work, key);
  await db.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
  return work(db);
}

/** The document as it is hashed and stored: known fields only, rules sorted by order. */
export function canonicalDocument(document: PolicyDocument): PolicyDocument {
  const rules = (list: readonly PolicyRule[]) =>
    [...list]
      .sort((a, b) => a.order - b.order)
      .map(({ order, actionRule, ruleCheck, ruleValue, source }) =>
        source === undefined || source === null
          ? { order, actionRule, ruleCheck, ruleValue }
          : { order, actionRule, ruleCheck, ruleValue, source },
      );
  return { currency: document.currency, incoming: rules(document.incoming), outgoing: rules(document.outgoing) };
}

export function policyContentHash(document: PolicyDocument): string {
  return createHash('sha256')
    .update(canonicalJson(canonicalDocument(document)))
    .digest('hex');
}

const versionColumns = (t: string) =>
  `${t}.id::text as id, ${t}.vasp_did, ${t}.version, ${t}.content_hash, ${t}.document, ${t}.author, ${t}.note, ${exactTimestamp(`${t}.created_at`)} as created_at`;
const VERSION_COLUMNS = versionColumns('policy_versions');

interface VersionRow {
  id: string;
  vasp_did: string;
  version: number;
  content_hash: string;
  document: PolicyDocument;
  author: string;
  note: string;
  created_at: string;
}

const toVersion = (r: VersionRow): PolicyVersion => ({
  id: r.id,
  vaspDid: r.vasp_did,
  version: r.version,
  contentHash: r.content_hash,
  currency: r.document.currency,
  incoming: r.document.incoming,
  outgoing: r.document.outgoing,
  author: r.author,
  createdAt: r.created_at,
  note: r.note,
});

/**
 * Saves a document as the VASP's next version. The document must have passed ruleListProblems. The same document as
 * the latest version returns that version unchanged (no new number, the note ignored).
 */
export async function savePolicyVersion(
  db: Db,
  input: { vaspDid: string; document: PolicyDocument; author: string; note: string },
): Promise<PolicyVersion> {
  const document = canonicalDocument(input.document);
  const contentHash = policyContentHash(document);
  return locked(db, input.vaspDid, async (tx) => {
    const latest = await tx.query<VersionRow>(
      `select ${VERSION_COLUMNS} from policy_versions where vasp_did = $1 order by version desc limit 1`,
      [input.vaspDid],
    );
    const last = latest.rows[0];
    if (last?.content_hash === contentHash) return toVersion(last);
    const { rows } = await tx.query<VersionRow>(
      `insert into policy_versions (id, vasp_did, version, content_hash, document, author, note)
       values ($1, $2, $3, $4, $5, $6, $7) returning ${VERSION_COLUMNS}`,
      [
        randomUUID(),
        input.vaspDid,
        (last?.version ?? 0) + 1,
        contentHash,
        JSON.stringify(document),
        input.author,
        input.note,
      ],
    );
    return toVersion(rows[0]!);
  });
}

async function requireVersion(tx: PoolClient, vaspDid: string, versionId: string): Promise<PolicyVersion> {
  const { rows } = await tx.query<VersionRow>(
    `select ${VERSION_COLUMNS} from policy_versions where id = $1 and vasp_did = $2`,
    [versionId, vaspDid],
  );
  if (!rows[0])
    throw new NotFoundError(`policy version ${versionId} is not one of ${vaspDid}'s`, {
      field: 'versionId',
      rule: "must be a version of this VASP's policy",
    });
  return toVersion(rows[0]);
}

/** Makes a version of the VASP's the one that decides its transfers. */
export async function activatePolicyVersion(
  db: Db,
  vaspDid: string,
  versionId: string,
  actor: string,
): Promise<PolicyVersion> {
  return locked(db, vaspDid, async (tx) => {
    const version = await requireVersion(tx, vaspDid, versionId);
    // A version made active stops being its own shadow.
    await tx.query(
      `insert into policy_assignments (vasp_did, active_version_id, updated_by) values ($1, $2, $3)
       on conflict (vasp_did) do update set active_version_id = excluded.active_version_id,
         shadow_version_id = nullif(policy_assignments.shadow_version_id, excluded.active_version_id),
         updated_by = excluded.updated_by, updated_at = clock_timestamp()`,
      [vaspDid, versionId, actor],
    );
    return version;
  });
}

/** Runs a version of the VASP's beside the active one (recorded, never acted on); `null` stops shadow mode. */
export async function setShadowVersion(
  db: Db,
  vaspDid: string,
  versionId: string | null,
  actor: string,
): Promise<PolicyVersion | undefined> {
  return locked(db, vaspDid, async (tx) => {
    const version = versionId === null ? undefined : await requireVersion(tx, vaspDid, versionId);
    await tx.query(
      `insert into policy_assignments (vasp_did, shadow_version_id, updated_by) values ($1, $2, $3)
       on conflict (vasp_did) do update set shadow_version_id = excluded.shadow_version_id,
         updated_by = excluded.updated_by, updated_at = clock_timestamp()`,
      [vaspDid, versionId, actor],
    );
    return version;
  });
}

/** The VASP's own versions, newest first. */
export async function policyHistory(db: Db, vaspDid: string): Promise<PolicyVersion[]> {
  const { rows } = await db.query<VersionRow>(
    `select ${VERSION_COLUMNS} from policy_versions where vasp_did = $1 order by version desc`,
    [vaspDid],
  );
  return rows.map(toVersion);
}

export async function latestPolicyVersion(db: Db, vaspDid: string): Promise<PolicyVersion | undefined> {
  const { rows } = await db.query<VersionRow>(
    `select ${VERSION_COLUMNS} from policy_versions where vasp_did = $1 order by version desc limit 1`,
    [vaspDid],
  );
  return rows[0] && toVersion(rows[0]);
}

export async function policyVersion(db: Db, vaspDid: string, versionId: string): Promise<PolicyVersion | undefined> {
  const { rows } = await db.query<VersionRow>(
    `select ${VERSION_COLUMNS} from policy_versions where id = $1 and vasp_did = $2`,
    [versionId, vaspDid],
  );
  return rows[0] && toVersion(rows[0]);
}

/** The VASP's own active and shadow versions, without falling back to the group's. */
export async function ownPolicies(
  db: Db,
  vaspDid: string,
): Promise<{ active?: PolicyVersion; shadow?: PolicyVersion }> {
  return policiesOf(db, [vaspDid]);
}

/**
 * The versions that decide a subsidiary's transfers: its own active one, else the group's (kept under the gateway's
 * DID). The shadow version is its own, else the group's when the group's active version is the one deciding (a
 * group candidate compared with a subsidiary's own rules would compare two unrelated policies). One query.
 */
export async function policiesFor(
  db: Db,
  subsidiaryDid: string,
  gatewayDid: string,
): Promise<{ active?: PolicyVersion; shadow?: PolicyVersion }> {
  return policiesOf(db, subsidiaryDid === gatewayDid ? [gatewayDid] : [subsidiaryDid, gatewayDid]);
}

async function policiesOf(db: Db, dids: string[]): Promise<{ active?: PolicyVersion; shadow?: PolicyVersion }> {
  const { active, shadow } = await assigned<VersionRow>(db, dids, versionColumns('v'));
  return { ...(active ? { active: toVersion(active) } : {}), ...(shadow ? { shadow: toVersion(shadow) } : {}) };
}

/** A version's identity without its rules: enough to find its compiled rules in the cache (policy/compiled.ts). */
export interface PolicyVersionRef {
  id: string;
  vaspDid: string;
  version: number;
  contentHash: string;
}

/**
 * policiesFor without the documents: a transfer's decision reads the versions' identities only, and a version's
 * rules (immutable, up to thousands) once per process (policyVersionById). One query.
 */
export async function policyRefsFor(
  db: Db,
  subsidiaryDid: string,
  gatewayDid: string,
): Promise<{ active?: PolicyVersionRef; shadow?: PolicyVersionRef }> {
  const dids = subsidiaryDid === gatewayDid ? [gatewayDid] : [subsidiaryDid, gatewayDid];
  const { active, shadow } = await assigned<Omit<VersionRow, 'document' | 'author' | 'note' | 'created_at'>>(
    db,
    dids,
    'v.id::text as id, v.vasp_did, v.version, v.content_hash',
  );
  const ref = (r: typeof active) =>
    r && { id: r.id, vaspDid: r.vasp_did, version: r.version, contentHash: r.content_hash };
  return { ...(active ? { active: ref(active) } : {}), ...(shadow ? { shadow: ref(shadow) } : {}) };
}

/** One version by its id, whoever's it is. */
export async function policyVersionById(db: Db, id: string): Promise<PolicyVersion | undefined> {
  const { rows } = await db.query<VersionRow>(`select ${VERSION_COLUMNS} from policy_versions where id = $1`, [id]);
  return rows[0] && toVersion(rows[0]);
}

/** The active and shadow rows assigned to the first of `dids` that has them (the subsidiary first). */
async function assigned<R>(db: Db, dids: string[], columns: string): Promise<{ active?: R; shadow?: R }> {
  // Rows come in the order of `dids` (the subsidiary first), each slot with its version.
  const { rows } = await db.query<R & { slot: 'active' | 'shadow'; rank: number }>(
    `select s.slot, d.rank, ${columns}
       from unnest($1::text[]) with ordinality as d(did, rank)
       join policy_assignments a on a.vasp_did = d.did
       cross join lateral (values ('active', a.active_version_id), ('shadow', a.shadow_version_id)) as s(slot, version_id)
       join policy_versions v on v.id = s.version_id
      order by d.rank`,
    [dids],
  );
  const own = (rank: number, slot: string) => rows.find((r) => Number(r.rank) === rank && r.slot === slot);
  const active = own(1, 'active') ?? own(2, 'active');
  const shadow = own(1, 'shadow') ?? (own(1, 'active') ? undefined : own(2, 'shadow'));
  return { ...(active ? { active } : {}), ...(shadow ? { shadow } : {}) };
}

export interface DecisionRecord {
  transferId: string;
  direction: Direction;
  vaspDid: string;
  decision: PolicyDecision;
  facts: PolicyFacts;
  shadow: boolean;
}

export interface RecordedDecision extends DecisionRecord {
  id: string;
  createdAt: string;
}

/** Records a decision with its facts (metadata and screening results only: the caller leaves personal data out). */
export async function recordDecision(db: Db, row: DecisionRecord): Promise<void> {
  await db.query(
    `insert into policy_decisions (transfer_id, direction, vasp_did, policy_vasp_did, version_id, shadow, action, decision, facts)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     on conflict (transfer_id, direction, shadow) do update set
       vasp_did = excluded.vasp_did, policy_vasp_did = excluded.policy_vasp_did, version_id = excluded.version_id,
       action = excluded.action, decision = excluded.decision, facts = excluded.facts, created_at = clock_timestamp()`,
    [
      row.transferId,
      row.direction,
      row.vaspDid,
      row.decision.policy?.vaspDid ?? null,
      row.decision.policy?.versionId ?? null,
      row.shadow,
      row.decision.action,
      JSON.stringify(row.decision),
      JSON.stringify(row.facts),
    ],
  );
}

interface DecisionRow {
  id: string;
  transfer_id: string;
  direction: Direction;
  vasp_did: string;
  shadow: boolean;
  decision: PolicyDecision;
  facts: PolicyFacts;
  created_at: string;
}

const DECISION_COLUMNS = `id::text as id, transfer_id, direction, vasp_did, shadow, decision, facts, ${exactTimestamp('created_at')} as created_at`;

const toDecision = (r: DecisionRow): RecordedDecision => ({
  id: r.id,
  transferId: r.transfer_id,
  direction: r.direction,
  vaspDid: r.vasp_did,
  decision: r.decision,
  facts: r.facts,
  shadow: r.shadow,
  createdAt: r.created_at,
});

/** A transfer's recorded decisions, oldest first. */
export async function decisionsOf(db: Db, transferId: string): Promise<RecordedDecision[]> {
  const { rows } = await db.query<DecisionRow>(
    `select ${DECISION_COLUMNS} from policy_decisions where transfer_id = $1 order by created_at, id`,
    [transferId],
  );
  return rows.map(toDecision);
}

/** The latest active (not shadow) decision of each transfer and direction, keyed `${transferId}:${direction}`. */
export async function latestDecisions(db: Db, transferIds: string[]): Promise<Map<string, RecordedDecision>> {
  if (transferIds.length === 0) return new Map();
  const { rows } = await db.query<DecisionRow>(
    `select distinct on (transfer_id, direction) ${DECISION_COLUMNS} from policy_decisions
      where transfer_id = any($1::text[]) and not shadow
      order by transfer_id, direction, created_at desc, id desc`,
    [transferIds],
  );
  return new Map(rows.map((r) => [`${r.transfer_id}:${r.direction}`, toDecision(r)]));
}

export interface ShadowComparison {
  decisions: number;
  agree: number;
  disagree: number;
  /** `"APPROVE→SEND_TO_INBOX"`: how many transfers the shadow version would have decided otherwise, by change. */
  byChange: Record<string, number>;
  examples: {
    transferId: string;
    direction: Direction;
    decidedAt: string;
    active: string;
    shadow: string;
    ruleActive: number | null;
    ruleShadow: number | null;
  }[];
}

/**
 * The shadow decisions of the VASP's versions over [from, to) beside the active decision of the same transfer (each
 * transfer's latest of each): how often they agree, how they differ, and the latest differences as examples.
 */
export async function shadowComparison(
  db: Db,
  policyVaspDid: string,
  range: { from: Date; to: Date },
  maxExamples = 20,
): Promise<ShadowComparison> {
  const pairs = `with s as (
      select distinct on (transfer_id, direction) transfer_id, direction, action, decision, created_at
        from policy_decisions where shadow and policy_vasp_did = $1 and created_at >= $2 and created_at < $3
       order by transfer_id, direction, created_at desc, id desc
    ), pairs as (
      select s.transfer_id, s.direction, s.created_at, s.action as shadow_action, a.action as active_action,
             (s.decision->'rule'->>'order')::int as shadow_rule, (a.decision->'rule'->>'order')::int as active_rule
        from s cross join lateral (
          select action, decision from policy_decisions p
           where p.transfer_id = s.transfer_id and p.direction = s.direction and not p.shadow
           order by created_at desc, id desc limit 1) a
    )`;
  const params = [policyVaspDid, range.from, range.to];
  const [counts, examples] = await Promise.all([
    db.query<{ active_action: string; shadow_action: string; n: string }>(
      `${pairs} select active_action, shadow_action, count(*) as n from pairs group by 1, 2`,
      params,
    ),
    db.query<{
      transfer_id: string;
      direction: Direction;
      created_at: string;
      active_action: string;
      shadow_action: string;
      active_rule: number | null;
      shadow_rule: number | null;
    }>(
      `${pairs} select transfer_id, direction, ${exactTimestamp('created_at')} as created_at, active_action,
              shadow_action, active_rule, shadow_rule
         from pairs where active_action <> shadow_action order by created_at desc limit $4`,
      [...params, maxExamples],
    ),
  ]);
  const result: ShadowComparison = { decisions: 0, agree: 0, disagree: 0, byChange: {}, examples: [] };
  for (const r of counts.rows) {
    const n = Number(r.n);
    result.decisions += n;
    if (r.active_action === r.shadow_action) result.agree += n;
    else {
      result.disagree += n;
      result.byChange[`${r.active_action}→${r.shadow_action}`] = n;
    }
  }
  result.examples = examples.rows.map((r) => ({
    transferId: r.transfer_id,
    direction: r.direction,
    decidedAt: r.created_at,
    active: r.active_action,
    shadow: r.shadow_action,
    ruleActive: r.active_rule,
    ruleShadow: r.shadow_rule,
  }));
  return result;
}
