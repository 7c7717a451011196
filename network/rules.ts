/**
 * The network's rules engine (`/rules/*`): for VASPs whose transfers the network decides. Each direction set replaces
 * that direction's rules at the network; VASP and JURISDICTION values are comma-separated.
 */
import type { NetworkClient } from './client';

export interface NetworkRule {
  order: number;
  actionRule: string;
  ruleCheck: string;
  ruleValue: string;
  source?: string | null;
}

/** A rule as the network lists it. */
export interface NetworkRuleRecord extends NetworkRule {
  id: string;
  vaspDID: string;
  /** Not in the network's documented list; the sandbox adds it. */
  direction?: 'incoming' | 'outgoing';
  createdAt?: string;
  createdBy?: string;
}

/** `GET /rules/get?vaspDID=`. */
export function getRules(network: NetworkClient, vaspDid: string): Promise<NetworkRuleRecord[]> {
  return network.call(
    'GET /rules/get',
    () => network.api.get('rules/get', { searchParams: { vaspDID: vaspDid } }).json<NetworkRuleRecord[]>(),
    { idempotent: true },
  );
}

/** `POST /rules/set/direction`: replaces the directions given (an empty list empties one); the VASP's rules after. */
export function setRules(
  network: NetworkClient,
  vaspDid: string,
  ruleSet: { incoming?: NetworkRule[]; outgoing?: NetworkRule[] },
): Promise<NetworkRuleRecord[]> {
  return network.call(
    'POST /rules/set/direction',
    () => network.api.post('rules/set/direction', { json: { vaspDID: vaspDid, ruleSet } }).json<NetworkRuleRecord[]>(),
    // Replacing with the same rules again ends in the same state.
    { idempotent: true },
  );
}

/** `POST /rules/delete`: the VASP's rules after; the network refuses (400) when one id is not the VASP's. */
export function deleteRules(network: NetworkClient, vaspDid: string, ids: string[]): Promise<NetworkRuleRecord[]> {
  return network.call('POST /rules/delete', () =>
    network.api.post('rules/delete', { json: { vaspDID: vaspDid, ids } }).json<NetworkRuleRecord[]>(),
  );
}
