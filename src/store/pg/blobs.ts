/**
 * Images in the database (docs/scaling.md, Images): a row per SHA-256, inserted once (a digest
 * names its bytes), read in one statement per batch. A second put of a digest only marks it
 * written now (`touched_at`), which keeps it from `proxy sessions prune` (decision 0026).
 */
import type pg from 'pg';
import type { BlobStore } from '../types.js';
import { reaching } from './unavailable.js';

export class PgBlobStore implements BlobStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async put(sha256: string, bytes: Buffer): Promise<void> {
    await reaching(() => this.#pool.query('INSERT INTO blobs (sha256, bytes) VALUES ($1, $2) ON CONFLICT (sha256) DO UPDATE SET touched_at = now()', [sha256, bytes]));
  }

  async get(sha256s: readonly string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    if (sha256s.length === 0) return out;
    const { rows } = await reaching(() => this.#pool.query<{ sha256: string; bytes: Buffer }>('SELECT sha256, bytes FROM blobs WHERE sha256 = ANY($1::text[])', [sha256s]));
    for (const r of rows) out.set(r.sha256, r.bytes);
    return out;
  }
}
