/**
 * Client keys' budgets and rates in the database (docs/scaling.md, One ledger): each admission is
 * one statement that reads the key's spend in its window and, under budget, takes a token from its
 * bucket; each charge adds to the key's row of the day. Replicas share both, so a budget is spent
 * once across them; it is overspent by at most the requests admitted and not yet charged.
 */
import type pg from 'pg';
import type { ClientLedger, LedgerAdmission, LedgerCharge } from '../types.js';
import { reaching } from './unavailable.js';

const ADMIT = `
WITH spent AS (
  SELECT coalesce(sum(usd), 0)::float8 AS usd FROM client_spend WHERE client = $1 AND day >= $2::date
), bucket AS (
  INSERT INTO client_rate AS r (client, tokens, at)
  SELECT $1, $4::float8 - 1, $3::bigint FROM spent WHERE $4::float8 IS NOT NULL AND ($5::float8 IS NULL OR spent.usd < $5::float8)
  ON CONFLICT (client) DO UPDATE SET
    took = least($4::float8, r.tokens + greatest(0, $3::bigint - r.at) * $4::float8 / 60000) >= 1,
    tokens = least($4::float8, r.tokens + greatest(0, $3::bigint - r.at) * $4::float8 / 60000)
      - CASE WHEN least($4::float8, r.tokens + greatest(0, $3::bigint - r.at) * $4::float8 / 60000) >= 1 THEN 1 ELSE 0 END,
    at = greatest(r.at, $3::bigint)
  RETURNING took, tokens
)
SELECT spent.usd, bucket.took, bucket.tokens FROM spent LEFT JOIN bucket ON true`;

const CHARGE = `
INSERT INTO client_spend (client, day, usd) VALUES ($1, $2::date, $3)
ON CONFLICT (client, day) DO UPDATE SET usd = client_spend.usd + EXCLUDED.usd`;

export class PgClientLedger implements ClientLedger {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async admit(q: LedgerAdmission): Promise<{ spent: number; waitMs: number }> {
    const params = [q.client, dayOf(q.from), Math.round(q.now), q.perMinute ?? null, q.budgetUsd ?? null];
    const { rows } = await reaching(() => this.#pool.query<{ usd: number; took: boolean | null; tokens: number | null }>(ADMIT, params));
    const row = rows[0]!;
    let waitMs = 0;
    if (row.took === false && q.perMinute !== undefined) waitMs = Math.max(1, Math.ceil((1 - (row.tokens ?? 0)) / (q.perMinute / 60_000)));
    return { spent: row.usd, waitMs };
  }

  async charge(e: LedgerCharge): Promise<void> {
    await reaching(() => this.#pool.query(CHARGE, [e.client, dayOf(e.ts), e.usd]));
  }
}

/** The UTC day holding `ms`; -Infinity (a budget over all time) is PostgreSQL's '-infinity'. */
export function dayOf(ms: number): string {
  return ms === Number.NEGATIVE_INFINITY ? '-infinity' : new Date(ms).toISOString().slice(0, 10);
}
