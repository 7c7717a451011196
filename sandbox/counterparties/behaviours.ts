/**
 * Simulated counterparty VASPs: what a simulated beneficiary VASP does with a transfer it receives, chosen per
 * destination address. This module is the one place that defines the behaviours; the orchestrator's tests drive every
 * outcome through it.
 *
 * Configure (sandbox-only: SANDBOX_TEST_ROUTES=1, the operator token, and a VASP the seed marks simulated):
 * - `PUT /sandbox/counterparties/:vaspDID` `{default?: Behaviour, behaviours?: {<address>: Behaviour}, publishKey?}`
 *   makes the VASP (which must exist in the directory) a simulated counterparty, or updates what is sent. On first use
 *   the sandbox creates a did:key for it and keeps the private key (simulation only); it publishes the public did:key as
 *   the VASP's `pii_didkey` in the directory, so originators encrypt end-to-end to it — unless the VASP already
 *   publishes a key of its own, which is kept unless `publishKey: true`.
 *   Answers `{vaspDID, pii_didkey, published, default, behaviours}` (`pii_didkey`: the simulation key; `published`:
 *   whether the directory currently shows it).
 * - `PUT /sandbox/counterparties/:vaspDID/behaviours` `{<address>: Behaviour}` replaces only the address map.
 * - `GET /sandbox/counterparties/:vaspDID` answers the configuration; `DELETE` stops simulating (the key stays published).
 * - `GET /sandbox/counterparties/:vaspDID/received/:txId` → `{vaspDID, transactionId, mode, decrypted, fields, error?,
 *   receivedAt}`: whether the counterparty could read the personal data it received (never the data). `mode` is
 *   `end-to-end` (decrypted with its own did:key), `hosted` (read through the service-managed keys) or `none` (no pii).
 *
 * Behaviour (a string, or `{behaviour, afterSeconds}`):
 * | value | what the simulated beneficiary does | final status |
 * |---|---|---|
 * | `accept` | confirms the address (ACK), then accepts | ACCEPTED |
 * | `ack` | confirms the address only | ACK |
 * | `reject` | rejects: the address is not its own | REJECTED |
 * | `decline` | confirms the address, then declines | DECLINED |
 * | `notReady` | answers "not ready" | NOT_READY |
 * | `silent` | does nothing | SENT (stays) |
 * | `late:<N>` or `late:<N>:<behaviour>` or `{behaviour, afterSeconds: N}` | the behaviour (default accept) N seconds later | as the behaviour |
 *
 * Address matching: the transaction's `transactionBlockchainInfo.destination` exactly, then its master address (the
 * part before `:<tag>`); otherwise the `default` (itself `accept` unless set). The simulated VASP acts through the same
 * transition table and endpoints' logic as any VASP (sandbox/transactions/states.ts), as issuer its own VASP DID. It
 * reacts when a transfer reaches it (status SENT or ACK), first reading the personal data, then acting.
 */
import type { TransactionActionName } from '../transactions';

export const BEHAVIOURS = ['accept', 'ack', 'reject', 'decline', 'notReady', 'silent'] as const;
export type BehaviourName = (typeof BEHAVIOURS)[number];

export interface Behaviour {
  behaviour: BehaviourName;
  afterSeconds: number;
}

export const MAX_DELAY_SECONDS = 24 * 3600;

/** Parses a behaviour value; returns an error message when it is not one. */
export function parseBehaviour(value: unknown): Behaviour | string {
  if (typeof value === 'string') {
    const late = /^late:(\d{1,6})(?::([A-Za-z]+))?$/.exec(value);
    if (late) return parseBehaviour({ behaviour: late[2] ?? 'accept', afterSeconds: Number(late[1]) });
    if ((BEHAVIOURS as readonly string[]).includes(value))
      return { behaviour: value as BehaviourName, afterSeconds: 0 };
    return `must be one of ${BEHAVIOURS.join(', ')}, late:<seconds>[:<behaviour>] or {behaviour, afterSeconds}`;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { behaviour, afterSeconds = 0 } = value as Record<string, unknown>;
    if (typeof behaviour !== 'string' || !(BEHAVIOURS as readonly string[]).includes(behaviour))
      return `behaviour: must be one of ${BEHAVIOURS.join(', ')}`;
    if (
      typeof afterSeconds !== 'number' ||
      !Number.isFinite(afterSeconds) ||
      afterSeconds < 0 ||
      afterSeconds > MAX_DELAY_SECONDS
    ) {
      return `afterSeconds: must be a number from 0 to ${MAX_DELAY_SECONDS}`;
    }
    return { behaviour: behaviour as BehaviourName, afterSeconds };
  }
  return 'must be a behaviour string or {behaviour, afterSeconds}';
}

export const DEFAULT_BEHAVIOUR: Behaviour = { behaviour: 'accept', afterSeconds: 0 };

/** The behaviour for a destination: exact address, then master address (before `:<tag>`), then the default. */
export function behaviourFor(
  destination: string,
  behaviours: Record<string, Behaviour>,
  fallback: Behaviour,
): Behaviour {
  if (Object.hasOwn(behaviours, destination)) return behaviours[destination]!;
  const colon = destination.lastIndexOf(':');
  const master = colon > 0 ? destination.slice(0, colon) : undefined;
  if (master !== undefined && Object.hasOwn(behaviours, master)) return behaviours[master]!;
  return fallback;
}

/** The actions a behaviour takes, in order, given the current status (confirm only when not yet ACK). */
export function stepsOf(behaviour: BehaviourName, status: string): TransactionActionName[] {
  const confirmFirst: TransactionActionName[] = status === 'ACK' ? [] : ['confirm'];
  switch (behaviour) {
    case 'accept':
      return [...confirmFirst, 'accept'];
    case 'ack':
      return confirmFirst;
    case 'decline':
      return [...confirmFirst, 'decline'];
    case 'reject':
      return ['reject'];
    case 'notReady':
      return ['notReady'];
    case 'silent':
      return [];
  }
}
