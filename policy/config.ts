/** Settings of decisions by policy (environment variables in parentheses); a section of config/index.ts. */
import { isOff, type Env } from '../lib/config-values';
import { parsePriceTable, type PriceTable } from './prices';

export interface PolicyConfig {
  /**
   * Whether the workflows decide by the policies (POLICY_DECISIONS, on; `off`: screening alone decides incoming
   * transfers, a hit goes to a person, and outgoing transfers are sent, as before policies). The benchmark's baseline.
   */
  decisions: boolean;
  /**
   * Prices for amount rules (POLICY_PRICES, JSON: `{"ETH": {"decimals": 18, "USD": 3000, "EUR": 2750}}`; none by
   * default): an amount the table does not price is unknown, and an amount rule sends the transfer to a person.
   */
  prices: PriceTable;
}

export function loadPolicyConfig(env: Env): PolicyConfig {
  return { decisions: !isOff(env, 'POLICY_DECISIONS'), prices: parsePriceTable(env.POLICY_PRICES) };
}
