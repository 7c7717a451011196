import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Seed } from '../sandbox/seed';
import { ConfigError } from '../lib/errors';
import { ROLES, type Role } from '../lib/principal';

/** The demo VASP group `npm start` seeds into the sandbox, kept in `.data/demo.json` for scripts and second starts. */
export interface DemoGroup {
  gateway: DemoVasp;
  subsidiaries: DemoVasp[];
  external: DemoVasp;
  /** The sandbox seed generated from the above (users, roles and credentials included, and `operatorClients`). */
  seed: Seed;
  /** One person per role at the sandbox's identity provider (/oidc), whose tokens the orchestrator accepts. */
  operatorClients: Record<Role, DemoOperatorClient>;
  /** The development credentials of the last start, one per role: `Authorization: Bearer <token>`. */
  operators?: Record<Role, DevCredential>;
}

export interface DemoOperatorClient {
  name: string;
  email: string;
  subject: string;
  clientId: string;
  clientSecret: string;
}

export interface DevCredential {
  token: string;
  /** `oidc`: an access token of the sandbox's identity provider (expires); `api-key`: an API key of the orchestrator. */
  kind: 'oidc' | 'api-key';
  name: string;
  expiresAt?: string;
}

export interface DemoVasp {
  name: string;
  did: string;
  credentials: { clientId: string; clientSecret: string; userDid: string };
}

const did = () => `did:ethr:0x${randomBytes(20).toString('hex')}`;
const PERMISSIONS = [
  'manage',
  'address.uploadAddressList',
  'address.registerCustomer',
  'auth.customerToken',
  'auth.addUserToVASP',
  'auth.removeUserFromVASP',
  'trustframework.updateVASP',
  'trustframework.uploadVASPDocument',
];

function vasp(name: string, slug: string): DemoVasp {
  return {
    name,
    did: did(),
    credentials: {
      clientId: `${slug}-${randomBytes(8).toString('hex')}`,
      clientSecret: randomBytes(24).toString('base64url'),
      userDid: did(),
    },
  };
}

const OPERATOR_NAMES: Record<Role, string> = {
  viewer: 'Vic Viewer',
  operator: 'Olga Operator',
  compliance: 'Carla Compliance',
  admin: 'Adam Admin',
};

function createOperatorClients(): Record<Role, DemoOperatorClient> {
  return Object.fromEntries(
    ROLES.map((role) => [
      role,
      {
        name: OPERATOR_NAMES[role],
        email: `${role}@aurora.example`,
        subject: `aurora-${role}-${randomBytes(4).toString('hex')}`,
        clientId: `aurora-${role}-${randomBytes(8).toString('hex')}`,
        clientSecret: randomBytes(24).toString('base64url'),
      },
    ]),
  ) as Record<Role, DemoOperatorClient>;
}

const operatorSeed = (clients: Record<Role, DemoOperatorClient>): Seed['operators'] =>
  ROLES.map((role) => ({ ...clients[role], roles: [role] }));

export function createDemoGroup(): DemoGroup {
  const gateway = vasp('Aurora Gateway', 'aurora-gw');
  const subsidiaries = [vasp('Aurora Exchange EU', 'aurora-eu'), vasp('Aurora Custody SG', 'aurora-sg')];
  const external = vasp('Borealis Exchange', 'borealis');
  const user = (v: DemoVasp, email: string) => ({
    did: v.credentials.userDid,
    name: `${v.name} operator`,
    email,
    role: 'admin',
    jobTitle: 'Compliance officer',
    roles: [{ vaspDID: v.did, permissions: PERMISSIONS }],
    credentials: [{ clientId: v.credentials.clientId, clientSecret: v.credentials.clientSecret }],
  });
  const seed: Seed = {
    vasps: [
      { did: gateway.did, name: gateway.name },
      ...subsidiaries.map((s) => ({ did: s.did, name: s.name, parentDid: gateway.did })),
      // The sandbox plays the counterparty: its test routes may act for it (and for no other VASP).
      { did: external.did, name: external.name, simulated: true },
    ],
    users: [
      user(gateway, 'compliance@aurora.example'),
      ...subsidiaries.map((s, i) => user(s, `compliance+${i + 1}@aurora.example`)),
      user(external, 'compliance@borealis.example'),
    ],
  };
  const operatorClients = createOperatorClients();
  seed.operators = operatorSeed(operatorClients);
  return { gateway, subsidiaries, external, seed, operatorClients };
}

/** Reuses `.data/demo.json` when present, so a second `npm start` keeps the same DIDs and credentials. */
export function loadOrCreateDemoGroup(file: string): { group: DemoGroup; created: boolean } {
  if (existsSync(file)) {
    try {
      const group = JSON.parse(readFileSync(file, 'utf8')) as DemoGroup;
      if (!group.gateway?.did || !Array.isArray(group.subsidiaries) || !group.seed)
        throw new Error('missing gateway, subsidiaries or seed');
      // A group made before operators signed in gets its identity provider's clients now.
      if (!group.operatorClients) {
        group.operatorClients = createOperatorClients();
        group.seed.operators = operatorSeed(group.operatorClients);
        writeFileSync(file, `${JSON.stringify(group, null, 2)}\n`, { mode: 0o600 });
      }
      return { group, created: false };
    } catch (e) {
      throw new ConfigError(
        file,
        `is not a demo group file (${(e as Error).message})`,
        'Delete it and run npm start again to create a new demo group',
      );
    }
  }
  const group = createDemoGroup();
  writeFileSync(file, `${JSON.stringify(group, null, 2)}\n`, { mode: 0o600 });
  return { group, created: true };
}
