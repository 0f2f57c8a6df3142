/**
 * The store contract (src/store/types.ts), run against each backend by files.test.ts and
 * postgres.test.ts: what the session manager, replay and the CLI rely on, whichever store holds
 * the log. A backend passes only if it keeps lines byte for byte at their JSONL offsets.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../../src/core/events.js';
import type { SessionWriter, Store } from '../../src/store/types.js';

export interface Backend {
  /** A store on empty storage. */
  store: Store;
  /** Another store on the same storage (another process or replica would hold it). */
  another(): Promise<Store>;
  /** The stored lines of a log, as bytes (without newlines). */
  rawLines(id: string): Promise<string[]>;
  cleanup(): Promise<void>;
}

const TS = '2026-01-02T03:04:05.678Z';

/** Bodies that stress serialisation: non-ASCII, escapes, nested, numbers. */
function bodies(n: number, tag = ''): EventBody[] {
  const out: EventBody[] = [{ type: 'session.start', recipe: { version: 1 } as never, ids: [`x${tag}`] } as EventBody];
  for (let i = 1; i < n; i++) {
    out.push({ type: 'client.msg', msg: { role: 'user', content: `${tag}${i}: héllo ☃ \u0001 "q" \\ \n 𝄞 ${'z'.repeat(i * 7)}` } } as EventBody);
  }
  return out;
}

function appendAll(w: SessionWriter, list: EventBody[]) {
  return list.map((b) => w.append(b, TS));
}

