/**
 * Each client key's budget and what it has spent of it in its current window (src/inspector/budgets.ts):
 * the figure a key's 429 `budget_exceeded` is decided on, before it is reached.
 */
import type { KeyBudget } from '../../contract.js';
import { pct, time, usd } from '../../format.js';
import { Th } from '../../parts/table-parts.js';

const WINDOW: Record<KeyBudget['budget_period'], string> = { day: 'a day (UTC)', month: 'a month (UTC)', total: 'in all' };

export function Budgets({ budgets }: { budgets: KeyBudget[] }) {
  return (
    <table class="bars" data-testid="budgets">
      <caption class="sr-only">Each client key's budget, and what it has spent of it in the current window</caption>
      <thead><tr><Th>Key</Th><Th>Budget</Th><Th numeric>Spent</Th><Th>Resets</Th><Th>Rate limit</Th></tr></thead>
      <tbody>
        {budgets.map((b) => {
          const share = b.budget_usd === null || b.budget_usd === 0 ? null : b.spent_usd / b.budget_usd;
          return (
            <tr data-testid="budget-row" data-key={b.key}>
              <th scope="row">{b.key}{b.source === 'stored' && <span class="tag">proxy keys</span>}</th>
              <td>{b.budget_usd === null ? 'none' : `${usd(b.budget_usd)} ${WINDOW[b.budget_period]}`}</td>
              <td class="num" data-testid="budget-spent" data-value={b.spent_usd}>
                {share !== null && <span class={`hbar${share >= 1 ? ' over' : ''}`} style={{ width: `${Math.min(100, 100 * share)}%` }} aria-hidden="true" />}
                {usd(b.spent_usd)}{share !== null && ` (${pct(share)})`}
              </td>
              <td>{b.budget_usd === null ? '–' : b.resets_at === null ? 'never' : time(b.resets_at)}</td>
              <td>{b.requests_per_minute === null ? 'none' : `${b.requests_per_minute} a minute`}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
