/**
 * Client keys' budgets and rates in the database (docs/scaling.md, One ledger): each admission is
 * one statement that reads the key's spend in its window and, under budget, takes a token from its
 * bucket; each charge adds to the key's row of the day. Replicas share both, so a budget is spent
 * once across them; it is overspent by at most the requests admitted and not yet charged.
 */
import type pg from 'pg';
import type { ClientLedger, LedgerAdmission, LedgerAnswer, LedgerCharge } from '../types.js';
import { reaching } from './unavailable.js';

/** One statement: the key's spend in its window and, under budget, a token (migrations.ts, client_admit). */
const ADMIT = 'SELECT usd, took, tokens FROM client_admit($1, $2::date, $3, $4, $5)';

const CHARGE = `
INSERT INTO client_spend (client, day, usd) VALUES ($1, $2::date, $3)
ON CONFLICT (client, day) DO UPDATE SET usd = client_spend.usd + EXCLUDED.usd`;

export class PgClientLedger implements ClientLedger {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async admit(q: LedgerAdmission): Promise<LedgerAnswer> {
    const params = admitParams(q);
    const { rows } = await reaching(() => this.#pool.query<AdmitRow>(ADMIT, params));
    return answerOf(rows[0]!, q);
  }

  async charge(e: LedgerCharge): Promise<void> {
    await reaching(() => this.#pool.query(CHARGE, [e.client, dayOf(e.ts), e.usd]));
  }
}

/** What client_admit returns: the spend, and whether a token was taken (null: the key has no rate, or is over budget). */
export interface AdmitRow {
  usd: number;
  took: boolean | null;
  tokens: number | null;
}

export function admitParams(q: LedgerAdmission): unknown[] {
  return [q.client, dayOf(q.from), Math.round(q.now), q.perMinute ?? null, q.budgetUsd ?? null];
}

/** The spend, and the ms until the bucket holds a token when none was taken (0 when one was). */
export function answerOf(row: AdmitRow, q: LedgerAdmission): LedgerAnswer {
  let waitMs = 0;
  if (row.took === false && q.perMinute !== undefined) waitMs = Math.max(1, Math.ceil((1 - (row.tokens ?? 0)) / (q.perMinute / 60_000)));
  return { spent: row.usd, waitMs };
}

/** The UTC day holding `ms`; -Infinity (a budget over all time) is PostgreSQL's '-infinity'. */
export function dayOf(ms: number): string {
  return ms === Number.NEGATIVE_INFINITY ? '-infinity' : new Date(ms).toISOString().slice(0, 10);
}
