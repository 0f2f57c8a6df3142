/**
 * Removing idle sessions from the database (`proxy sessions prune`,
 * docs/decisions/0024-idle-sessions-removed-by-the-operator.md): a session's rows go when its last
 * event is before the time and no replica is in a turn of it (the turn's lock, tried, not waited
 * for). A replica that holds it live between turns holds no lock; its next claim finds the row
 * gone and is refused (migrations.ts, version 7), and it starts the conversation afresh.
 */
import type pg from 'pg';
import type { RemoveOutcome } from '../../log/remove-idle.js';
import type { SessionPruner } from '../types.js';
import { reaching } from './unavailable.js';

export class PgPruner implements SessionPruner {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async removeIdle(id: string, idleBefore: number, dryRun: boolean): Promise<RemoveOutcome> {
    // Asked first without the lock: a recent session's next turn is never made to wait for this.
    const before = await idleness(this.#pool, id, idleBefore);
    if (before.kind !== 'idle') return before;
    const client = await reaching(() => this.#pool.connect());
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [id]);
      if (rows[0]?.locked !== true) return { kind: 'in_use', detail: 'a replica is in a turn of it' };
      try {
        await client.query('BEGIN');
        const now = await idleness(client, id, idleBefore);
        if (now.kind !== 'idle' || dryRun) {
          await client.query('ROLLBACK');
          return now.kind === 'idle' ? { kind: 'removed', bytes: now.bytes, lastActive: now.lastActive } : now;
        }
        await client.query('DELETE FROM events WHERE session_id = $1', [id]);
        await client.query('DELETE FROM sessions WHERE id = $1', [id]);
        await client.query('COMMIT');
        return { kind: 'removed', bytes: now.bytes, lastActive: now.lastActive };
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [id]);
      }
    } finally {
      client.release();
    }
  }

  /** First syncs are the file store's: nothing to put back here. */
  recoverFirstSyncs(): Promise<void> {
    return Promise.resolve();
  }
}

type Idleness = { kind: 'idle'; bytes: number; lastActive: string | null } | Extract<RemoveOutcome, { kind: 'active' | 'missing' | 'unreadable' }>;

/**
 * The session's last event, and its size in the file store's terms: the last line's byte offset in
 * the JSONL file (`off`), its bytes and its newline. One row by the primary key, however long the log.
 */
async function idleness(db: pg.Pool | pg.PoolClient, id: string, idleBefore: number): Promise<Idleness> {
  const { rows } = await db.query<{ found: boolean; line: string | null; bytes: string | null }>(
    `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1) AS found, last.line, last.off + octet_length(last.line) + 1 AS bytes
     FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT line, off FROM events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1) AS last ON true`,
    [id],
  );
  const row = rows[0]!;
  if (!row.found) return { kind: 'missing' };
  let lastActive: string | null = null;
  if (row.line !== null) {
    let ts: unknown;
    try {
      ts = (JSON.parse(row.line) as { ts?: unknown }).ts;
    } catch {
      // Not JSON: reported below, as a line without a time.
    }
    if (typeof ts !== 'string') return { kind: 'unreadable', detail: `the last event of session ${id} has no time` };
    lastActive = ts;
  }
  if (lastActive !== null && !(Date.parse(lastActive) < idleBefore)) return { kind: 'active', lastActive };
  return { kind: 'idle', bytes: Number(row.bytes ?? 0), lastActive };
}
