/** The windows a client key's budget is counted over, in UTC (docs/decisions.md, Client budgets). */
import type { BudgetPeriod } from '../config/types.js';

/** Where the window holding `at` (ms since the epoch) starts; -Infinity for `total`. */
export function periodStart(period: BudgetPeriod, at: number): number {
  const d = new Date(at);
  if (period === 'day') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (period === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return Number.NEGATIVE_INFINITY;
}

/** Where the window holding `at` ends (the next one starts); undefined for `total`, which never ends. */
export function periodEnd(period: BudgetPeriod, at: number): number | undefined {
  const d = new Date(at);
  if (period === 'day') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
  if (period === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return undefined;
}
