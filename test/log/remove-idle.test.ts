/**
 * Removing an idle session's log (src/log/remove-idle.ts, `proxy sessions prune`): dated by its
 * last complete event, removed only when idle past the time and held by no live process (this
 * one's open writers, another's lock file or list of new logs), and its sidecar lines left out of
 * the journal's next compaction.
 */
import { existsSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogStore } from '../../src/log/store.js';
import { FileStore } from '../../src/store/files.js';
import { Child, childWorld, userMsg } from './helpers.js';

const w = childWorld();

const DAY = 86_400_000;
const NOW = Date.parse('2026-12-01T00:00:00Z');

/** A closed log whose events are dated `ts`. */
async function logAt(store: LogStore, id: string, ...ts: string[]): Promise<string> {
  const log = await store.open(id, { create: true });
  for (const t of ts) log.append(userMsg(`at ${t}`), t);
  await log.sync();
  await log.close();
  return store.file(id);
}

describe('an idle log', () => {
  it('is removed when its last event is before the time, and kept when it is not; a dry run keeps it', async () => {
    const store = new LogStore(w.dir);
    const old = await logAt(store, 'old', '2026-09-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z');
    const recent = await logAt(store, 'recent', '2026-09-01T00:00:00.000Z', '2026-11-25T00:00:00.000Z');
    const idleBefore = NOW - 30 * DAY; // 2026-11-01
    const size = (await readFile(old)).length;

    expect(await store.removeIdle('old', idleBefore, true)).toEqual({ kind: 'removed', bytes: size, lastActive: '2026-10-01T00:00:00.000Z' });
    expect(existsSync(old)).toBe(true);
    expect(await store.removeIdle('recent', idleBefore)).toEqual({ kind: 'active', lastActive: '2026-11-25T00:00:00.000Z' });
    expect(await store.removeIdle('old', idleBefore)).toEqual({ kind: 'removed', bytes: size, lastActive: '2026-10-01T00:00:00.000Z' });
    expect(existsSync(old)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    expect(await store.removeIdle('old', idleBefore)).toEqual({ kind: 'missing' });
    // The lock taken to remove it is given back: the recent log opens as before.
    expect(existsSync(store.lockFile('old'))).toBe(false);
    await (await store.open('recent', { create: false })).close();
  });

  it('is dated by its last complete event when the last line is torn, and an empty log has no date: it goes', async () => {
    const store = new LogStore(w.dir);
    const torn = await logAt(store, 'torn', '2026-10-01T00:00:00.000Z');
    await appendFile(torn, '{"seq":2,"ts":"2026-11-30T00:00:00.000Z","type":"client.m');
    expect(await store.removeIdle('torn', NOW - 30 * DAY)).toMatchObject({ kind: 'removed', lastActive: '2026-10-01T00:00:00.000Z' });
    await writeFile(store.file('empty'), '');
    expect(await store.removeIdle('empty', NOW - 30 * DAY)).toMatchObject({ kind: 'removed', lastActive: null, bytes: 0 });
  });

  it('is left, and named, when a damaged line keeps it from being dated; it costs only itself', async () => {
    const store = new LogStore(w.dir);
    // A line that is not JSON before the last one: a damaged log, not a torn tail.
    const damaged = await logAt(store, 'damaged', '2026-10-01T00:00:00.000Z');
    await appendFile(damaged, 'not json at all\n{"seq":3,"ts":"2026-10-02T00:00:00.000Z","type":"client.msg"}\n{"seq":4,"ts":"2026-10-03T00:00:00.000Z","type":"client.msg"');
    const outcome = await store.removeIdle('damaged', NOW);
    expect(outcome).toMatchObject({ kind: 'unreadable' });
    expect(outcome.kind === 'unreadable' && outcome.detail).toContain('damaged.jsonl');
    expect(existsSync(damaged)).toBe(true);
    await logAt(store, 'fine', '2026-10-01T00:00:00.000Z');
    expect(await store.removeIdle('fine', NOW)).toMatchObject({ kind: 'removed' });
  });

  it('takes the session\'s sidecar file from before the journal with it', async () => {
    const store = new LogStore(w.dir);
    await logAt(store, 'old', '2026-10-01T00:00:00.000Z');
    await writeFile(store.indexFile('old'), '{}');
    await store.removeIdle('old', NOW);
    expect(existsSync(store.indexFile('old'))).toBe(false);
  });
});

describe('a log a live process holds', () => {
  it('stays while this process has it open', async () => {
    const store = new LogStore(w.dir);
    const log = await store.open('mine', { create: true });
    log.append(userMsg('hello'), '2026-10-01T00:00:00.000Z');
    await log.sync();
    expect(await store.removeIdle('mine', NOW)).toMatchObject({ kind: 'in_use' });
    expect(existsSync(store.file('mine'))).toBe(true);
    await log.close();
    expect(await store.removeIdle('mine', NOW)).toMatchObject({ kind: 'removed' });
  });

  it.each([
    ['a new log, held through its list', 'new', /its list of new logs/],
    ['a log opened again, held by its lock file', 'reopened', /locked by process/],
  ])('stays while another process holds %s; once it dies, the log goes', async (_what, how, detail) => {
    const store = new LogStore(w.dir);
    const holder = new Child('hold-lock.mjs', [w.dir, 'held', how]);
    w.children.push(holder);
    await holder.waitFor((l) => l.startsWith('ready '));
    // Its events are of now: "idle" here is everything before tomorrow.
    const tomorrow = Date.now() + DAY;
    const outcome = await store.removeIdle('held', tomorrow);
    expect(outcome).toMatchObject({ kind: 'in_use' });
    expect(outcome.kind === 'in_use' && outcome.detail).toMatch(detail);
    expect(outcome.kind === 'in_use' && outcome.detail).toContain(String(holder.pid));
    expect(existsSync(store.file('held'))).toBe(true);
    await holder.kill();
    expect(await store.removeIdle('held', tomorrow)).toMatchObject({ kind: 'removed' });
    expect(existsSync(store.file('held'))).toBe(false);
  });

  it('is not locked by a look at it while it is recent: a process opening it meanwhile is not refused', async () => {
    const store = new LogStore(w.dir);
    await logAt(store, 'busy', new Date(NOW).toISOString());
    const looks = Array.from({ length: 20 }, () => store.removeIdle('busy', NOW - DAY));
    const opened = await store.open('busy', { create: false });
    expect((await Promise.all(looks)).every((o) => o.kind === 'active')).toBe(true);
    await opened.close();
  });
});

describe('the sidecar journal', () => {
  it('leaves out, at its next compaction, the lines of logs that were removed', async () => {
    const store = new FileStore(w.dir);
    await logAt(store, 'kept-a', '2026-11-30T00:00:00.000Z');
    await logAt(store, 'kept-b', '2026-11-30T00:00:00.000Z');
    for (const id of ['kept-a', 'kept-b']) await store.writeIndex(id, { id });
    for (let i = 0; i < 1100; i++) {
      const id = `gone-${i}`;
      await writeFile(store.file(id), '');
      await store.writeIndex(id, { id });
      expect(await store.removeIdle(id, NOW)).toMatchObject({ kind: 'removed' });
    }
    const snapshot = await store.indexSnapshot();
    expect(snapshot.map((s) => [s.id, s.index])).toEqual([['kept-a', { id: 'kept-a' }], ['kept-b', { id: 'kept-b' }]]);
    const lines = (await readFile(join(store.dir, 'sidecars.ndjson'), 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id);
    expect(lines.sort()).toEqual(['kept-a', 'kept-b']);
  });
});
