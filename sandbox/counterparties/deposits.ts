/**
 * A simulated counterparty as the originator of deposits: when the beneficiary reports a deposit (tx/notify) to a
 * destination the simulated VASP claims and no message matches, the network's INCOMPLETE message names that VASP as
 * originator and asks it for the data. The VASP then answers after a delay, or never.
 *
 * Configure (sandbox-only, like the behaviours): `PUT /sandbox/counterparties/:vaspDID/deposits`
 * `{<destination>: DepositAnswer}` replaces the map. A DepositAnswer is
 * - a number N (0 to 86,400): N seconds after the report, the VASP sends its transfer with tx/create (its IVMS101
 *   encrypted end to end to the beneficiary, as `/sandbox/simulate/transfers` does), which completes the INCOMPLETE
 *   message (sandbox/transactions/notify.ts);
 * - `"never"`: the message stays INCOMPLETE;
 * - `{afterSeconds: N | null, originatorName?: [given, family]}`: the same, with the name of the natural person who
 *   sends (default Olivia Sender), e.g. a sanctioned name for a test of screening.
 * Destinations match exactly, then by master address (before `:<tag>`).
 */
import { MAX_DELAY_SECONDS } from './behaviours';

export interface DepositAnswer {
  /** Null: the originator never answers. */
  afterSeconds: number | null;
  originatorName?: [string, string];
}

export const DEFAULT_ORIGINATOR_NAME: [string, string] = ['Olivia', 'Sender'];

/** Parses a deposit answer; returns an error message when it is not one. */
export function parseDepositAnswer(value: unknown): DepositAnswer | string {
  const seconds = (v: unknown): number | string =>
    typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_DELAY_SECONDS
      ? v
      : `must be a number of seconds from 0 to ${MAX_DELAY_SECONDS}, or "never"`;
  if (value === 'never') return { afterSeconds: null };
  if (typeof value === 'number') {
    const s = seconds(value);
    return typeof s === 'string' ? s : { afterSeconds: s };
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { afterSeconds, originatorName, ...other } = value as Record<string, unknown>;
    const unknown = Object.keys(other)[0];
    if (unknown !== undefined) return `${unknown}: is not a field of a deposit answer (afterSeconds, originatorName)`;
    let after: number | null = null;
    if (afterSeconds !== null && afterSeconds !== 'never') {
      const s = seconds(afterSeconds);
      if (typeof s === 'string') return `afterSeconds: ${s}`;
      after = s;
    }
    if (originatorName === undefined) return { afterSeconds: after };
    if (
      !Array.isArray(originatorName) ||
      originatorName.length !== 2 ||
      !originatorName.every((n) => typeof n === 'string' && n.trim() !== '' && n.length <= 100)
    ) {
      return 'originatorName: must be [given name, family name], each 1 to 100 characters';
    }
    return { afterSeconds: after, originatorName: originatorName as [string, string] };
  }
  return 'must be a number of seconds, "never" or {afterSeconds, originatorName?}';
}