export function storeContract(name: string, make: () => Promise<Backend>): void {
  describe(`store contract: ${name}`, () => {
    let b: Backend;
    const opened: SessionWriter[] = [];
    const extra: Store[] = [];
    const open = async (s: Store, id: string, create = true) => {
      const w = await s.open(id, { create });
      opened.push(w);
      return w;
    };
    const another = async () => {
      const s = await b.another();
      extra.push(s);
      return s;
    };

    beforeEach(async () => {
      b = await make();
    });
    afterEach(async () => {
      for (const w of opened.splice(0)) await w.close().catch(() => undefined);
      for (const s of extra.splice(0)) await s.close();
      await b.cleanup();
    });

    it('stores each appended event as the exact line written, at its JSONL byte offset', async () => {
      const w = await open(b.store, 's1');
      const written = appendAll(w, bodies(5));
      await w.sync();
      const lines = written.map((e) => JSON.stringify(e));
      expect(await b.rawLines('s1')).toEqual(lines);
      const read = await b.store.read('s1');
      expect(read.events).toEqual(written);
      let off = 0;
      const offsets = lines.map((l) => {
        const at = off;
        off += Buffer.byteLength(l, 'utf8') + 1;
        return at;
      });
      expect(read.offsets).toEqual(offsets);
      expect(read.end).toBe(off);
      expect(w.size).toBe(off);
      expect(written.map((e) => w.offsetOf(e.seq))).toEqual(offsets);
      expect(read.torn).toBeUndefined();
    });

    it('numbers events 1, 2, 3 and carries on after a reopen', async () => {
      const w = await open(b.store, 's1');
      expect(appendAll(w, bodies(3)).map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(w.lastSeq).toBe(3);
      await w.close();
      const again = await open(b.store, 's1', false);
      expect(again.lastSeq).toBe(3);
      expect(again.events.map((e) => e.seq)).toEqual([1, 2, 3]);
      const size = again.size;
      expect(again.append(bodies(2)[1]!, TS).seq).toBe(4);
      expect(again.offsetOf(4)).toBe(size);
      await again.sync();
      expect((await b.store.read('s1')).events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    });

    it('a synced event is there for another store on the same storage, before the writer closes', async () => {
      const w = await open(b.store, 's1');
      const written = appendAll(w, bodies(4));
      await w.sync();
      const other = await another();
      expect((await other.read('s1')).events).toEqual(written);
    });

    it('a claimed turn\'s events are there for another store once the turn ends, and it claims again', async () => {
      const w = await open(b.store, 's1');
      await w.claim();
      const written = appendAll(w, bodies(3));
      await w.endTurn();
      const other = await another();
      expect((await other.read('s1')).events).toEqual(written);
      await w.claim();
      written.push(w.append(bodies(4)[3]!, TS));
      await w.endTurn();
      await w.unclaim();
      expect((await other.read('s1')).events).toEqual(written);
    });

    it('opens from a line offset; an offset inside a line is refused; an event is read by its offset', async () => {
      const w = await open(b.store, 's1');
      const written = appendAll(w, bodies(5));
      await w.close();
      const at = (await b.store.read('s1')).offsets[2]!;
      const tail = await open(b.store, 's1', false).then(async (x) => {
        await x.close();
        return b.store.open('s1', { create: false, fromOffset: at });
      });
      opened.push(tail);
      expect(tail.events).toEqual(written.slice(2));
      expect(tail.lastSeq).toBe(5);
      expect((await b.store.read('s1', { fromOffset: at })).events).toEqual(written.slice(2));
      await expect(b.store.read('s1', { fromOffset: at + 3 })).rejects.toMatchObject({ code: 'log_malformed' });
      expect(await b.store.readEventAt('s1', at)).toEqual(written[2]);
      await expect(b.store.readEventAt('s1', at + 1)).rejects.toMatchObject({ code: 'log_malformed' });
    });

    it('a missing log is session_not_found to open and to read; a bad id is refused', async () => {
      await expect(b.store.open('nope', { create: false })).rejects.toMatchObject({ code: 'session_not_found' });
      await expect(b.store.read('nope')).rejects.toMatchObject({ code: 'session_not_found' });
      expect(await b.store.exists('nope')).toBe(false);
      await expect(b.store.open('../etc', { create: true })).rejects.toMatchObject({ code: 'bad_argument' });
      // The refused open left nothing held: it opens once created.
      const w = await open(b.store, 'nope');
      expect(w.lastSeq).toBe(0);
    });

    it('lists sessions sorted, and says which exist', async () => {
      for (const id of ['b-2', 'a_1', 'B.3']) {
        const w = await open(b.store, id);
        w.append(bodies(1)[0]!, TS);
        await w.close();
      }
      expect(await b.store.listSessions()).toEqual(['B.3', 'a_1', 'b-2']);
      expect(await b.store.exists('a_1')).toBe(true);
      expect(await b.store.exists('a_2')).toBe(false);
    });

    it('keeps the saved index: round trip, replaced, undefined when none, in the startup snapshot with the log size', async () => {
      const w = await open(b.store, 's1');
      appendAll(w, bodies(3));
      await w.close();
      expect(await b.store.readIndex('s1')).toBeUndefined();
      const value = { version: 2, log_size: 7, point: { start: { seq: 2, offset: 10 }, carried: [] }, entry: { id: 's1', tip: 'h', ids: ['é'] } };
      await b.store.writeIndex('s1', value);
      expect(await b.store.readIndex('s1')).toEqual(value);
      await b.store.writeIndex('s1', { ...value, log_size: 8 });
      expect(await b.store.readIndex<{ log_size: number }>('s1')).toMatchObject({ log_size: 8 });
      const snap = await b.store.indexSnapshot();
      const size = (await b.store.read('s1')).end;
      expect(snap.map((s) => s.id)).toEqual(['s1']);
      expect(snap[0]!.size).toBe(size);
      expect(snap[0]!.index).toMatchObject({ point: value.point });
    });

    it('appends to two sessions at once, each log keeping its own events in order', async () => {
      const [x, y] = [await open(b.store, 'x'), await open(b.store, 'y')];
      const wx = bodies(40, 'x');
      const wy = bodies(40, 'y');
      const syncs: Promise<void>[] = [];
      for (let i = 0; i < 40; i++) {
        x.append(wx[i]!, TS);
        y.append(wy[i]!, TS);
        if (i % 3 === 0) syncs.push(x.sync(), y.sync());
        if (i % 7 === 0) await new Promise((r) => setImmediate(r));
      }
      await Promise.all([...syncs, x.sync(), y.sync()]);
      const rx = await b.store.read('x');
      const ry = await b.store.read('y');
      expect(rx.events.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect(rx.events.every((e) => !JSON.stringify(e).includes('"y'))).toBe(true);
      expect(ry.events.slice(1).every((e) => JSON.stringify(e).includes('y'))).toBe(true);
      expect(rx.end).toBe(x.size);
      expect(ry.end).toBe(y.size);
    });

    it('refuses a second writer on a session held by another, here or in another process', async () => {
      const w = await open(b.store, 's1');
      await w.claim();
      await expect(b.store.open('s1', { create: false })).rejects.toMatchObject({ code: 'log_locked' });
      const other = await another();
      const second = other.open('s1', { create: false }).then(async (x) => {
        opened.push(x);
        await x.claim();
      });
      await expect(second).rejects.toMatchObject({ code: 'log_locked' });
      // Closed, the session is anyone's.
      await w.unclaim();
      await w.close();
      const next = await open(b.store, 's1', false);
      await next.claim();
      next.append(bodies(2)[1]!, TS);
      await next.unclaim();
      expect((await b.store.read('s1')).events.map((e) => e.seq)).toEqual([1]);
    });

    it('an append after close throws, and close is idempotent', async () => {
      const w = await open(b.store, 's1');
      w.append(bodies(1)[0]!, TS);
      await w.close();
      await w.close();
      expect(() => w.append(bodies(1)[0]!, TS)).toThrow();
      expect((await b.store.read('s1')).events).toHaveLength(1);
    });
  });
}
