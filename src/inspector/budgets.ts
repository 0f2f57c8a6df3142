/**
 * Each client key with a budget or a rate, and what it has spent of the budget in its current
 * window, as the overview shows them. The proxy knows the keys (the config's and the store's) and counts the spend (the
 * spend ledger on the file store, the shared ledger on PostgreSQL); it hands the inspector a
 * function that reads them (proxy/app.ts), so this folder imports none of that.
 */
import type { BudgetPeriod } from '../config/types.js';

export interface KeyBudget {
  key: string;
  /** `config` (`[auth] keys`) or `stored` (`proxy keys add`). */
  source: 'config' | 'stored';
  budget_usd: number | null;
  budget_period: BudgetPeriod;
  /** USD spent in the current window, as the proxy counts it against the budget. */
  spent_usd: number;
  /** When the window ends and the spend starts again from 0; null for `total`. */
  resets_at: string | null;
  requests_per_minute: number | null;
}
