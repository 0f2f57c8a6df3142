/**
 * Client keys kept in the database (`proxy keys`, docs/scaling.md, Keys without restarts): only
 * each key's SHA-256, its limits, and when it was made or revoked. Every change takes the next
 * `rev`, so a replica asks one cheap question (the newest rev) every few seconds and reloads the
 * keys only when it moved.
 */
import type pg from 'pg';
import { ProxyError } from '../../core/errors.js';
import type { KeyStore, StoredKey } from '../types.js';
import { reaching } from './unavailable.js';

interface KeyRow {
  name: string;
  sha256: string;
  models: string[] | null;
  budget_usd: number | null;
  budget_period: 'day' | 'month' | 'total';
  requests_per_minute: number | null;
  admin: boolean;
  created_at: Date;
  revoked_at: Date | null;
}

export class PgKeyStore implements KeyStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async add(key: Omit<StoredKey, 'createdAt' | 'revokedAt'>): Promise<void> {
    try {
      await reaching(() => this.#pool.query(
        'INSERT INTO client_keys (name, sha256, models, budget_usd, budget_period, requests_per_minute, admin) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [key.name, key.sha256, key.models ?? null, key.budgetUsd ?? null, key.budgetPeriod, key.requestsPerMinute ?? null, key.admin === true],
      ));
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new ProxyError('bad_argument', { detail: `a key named ${JSON.stringify(key.name)} exists already (revoked keys keep their name)` });
      throw err;
    }
  }

  async list(): Promise<StoredKey[]> {
    const { rows } = await reaching(() => this.#pool.query<KeyRow>('SELECT * FROM client_keys ORDER BY name COLLATE "C"'));
    return rows.map((r) => ({
      name: r.name, sha256: r.sha256, models: r.models ?? undefined, budgetPeriod: r.budget_period,
      ...(r.budget_usd === null ? {} : { budgetUsd: r.budget_usd }),
      ...(r.requests_per_minute === null ? {} : { requestsPerMinute: r.requests_per_minute }),
      ...(r.admin ? { admin: true as const } : {}),
      createdAt: r.created_at.toISOString(), revokedAt: r.revoked_at?.toISOString(),
    }));
  }

  async revoke(name: string): Promise<void> {
    const { rowCount } = await reaching(() => this.#pool.query("UPDATE client_keys SET revoked_at = now(), rev = nextval('client_key_rev') WHERE name = $1 AND revoked_at IS NULL", [name]));
    if (rowCount !== 1) throw new ProxyError('bad_argument', { detail: `no live key named ${JSON.stringify(name)}` });
  }

  async setBudget(name: string, usd: number | undefined, period: 'day' | 'month' | 'total' | undefined): Promise<void> {
    const { rowCount } = await reaching(() => this.#pool.query(
      "UPDATE client_keys SET budget_usd = $2, budget_period = coalesce($3, budget_period), rev = nextval('client_key_rev') WHERE name = $1 AND revoked_at IS NULL",
      [name, usd ?? null, period ?? null],
    ));
    if (rowCount !== 1) throw new ProxyError('bad_argument', { detail: `no live key named ${JSON.stringify(name)}` });
  }

  async version(): Promise<number> {
    const { rows } = await reaching(() => this.#pool.query<{ rev: string | null }>('SELECT max(rev) AS rev FROM client_keys'));
    return Number(rows[0]?.rev ?? 0);
  }

  async spent(name: string, from: number): Promise<number> {
    const day = from === Number.NEGATIVE_INFINITY ? '-infinity' : new Date(from).toISOString().slice(0, 10);
    const { rows } = await reaching(() => this.#pool.query<{ usd: number }>('SELECT coalesce(sum(usd), 0)::float8 AS usd FROM client_spend WHERE client = $1 AND day >= $2::date', [name, day]));
    return rows[0]!.usd;
  }
}
