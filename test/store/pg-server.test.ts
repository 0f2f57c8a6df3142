/** The test cluster itself: it starts, takes connections and a new database, and is gone once stopped. */
import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startPgServer } from './pg-server.js';

describe('temporary PostgreSQL cluster', () => {
  it('starts, serves a new database in UTF-8, and stops', async () => {
    const server = await startPgServer();
    let url = '';
    try {
      url = await server.createDatabase('smoke');
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ enc: string; db: string }>('SELECT current_setting(\'server_encoding\') AS enc, current_database() AS db');
      await client.end();
      expect(rows[0]).toEqual({ enc: 'UTF8', db: 'smoke' });
    } finally {
      server.stop();
    }
    const after = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    await expect(after.connect()).rejects.toThrow();
    expect(existsSync(server.dir)).toBe(false);
  });
});
