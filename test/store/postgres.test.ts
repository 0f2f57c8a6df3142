/**
 * The store contract on PostgreSQL (a real temporary cluster, pg-server.ts; the suite fails, never
 * skips, without one), and what only a shared store has: schema steps recorded once, a batch that
 * fails as a whole, a turn that catches up with another replica's appends, a lock that goes with
 * a dead connection.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventBody } from '../../src/core/events.js';
import type { NeutralMessage } from '../../src/core/types.js';
import { SessionManager } from '../../src/session/manager.js';
import { prune } from '../../src/cli/prune.js';
import { MIGRATIONS } from '../../src/store/pg/migrations.js';
import { PgStore } from '../../src/store/pg/store.js';
import { startPgServer, type PgServer } from './pg-server.js';
import { storeContract } from './contract.js';

let server: PgServer;
let dbs = 0;

beforeAll(async () => {
  server = await startPgServer();
}, 120_000);
afterAll(() => server?.stop());

const START: EventBody = { type: 'session.start', recipe: { version: 1 } as never, ids: [] };
const msg = (content: string): EventBody => ({ type: 'client.msg', msg: { role: 'user', content } });

// A claim waits 300 ms for a lock by default here, so that tests of a refusal are quick; a test
// that holds a lock on purpose and then lets it go asks for longer, or a loaded machine fails it.
async function makePg(lockWaitMs = 300) {
  const url = await server.createDatabase(`db${++dbs}`);
  const store = await PgStore.connect(url, { lockWaitMs });
  const raw = new pg.Client({ connectionString: url });
  await raw.connect();
  return {
    url,
    raw,
    store,
    another: () => PgStore.connect(url, { lockWaitMs }),
    async rawLines(id: string) {
      const { rows } = await raw.query<{ line: string }>('SELECT line FROM events WHERE session_id = $1 ORDER BY seq', [id]);
      return rows.map((r) => r.line);
    },
    async cleanup() {
      await raw.end();
      await store.close();
    },
  };
}

storeContract('postgres', makePg);

describe('postgres store only', () => {
  it('applies each schema step once, records it, and a second replica starting finds nothing to do', async () => {
    const b = await makePg();
    try {
      const { rows } = await b.raw.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
      expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
      const [x, y] = await Promise.all([PgStore.connect(b.url), PgStore.connect(b.url)]);
      await x.close();
      await y.close();
      expect((await b.raw.query('SELECT * FROM schema_migrations')).rowCount).toBe(MIGRATIONS.length);
      await b.raw.query('INSERT INTO schema_migrations (version, name) VALUES (999, $1)', ['future']);
      await expect(PgStore.connect(b.url)).rejects.toMatchObject({ code: 'config_invalid' });
    } finally {
      await b.cleanup();
    }
  });

  it('commits appends in batches: many appends in one tick, one transaction', async () => {
    const b = await makePg();
    try {
      const w = await b.store.open('s1', { create: true });
      await w.claim();
      const before = await b.raw.query<{ n: string }>("SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()");
      w.append(START, 'T');
      for (let i = 0; i < 200; i++) w.append(msg(`m${i}`), 'T');
      await w.sync();
      const after = await b.raw.query<{ n: string }>("SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()");
      expect((await b.rawLines('s1')).length).toBe(201);
      // The statistics lag a little and count our own queries: far fewer than one commit per event.
      expect(Number(after.rows[0]!.n) - Number(before.rows[0]!.n)).toBeLessThan(20);
      await w.close();
    } finally {
      await b.cleanup();
    }
  });

  it('a batch that cannot be stored fails whole: sync rejects, the log stops, nothing of it is kept', async () => {
    const b = await makePg();
    try {
      const w = await b.store.open('s1', { create: true });
      w.append(START, 'T');
      await w.sync();
      // Another writer took seq 2 behind this one's back (it had lost its lock): the key fences it.
      await b.raw.query("INSERT INTO events (session_id, seq, off, type, line) VALUES ('s1', 2, 999, 'client.msg', '{}')");
      w.append(msg('a'), 'T');
      w.append(msg('b'), 'T');
      await expect(w.sync()).rejects.toThrow(/events 2-3 were not stored/);
      expect(w.writeError).toBeDefined();
      expect(() => w.append(msg('c'), 'T')).toThrow(/not stored/);
      await expect(w.close()).rejects.toThrow();
      expect(await b.rawLines('s1')).toEqual([expect.stringContaining('"session.start"'), '{}']);
    } finally {
      await b.cleanup();
    }
  });

  it('a claim catches up with what another replica appended, and the offsets go on from its end', async () => {
    const b = await makePg(10_000);
    const other = await b.another();
    try {
      const a = await b.store.open('s1', { create: true });
      await a.claim();
      a.append(START, 'T');
      await a.unclaim();
      const c = await other.open('s1', { create: false });
      expect((await c.claim()).events).toEqual([]);
      const theirs = [c.append(msg('from c 1'), 'T'), c.append(msg('from c 2'), 'T')];
      // a waits for c's turn to end.
      const waiting = a.claim();
      await new Promise((r) => setTimeout(r, 100));
      await c.unclaim();
      const caught = await waiting;
      expect(caught.events).toEqual(theirs);
      expect(caught.offsets).toEqual([c.offsetOf(2), c.offsetOf(3)]);
      expect(a.lastSeq).toBe(3);
      expect(a.size).toBe(c.size);
      expect(a.append(msg('from a'), 'T').seq).toBe(4);
      await a.unclaim();
      const read = await b.store.read('s1');
      expect(read.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(read.offsets[3]).toBe(c.size);
      await a.close();
      await c.close();
    } finally {
      await other.close();
      await b.cleanup();
    }
  });

  it('a claim waits for the commit of the batch that gave the session back, and reads what it wrote', async () => {
    const b = await makePg(10_000);
    try {
      const a = await b.store.open('s1', { create: true });
      await a.claim();
      a.append(START, 'T');
      await a.endTurn();
      // Another replica's last batch, its unlock done and its commit not yet (append_events, held open here).
      const line = JSON.stringify({ seq: 2, ts: 'T', type: 'client.msg', msg: { role: 'user', content: 'theirs' } });
      await b.raw.query("SELECT pg_advisory_lock(hashtextextended('s1', 0))");
      await b.raw.query('BEGIN');
      await b.raw.query('SELECT append_events($1, $2, $3, $4, $5, NULL, true, NULL, NULL, NULL)', ['s1', [2], [a.size], ['client.msg'], [line]]);
      let done = false;
      const waiting = a.claim().then((caught) => {
        done = true;
        return caught;
      });
      await new Promise((r) => setTimeout(r, 150));
      expect(done).toBe(false);
      await b.raw.query('COMMIT');
      const caught = await waiting;
      expect(caught.events.map((e) => e.seq)).toEqual([2]);
      expect(a.append(msg('ours'), 'T').seq).toBe(3);
      await a.endTurn();
      expect((await b.store.read('s1')).events.map((e) => e.seq)).toEqual([1, 2, 3]);
      await a.close();
    } finally {
      await b.cleanup();
    }
  });

  it('a claimed turn\'s appends wait for its end, then go with its charge and its unlock; a refused admission takes no lock', async () => {
    const b = await makePg();
    const other = await b.another();
    try {
      const a = await b.store.open('s1', { create: true });
      const admission = { client: 'k', from: Date.UTC(2026, 0, 1), budgetUsd: 1, perMinute: undefined, now: Date.UTC(2026, 0, 2) };
      expect((await a.claim(admission)).admitted).toEqual({ spent: 0, waitMs: 0 });
      a.append(START, 'T');
      a.append(msg('one'), 'T');
      a.append(msg('two'), 'T');
      // Nothing is written before the turn ends.
      expect(await b.rawLines('s1')).toEqual([]);
      await a.endTurn({ client: 'k', ts: Date.UTC(2026, 0, 2), usd: 1.5 });
      expect(await b.rawLines('s1')).toHaveLength(3);
      expect((await b.raw.query('SELECT usd FROM client_spend WHERE client = $1', ['k'])).rows).toEqual([{ usd: 1.5 }]);
      // Given back with that commit: another replica claims at once (its wait is 300 ms).
      const c = await other.open('s1', { create: false });
      await c.claim();
      await c.unclaim();
      // Over budget now: refused, and the session stays free for others.
      expect((await a.claim(admission)).admitted).toEqual({ spent: 1.5, waitMs: 0 });
      await c.claim();
      await c.unclaim();
      await a.close();
      await c.close();
    } finally {
      await other.close();
      await b.cleanup();
    }
  });

  it('a session idle past locate_days is not taken from the database by another replica; one within it is', async () => {
    const DAY = 86_400_000;
    const b = await makePg();
    const other = await b.another();
    let t = Date.parse('2026-03-04T05:06:07Z');
    const options = { now: () => new Date(t), forgetAfterMs: 30 * DAY };
    const recipe = { version: 'window-v1', route: 'm', context: 100_000, output_reserve: 4096, high_water: 70_000, low_water: 40_000, max_result_tokens: 4096, protected_entries: 4, estimator: 'bytes/3', system: 'follow', client_drops: 'follow' } as const;
    const origin = { provider: 'p', model: 'm' };
    /** One request on a replica: the conversation's messages, answered `text`; its session and its llm.req's seq. */
    const ask = async (m: SessionManager, messages: NeutralMessage[], text: string) => {
      const turn = await m.begin({ system: 'sys', tools: [], messages, recipe });
      const req = turn.append({ type: 'llm.req', digest: 'd', recipe_version: 'window-v1', route: 'm', model: 'm', origin, params: {}, elided: [], est_tokens: 1 });
      turn.append({ type: 'llm.resp', req: req.seq, reply: { content: text, finish_reason: 'stop' }, origin, timings: { total_ms: 1 } });
      await turn.session.log.sync();
      turn.release();
      return { id: turn.session.id, seq: req.seq };
    };
    const a = new SessionManager(b.store, options);
    const c = new SessionManager(other, options);
    try {
      await a.init();
      await c.init();
      const old = await ask(a, [{ role: 'user', content: 'old task' }], 'old answer');
      t += 20 * DAY;
      const recent = await ask(a, [{ role: 'user', content: 'recent task' }], 'recent answer');
      t += 11 * DAY;
      // Replica c never saw either: it asks the database, and takes only the one within the horizon,
      // whether a request extends it or names its reply (a Responses previous_response_id).
      expect(await c.conversationAt(recent.id, recent.seq)).toBeDefined();
      expect(await c.conversationAt(old.id, old.seq)).toBeUndefined();
      expect((await ask(c, [{ role: 'user', content: 'recent task' }, { role: 'assistant', content: 'recent answer' }, { role: 'user', content: 'more' }], 'r')).id).toBe(recent.id);
      expect((await ask(c, [{ role: 'user', content: 'old task' }, { role: 'assistant', content: 'old answer' }, { role: 'user', content: 'more' }], 'r')).id).not.toBe(old.id);
    } finally {
      await a.close();
      await c.close();
      await other.close();
      await b.cleanup();
    }
  });

  it('proxy sessions prune removes an idle session\'s rows, keeps a recent one and one in a turn; a replica holding the removed one live starts it afresh', async () => {
    const DAY = 86_400_000;
    const b = await makePg();
    let t = Date.parse('2026-03-04T05:06:07Z');
    const recipe = { version: 'window-v1', route: 'm', context: 100_000, output_reserve: 4096, high_water: 70_000, low_water: 40_000, max_result_tokens: 4096, protected_entries: 4, estimator: 'bytes/3', system: 'follow', client_drops: 'follow' } as const;
    const origin = { provider: 'p', model: 'm' };
    /** A request's events in its session, its turn left open unless `release`. */
    const ask = async (m: SessionManager, messages: NeutralMessage[], text: string, release = true) => {
      const turn = await m.begin({ system: 'sys', tools: [], messages, recipe });
      const req = turn.append({ type: 'llm.req', digest: 'd', recipe_version: 'window-v1', route: 'm', model: 'm', origin, params: {}, elided: [], est_tokens: 1 });
      turn.append({ type: 'llm.resp', req: req.seq, reply: { content: text, finish_reason: 'stop' }, origin, timings: { total_ms: 1 } });
      await turn.session.log.sync();
      if (release) turn.release();
      return turn;
    };
    // On a shared store sessions stay in memory after their answer: `a` holds every one live.
    const a = new SessionManager(b.store, { now: () => new Date(t), forgetAfterMs: 30 * DAY });
    try {
      await a.init();
      const old = (await ask(a, [{ role: 'user', content: 'old task' }], 'old answer')).session.id;
      const busy = await ask(a, [{ role: 'user', content: 'a long task' }], 'working', false);
      t += 40 * DAY;
      const recent = (await ask(a, [{ role: 'user', content: 'recent task' }], 'recent answer')).session.id;
      const idleBefore = t - 30 * DAY;

      const oldLines = await b.rawLines(old);
      const dry = await prune(b.store, idleBefore, true, 30);
      expect(dry.removed.map((r) => r.id)).toEqual([old]);
      expect(await b.rawLines(old)).toEqual(oldLines);
      const report = await prune(b.store, idleBefore, false, 30);
      expect(report.removed.map((r) => r.id)).toEqual([old]);
      // Its size as the file store's log: each line and its newline.
      expect(report.removed[0]!.bytes).toBe(oldLines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));
      expect(report.in_use).toEqual([{ id: busy.session.id, detail: 'a replica is in a turn of it' }]);
      expect(report.kept).toBe(1);
      expect(await b.store.exists(recent)).toBe(true);
      expect(await b.store.exists(old)).toBe(false);
      expect(await b.rawLines(old)).toEqual([]);
      busy.release();

      // `a` still holds the removed session live: its continuation is refused at the claim, and
      // starts a conversation of its own, the whole history in it.
      const next = await ask(a, [{ role: 'user', content: 'old task' }, { role: 'assistant', content: 'old answer' }, { role: 'user', content: 'more' }], 'again');
      expect(next.session.id).not.toBe(old);
      const sent = (await b.store.read(next.session.id)).events.flatMap((e) => (e.type === 'client.msg' && e.msg.role !== 'system' ? [e.msg.content] : []));
      expect(sent).toEqual(['old task', 'old answer', 'more']);
      expect(a.sessionIds()).not.toContain(old);
      expect((await prune(b.store, idleBefore, false, 30)).removed.map((r) => r.id)).toEqual([busy.session.id]);
    } finally {
      await a.close();
      await b.cleanup();
    }
  });

  it('proxy sessions prune removes the images no log names and no replica marked since; a replica\'s put marks one, and puts back one removed', async () => {
    const b = await makePg();
    try {
      const blobs = b.store.blobs!;
      const [a, c, d, e] = ['a', 'c', 'd', 'e'].map((x) => x.repeat(64)) as [string, string, string, string];
      for (const sha of [a, c, d, e]) await blobs.put(sha, Buffer.alloc(100, sha.charCodeAt(0)));
      const line = (seq: number, sha: string) => JSON.stringify({ seq, ts: '2026-01-01T00:00:00.000Z', type: 'client.msg', msg: { role: 'user', content: [{ type: 'image', sha256: sha, mime: 'image/png', tokens: 85 }] } });
      await b.store.importLog('names-a', [line(1, a)]);
      await b.store.importLog('names-d', [line(1, d)]);
      await b.raw.query(`UPDATE blobs SET touched_at = now() - interval '40 days' WHERE sha256 = ANY($1)`, [[a, c, d]]);
      const idleBefore = Date.now() - 30 * 86_400_000;
      // Nothing old yet: counted without reading the events.
      expect(await b.store.pruner.removeUnnamedImages(Date.now() - 60 * 86_400_000, false, [])).toEqual({ removed: 0, bytes: 0, named: 0, recent: 4 });

      // a and d are named, c is not, e is recent; a dry run for which names-d would go counts d too.
      expect(await b.store.pruner.removeUnnamedImages(idleBefore, true, ['names-d'])).toEqual({ removed: 2, bytes: 200, named: 1, recent: 1 });
      expect((await b.raw.query('SELECT 1 FROM blobs')).rowCount).toBe(4);
      // A replica names c again (its hourly mark): it stays.
      await blobs.put(c, Buffer.alloc(100, 99));
      expect(await b.store.pruner.removeUnnamedImages(idleBefore, false, [])).toEqual({ removed: 0, bytes: 0, named: 2, recent: 2 });
      await b.raw.query(`UPDATE blobs SET touched_at = now() - interval '40 days' WHERE sha256 = $1`, [c]);
      expect(await b.store.pruner.removeUnnamedImages(idleBefore, false, [])).toEqual({ removed: 1, bytes: 100, named: 2, recent: 1 });
      expect((await blobs.get([a, c, d, e])).size).toBe(3);
      // Named again after it went: the replica's put writes it again.
      await blobs.put(c, Buffer.alloc(100, 99));
      expect((await blobs.get([c])).get(c)).toEqual(Buffer.alloc(100, 99));
    } finally {
      await b.cleanup();
    }
  });

  it('a replica that dies holding a turn gives its lock up with its connection', async () => {
    const b = await makePg();
    const other = await b.another();
    try {
      const a = await b.store.open('s1', { create: true });
      await a.claim();
      a.append(START, 'T');
      await a.sync();
      // What kill -9 does to the replica's connections.
      await b.raw.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory')");
      const c = await other.open('s1', { create: false });
      await c.claim();
      expect(c.append(msg('after'), 'T').seq).toBe(2);
      await c.unclaim();
      await c.close();
      await a.close().catch(() => undefined);
    } finally {
      await other.close();
      await b.cleanup();
    }
  });
});
