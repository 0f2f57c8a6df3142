/**
 * Applies the schema steps a database lacks (migrations.ts), at start. Replicas starting together
 * take turns: a transaction-scoped advisory lock serialises them, and each step commits with its
 * row in `schema_migrations`, so a step runs once. A database newer than this build is refused.
 */
import type pg from 'pg';
import { ProxyError } from '../../core/errors.js';
import { MIGRATIONS } from './migrations.js';

/** Any constant: the key of the advisory lock that serialises migrations. */
const MIGRATION_LOCK = 7_231_004_113;

export async function migrate(pool: pg.Pool, where: string): Promise<number[]> {
  const client = await pool.connect();
  const applied: number[] = [];
  try {
    for (const step of MIGRATIONS) {
      await client.query('BEGIN');
      try {
        // Another replica's migration is waited for however long it takes, not [store] lock_wait_seconds.
        await client.query('SET LOCAL lock_timeout = 0');
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
        const done = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [step.version]);
        if (done.rowCount === 0) {
          await client.query(step.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [step.version, step.name]);
          applied.push(step.version);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    }
    const newest = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
    const known = MIGRATIONS.at(-1)!.version;
    if ((newest.rows[0]?.v ?? 0) > known) {
      throw new ProxyError('config_invalid', { file: where, key: 'store', detail: `the database's schema is at version ${newest.rows[0]!.v}, newer than this build's ${known}: upgrade the proxy` });
    }
  } finally {
    client.release();
  }
  return applied;
}
