/**
 * Changing a VASP's policy: the document checked (each problem names its field), saved as a version, made active or
 * shadow, and audited, in one transaction: a refused or failed change leaves nothing behind.
 */
import type { Pool } from 'pg';
import { appendAuditEntry } from '../audit/store';
import { withTransaction } from '../db/transaction';
import { ValidationError } from '../lib/errors';
import { auditActor, type Principal } from '../lib/principal';
import { ruleListProblems } from './rules';
import { activatePolicyVersion, latestPolicyVersion, savePolicyVersion, setShadowVersion } from './store';
import type { PolicyDocument, PolicyVersion } from './types';

const CURRENCY = /^[A-Z]{3}$/;

/** Throws a ValidationError for the document's first problem; `path` prefixes the fields (`candidate.`). */
export function assertValidDocument(document: PolicyDocument, path = ''): void {
  if (typeof document.currency !== 'string' || !CURRENCY.test(document.currency))
    throw new ValidationError(`${path}currency`, 'must be an ISO 4217 currency code, three capital letters (EUR)');
  for (const direction of ['incoming', 'outgoing'] as const) {
    const [problem] = ruleListProblems(document[direction], `${path}${direction}`);
    if (problem) throw new ValidationError(problem.field, problem.rule);
  }
}

export interface PolicyChange {
  vaspDid: string;
  document: PolicyDocument;
  note: string;
  /** Make the version the one that decides (default, unless `shadow`). */
  activate?: boolean;
  /** Run the version beside the active one instead, recorded and never acted on. */
  shadow?: boolean;
}

export interface PolicyChangeResult {
  version: PolicyVersion;
  /** False when the document was the latest version's: that version is answered, and no new one made. */
  created: boolean;
  activated: boolean;
  shadow: boolean;
}

export async function changePolicy(pool: Pool, change: PolicyChange, by: Principal): Promise<PolicyChangeResult> {
  assertValidDocument(change.document);
  if (change.shadow && change.activate)
    throw new ValidationError('shadow', 'cannot be true with activate: a version is either active or in shadow');
  const activate = !change.shadow && change.activate !== false;
  const actor = auditActor(by);
  return withTransaction(pool, async (tx) => {
    const latest = await latestPolicyVersion(tx, change.vaspDid);
    const version = await savePolicyVersion(tx, {
      vaspDid: change.vaspDid,
      document: change.document,
      author: actor,
      note: change.note,
    });
    const created = version.id !== latest?.id;
    if (activate) await activatePolicyVersion(tx, change.vaspDid, version.id, actor);
    if (change.shadow) await setShadowVersion(tx, change.vaspDid, version.id, actor);
    await appendAuditEntry(tx, {
      actor,
      action: activate ? 'policy.activate' : change.shadow ? 'policy.shadow' : 'policy.save',
      subject: change.vaspDid,
      details: {
        principal: by,
        versionId: version.id,
        version: version.version,
        contentHash: version.contentHash,
        created,
        note: change.note,
        rules: { incoming: version.incoming.length, outgoing: version.outgoing.length },
      },
    });
    return { version, created, activated: activate, shadow: change.shadow === true };
  });
}

/** Stops shadow mode for the VASP's policy, audited. */
export async function stopShadow(pool: Pool, vaspDid: string, by: Principal): Promise<void> {
  const actor = auditActor(by);
  await withTransaction(pool, async (tx) => {
    await setShadowVersion(tx, vaspDid, null, actor);
    await appendAuditEntry(tx, {
      actor,
      action: 'policy.shadow.stop',
      subject: vaspDid,
      details: { principal: by },
    });
  });
}
