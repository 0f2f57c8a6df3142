/**
 * Removing idle sessions from the database (`proxy sessions prune`,
 * docs/decisions/0024-idle-sessions-removed-by-the-operator.md): a session's rows go when its last
 * event is before the time and no replica is in a turn of it (the turn's lock, tried, not waited
 * for). A replica that holds it live between turns holds no lock; its next claim finds the row
 * gone and is refused (migrations.ts, version 7), and it starts the conversation afresh.
 */
import type pg from 'pg';
import type { RemoveOutcome } from '../../log/remove-idle.js';
import type { ImagesRemoved, SessionPruner } from '../types.js';
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

  /**
   * One statement asks the images' ages; where some are old enough, one more reads the names from
   * every user message's line in one pass and counts (a dry run) or removes. A replica confirming an
   * image while the removal runs updates its row, which the removal then reads again (READ
   * COMMITTED) and leaves; one that confirms it after finds no row and inserts it again.
   */
  async removeUnnamedImages(idleBefore: number, dryRun: boolean, leaving: readonly string[]): Promise<ImagesRemoved> {
    const at = new Date(idleBefore).toISOString();
    const ages = await reaching(() => this.#pool.query<{ old: string; recent: string }>(
      'SELECT count(*) FILTER (WHERE touched_at < $1) AS old, count(*) FILTER (WHERE touched_at >= $1) AS recent FROM blobs', [at],
    ));
    const old = Number(ages.rows[0]!.old);
    const recent = Number(ages.rows[0]!.recent);
    if (old === 0) return { removed: 0, bytes: 0, named: 0, recent };
    const { rows } = await reaching(() => this.#pool.query<{ removed: string; bytes: string; named: string }>(dryRun ? COUNT_OLD : REMOVE_OLD, [at, leaving]));
    const removed = Number(rows[0]!.removed);
    const named = Number(rows[0]!.named);
    // An old image neither named nor removed was marked while the removal ran.
    return { removed, bytes: Number(rows[0]!.bytes), named, recent: recent + old - named - removed };
  }
}

/**
 * Every digest a user message's line names (an image part's `sha256`, as file-images-gc.ts reads a
 * file), but those of the sessions in $2.
 */
const NAMED_CTE = `WITH named AS MATERIALIZED (
  SELECT DISTINCT m[1] AS sha256 FROM events e CROSS JOIN LATERAL regexp_matches(e.line, '"sha256":"([0-9a-f]{64})"', 'g') m
  WHERE e.type = 'client.msg' AND NOT (e.session_id = ANY($2::text[])))`;

/** The images last marked before $1: those no log names (what would go, and their bytes), and those named. */
const COUNT_OLD = `${NAMED_CTE}
  SELECT count(*) FILTER (WHERE n.sha256 IS NULL) AS removed, coalesce(sum(octet_length(b.bytes)) FILTER (WHERE n.sha256 IS NULL), 0) AS bytes,
         count(*) FILTER (WHERE n.sha256 IS NOT NULL) AS named
  FROM blobs b LEFT JOIN named n ON n.sha256 = b.sha256 WHERE b.touched_at < $1`;

/** The same, removing those no log names; the names read once for both. */
const REMOVE_OLD = `${NAMED_CTE},
  gone AS (DELETE FROM blobs b WHERE b.touched_at < $1 AND NOT EXISTS (SELECT 1 FROM named n WHERE n.sha256 = b.sha256) RETURNING octet_length(b.bytes) AS bytes)
  SELECT (SELECT count(*) FROM gone) AS removed, (SELECT coalesce(sum(bytes), 0) FROM gone) AS bytes,
         (SELECT count(*) FROM blobs b JOIN named n ON n.sha256 = b.sha256 WHERE b.touched_at < $1) AS named`;

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
