/** Settings of reported deposits (environment variables in parentheses); a section of config/index.ts. */
import { durationSetting, type Env } from '../lib/config-values';

export interface DepositConfig {
  /**
   * How long a deposit no message matches (or only an INCOMPLETE one) is reported to the network again, with backoff
   * (DEPOSIT_MATCH_WINDOW, 1h: originators often add the txHash to their transfer late).
   */
  matchWindowMs: number;
  /** How long an INCOMPLETE match waits for the originator's data before a return is required (DEPOSIT_DATA_DEADLINE, 72h). */
  dataDeadlineMs: number;
  /** The first wait between checks (DEPOSIT_RECHECK_INITIAL, 5s); doubled after each. */
  recheckInitialMs: number;
  /** The longest wait between checks (DEPOSIT_RECHECK_MAX, 5m). */
  recheckMaxMs: number;
}

export function loadDepositConfig(env: Env): DepositConfig {
  const initial = durationSetting(env, 'DEPOSIT_RECHECK_INITIAL', '5s', 100).ms;
  return {
    matchWindowMs: durationSetting(env, 'DEPOSIT_MATCH_WINDOW', '1h').ms,
    dataDeadlineMs: durationSetting(env, 'DEPOSIT_DATA_DEADLINE', '72h').ms,
    recheckInitialMs: initial,
    recheckMaxMs: Math.max(initial, durationSetting(env, 'DEPOSIT_RECHECK_MAX', '5m', 100).ms),
  };
}
