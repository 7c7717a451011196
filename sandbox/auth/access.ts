import type { Pool } from 'pg';
import { forbidden, notFound } from '../errors';
import { readAccessRows } from './store';

/**
 * What one user may do. A role on a gateway VASP also covers its subsidiaries: "the credentials of the gateway VASP
 * alone can control all nested VASPs". `manage` grants every permission.
 */
export class Access {
  constructor(
    readonly userDid: string,
    private readonly direct: ReadonlyMap<string, ReadonlySet<string>>,
    private readonly parentOf: ReadonlyMap<string, string | null>,
  ) {}

  static async load(pool: Pool, userDid: string): Promise<Access> {
    const { roles, vasps } = await readAccessRows(pool, userDid);
    return new Access(
      userDid,
      new Map(roles.map((r) => [r.vasp_did, new Set(r.permissions)])),
      new Map(vasps.map((v) => [v.did, v.parent_did])),
    );
  }

  /** The VASP DIDs the user may act for: those it holds a role on, plus the subsidiaries of its gateways. */
  vasps(): string[] {
    return [...this.parentOf.keys()].filter((did) => this.rolesFor(did).length > 0).sort();
  }

  /** Roles as the viewer reports them, one entry per VASP the user may act for. */
  roles(): { vaspDID: string; permissions: string[] }[] {
    return this.vasps().map((did) => ({
      vaspDID: did,
      permissions: [...new Set(this.rolesFor(did).flatMap((s) => [...s]))].sort(),
    }));
  }

  private rolesFor(did: string): ReadonlySet<string>[] {
    const own = this.direct.get(did);
    const parent = this.parentOf.get(did);
    const inherited = parent ? this.direct.get(parent) : undefined;
    return [own, inherited].filter((s): s is ReadonlySet<string> => !!s);
  }

  can(vaspDid: string, permission: string): boolean {
    return this.rolesFor(vaspDid).some((s) => s.has(permission) || s.has('manage'));
  }

  exists(vaspDid: string): boolean {
    return this.parentOf.has(vaspDid);
  }

  isGateway(vaspDid: string): boolean {
    return [...this.parentOf.values()].includes(vaspDid);
  }

  parent(vaspDid: string): string | null {
    return this.parentOf.get(vaspDid) ?? null;
  }

  /** Throws the network's errors: 404 for an unknown VASP, 403 when the user lacks the permission on it. */
  require(vaspDid: string, permission: string): void {
    if (!this.exists(vaspDid)) throw notFound(`VASP ${vaspDid} not found`);
    if (!this.can(vaspDid, permission)) {
      throw forbidden(`User ${this.userDid} is not allowed to ${permission} for VASP ${vaspDid}`);
    }
  }
}
