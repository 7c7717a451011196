import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Pool } from 'pg';
import { Type, type Static } from 'typebox';
import { withTransaction } from '../db/transaction';
import { ConfigError, ValidationError } from '../lib/errors';
import { assertValid } from '../lib/validation';
import { replaceUserRoles, upsertApiClient, upsertOperatorApp, upsertOperatorClient, upsertUser } from './auth/store';
import { upsertVasp } from './directory/store';

const Did = Type.String({ pattern: '^did:[a-z0-9]+:.+$' });

/**
 * The operator's part of the network: VASP profiles, nesting (subsidiary → gateway) and users with their roles and
 * API credentials. On the real network nesting is done by the operator on request; here it comes only from this file.
 */
export const SeedSchema = Type.Object({
  vasps: Type.Array(
    Type.Object({
      did: Did,
      name: Type.String({ minLength: 1 }),
      parentDid: Type.Optional(Did),
      /** The sandbox's own simulated VASP: the /sandbox/* test routes may configure it and send transfers as it. */
      simulated: Type.Optional(Type.Boolean()),
    }),
  ),
  users: Type.Array(
    Type.Object({
      did: Did,
      name: Type.String({ minLength: 1 }),
      email: Type.String({ minLength: 3 }),
      role: Type.Optional(Type.String()),
      jobTitle: Type.Optional(Type.String()),
      roles: Type.Array(Type.Object({ vaspDID: Did, permissions: Type.Array(Type.String({ minLength: 1 })) })),
      credentials: Type.Array(
        Type.Object({ clientId: Type.String({ minLength: 8 }), clientSecret: Type.String({ minLength: 16 }) }),
      ),
    }),
  ),
  /** Clients of the operators' identity provider at /oidc (not the network's): the orchestrator's people and services. */
  operators: Type.Optional(
    Type.Array(
      Type.Object({
        clientId: Type.String({ minLength: 8 }),
        clientSecret: Type.String({ minLength: 16 }),
        /** The tokens' `sub`; the client id when absent. */
        subject: Type.Optional(Type.String({ minLength: 1 })),
        name: Type.String({ minLength: 1 }),
        email: Type.Optional(Type.String({ minLength: 3 })),
        roles: Type.Array(Type.String({ minLength: 1 })),
      }),
    ),
  ),
  /**
   * Applications that sign those operators in interactively (authorization code with PKCE, no secret), each with
   * the redirect URIs a code may be sent to; a loopback URI matches on any port (RFC 8252, 7.3).
   */
  operatorApps: Type.Optional(
    Type.Array(
      Type.Object({
        clientId: Type.String({ minLength: 3 }),
        redirectUris: Type.Array(Type.String({ pattern: '^https?://[^\\s]+$' }), { minItems: 1 }),
      }),
    ),
  ),
});
export type Seed = Static<typeof SeedSchema>;

export function readSeedFile(path: string): Seed {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigError(
      'SANDBOX_SEED',
      `${path} is not readable JSON (${(e as Error).message})`,
      'Fix or replace the seed file',
    );
  }
  try {
    assertValid(SeedSchema, parsed);
    checkReferences(parsed);
  } catch (e) {
    if (e instanceof ValidationError) {
      throw new ConfigError(
        'SANDBOX_SEED',
        `${path}: ${e.message}`,
        'Fix the seed file (see sandbox/seed.ts for its schema)',
      );
    }
    throw e;
  }
  return parsed;
}

function checkReferences(seed: Seed): void {
  const dids = new Set(seed.vasps.map((v) => v.did));
  seed.vasps.forEach((v, i) => {
    if (v.parentDid && !dids.has(v.parentDid))
      throw new ValidationError(`vasps[${i}].parentDid`, 'must name a VASP of the seed');
    if (v.parentDid === v.did) throw new ValidationError(`vasps[${i}].parentDid`, 'must not be the VASP itself');
  });
  const byDid = new Map(seed.vasps.map((v) => [v.did, v]));
  seed.vasps.forEach((v, i) => {
    if (v.parentDid && byDid.get(v.parentDid)?.parentDid) {
      throw new ValidationError(`vasps[${i}].parentDid`, 'nesting is one level deep: a subsidiary cannot be a gateway');
    }
  });
  seed.users.forEach((u, i) =>
    u.roles.forEach((r, j) => {
      if (!dids.has(r.vaspDID))
        throw new ValidationError(`users[${i}].roles[${j}].vaspDID`, 'must name a VASP of the seed');
    }),
  );
}

export const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** Upserts the seed: applying it twice, or after a restart, leaves the same state. */
export async function applySeed(pool: Pool, seed: Seed): Promise<void> {
  await withTransaction(pool, async (client) => {
    // Gateways first, so subsidiaries' foreign keys resolve.
    const ordered = [...seed.vasps].sort((a, b) => Number(!!a.parentDid) - Number(!!b.parentDid));
    for (const v of ordered) {
      await upsertVasp(client, {
        did: v.did,
        name: v.name,
        parentDid: v.parentDid ?? null,
        simulated: v.simulated === true,
      });
    }
    for (const u of seed.users) {
      await upsertUser(client, {
        did: u.did,
        name: u.name,
        email: u.email,
        role: u.role ?? 'admin',
        jobTitle: u.jobTitle ?? '',
      });
      await replaceUserRoles(client, u.did, u.roles);
      for (const c of u.credentials) await upsertApiClient(client, c.clientId, sha256(c.clientSecret), u.did);
    }
    for (const o of seed.operators ?? []) {
      await upsertOperatorClient(client, {
        clientId: o.clientId,
        secretSha256: sha256(o.clientSecret),
        subject: o.subject ?? o.clientId,
        name: o.name,
        email: o.email ?? null,
        roles: o.roles,
      });
    }
    for (const a of seed.operatorApps ?? []) await upsertOperatorApp(client, a.clientId, a.redirectUris);
  });
}
