import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isProxyError } from '../../src/core/errors.js';
import { HeldList, holds } from '../../src/log/held-list.js';
import { BOOT, selfLine, startOf } from '../../src/log/process-boot.js';
import { LogStore } from '../../src/log/store.js';
import { Child, childWorld } from './helpers.js';

const w = childWorld();

/** A log made and closed: its next open takes a lock file (a new one is held through the list). */
async function existing(store: LogStore, id: string): Promise<void> {
  await (await store.open(id, { create: true })).close();
}

/** What a running process writes in its lock and pid file, and first in its held list. */
function lineOf(pid: number): string {
  return `${[pid, BOOT, BOOT === undefined ? undefined : startOf(pid)].filter((x) => x !== undefined).join(' ')}\n`;
}

/** A boot that is not this one. */
const OTHER_BOOT = BOOT === undefined ? undefined : `${BOOT[0] === 'a' ? 'b' : 'a'}${BOOT.slice(1)}`;

function heldListOf(store: LogStore, pid: number): string {
  return join(store.lockDir, `.held-${pid}`);
}

/** A pid that surely belongs to no process: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid!;
}

describe('the lock file', () => {
  it.each([
    ['a new log, held through its list', 'new'],
    ['a log opened again, held by its lock file', 'reopened'],
  ])('a second process cannot open %s; once it dies the session is taken over', async (_what, how) => {
    const store = new LogStore(w.dir);
    const holder = new Child('hold-lock.mjs', [w.dir, 'shared', how]);
    w.children.push(holder);
    await holder.waitFor((l) => l.startsWith('ready '));
    if (how === 'new') {
      expect(existsSync(store.lockFile('shared'))).toBe(false);
      expect(holds(await readFile(heldListOf(store, holder.pid), 'latin1'), 'shared')).toBe(true);
    } else {
      expect(await readFile(store.lockFile('shared'), 'utf8')).toBe(lineOf(holder.pid));
    }

    let err: unknown;
    try {
      await store.open('shared', { create: false });
    } catch (e) {
      err = e;
    }
    expect(isProxyError(err) && err.code).toBe('log_locked');
    expect((err as Error).message).toBe(`${store.file('shared')}: the session is locked by process ${holder.pid}.`);
    // Refused, it leaves no lock file of its own behind.
    if (how === 'new') expect(existsSync(store.lockFile('shared'))).toBe(false);
    // A create of the same id meets the log and is refused the same way.
    await expect(store.open('shared', { create: true })).rejects.toMatchObject({ code: 'log_locked' });

    // Readers need no lock.
    expect((await store.read('shared')).events).toHaveLength(1);

    await holder.kill();
    const log = await store.open('shared', { create: false });
    expect(await readFile(store.lockFile('shared'), 'utf8')).toBe(selfLine());
    expect(log.lastSeq).toBe(1);
    await log.close();
    expect(existsSync(store.lockFile('shared'))).toBe(false);
  });

  it('a log its holder closed is free to another process at once', async () => {
    const store = new LogStore(w.dir);
    const holder = new Child('hold-lock.mjs', [w.dir, 'given', 'closed']);
    w.children.push(holder);
    await holder.waitFor((l) => l.startsWith('ready '));
    const text = await readFile(heldListOf(store, holder.pid), 'latin1');
    expect(text).toBe(`${lineOf(holder.pid)}+given\n-given\n`);
    const log = await store.open('given', { create: false });
    expect(log.lastSeq).toBe(1);
    await log.close();
  });

  it('a new log whose list cannot be written takes a lock file instead', async () => {
    const store = new LogStore(w.dir);
    // A directory where the list would be: it cannot be opened for writing.
    await mkdir(heldListOf(store, process.pid), { recursive: true });
    const log = await store.open('fallback', { create: true });
    expect(await readFile(store.lockFile('fallback'), 'utf8')).toBe(selfLine());
    await log.close();
    expect(existsSync(store.lockFile('fallback'))).toBe(false);
  });

  it('a lock left by a dead pid is stale and taken over', async () => {
    const store = new LogStore(w.dir);
    await existing(store, 'stale');
    const pid = await deadPid();
    await writeFile(store.lockFile('stale'), `${pid}\n`);
    const log = await store.open('stale', { create: false });
    expect(await readFile(store.lockFile('stale'), 'utf8')).toBe(selfLine());
    await log.close();
    expect(existsSync(store.lockFile('stale'))).toBe(false);
  });

  it('an empty lock (a writer that died between create and write) is stale after a grace period', async () => {
    const store = new LogStore(w.dir);
    await existing(store, 'empty');
    await writeFile(store.lockFile('empty'), '');
    const log = await store.open('empty', { create: false });
    expect(await readFile(store.lockFile('empty'), 'utf8')).toBe(selfLine());
    await log.close();
  });

  it('a live foreign pid in the lock is log_locked even without a writer behind it; a new log is decided by its create', async () => {
    const store = new LogStore(w.dir);
    await existing(store, 'live');
    // pid 1 is always alive (init, or the container's first process).
    await writeFile(store.lockFile('live'), '1\n');
    await expect(store.open('live', { create: false })).rejects.toThrow(/locked by process 1\./);
    expect(await readFile(store.lockFile('live'), 'utf8')).toBe('1\n');
    // A lock file under a name with no log does not stop its create, and is left alone.
    await writeFile(store.lockFile('fresh'), '1\n');
    const fresh = await store.open('fresh', { create: true });
    await fresh.close();
    expect(await readFile(store.lockFile('fresh'), 'utf8')).toBe('1\n');
  });

  it('every lock this process holds is a link to its one pid file, which it makes again if removed', async () => {
    const store = new LogStore(w.dir);
    for (const id of ['a', 'b', 'c', 'd']) await existing(store, id);
    const pidFile = join(store.lockDir, `.writer-${process.pid}`);
    const a = await store.open('a', { create: false });
    const b = await store.open('b', { create: false });
    // One inode for the pid file and both locks: no lock allocated an inode of its own.
    const ino = statSync(pidFile).ino;
    expect([statSync(store.lockFile('a')).ino, statSync(store.lockFile('b')).ino]).toStrictEqual([ino, ino]);
    expect(statSync(pidFile).nlink).toBe(3);
    await a.close();
    expect(existsSync(store.lockFile('a'))).toBe(false);
    expect(await readFile(store.lockFile('b'), 'utf8')).toBe(selfLine());

    await rm(pidFile);
    const c = await store.open('c', { create: false });
    expect(await readFile(store.lockFile('c'), 'utf8')).toBe(selfLine());
    await c.close();
    const d = await store.open('d', { create: false });
    expect(statSync(store.lockFile('d')).ino).toBe(statSync(pidFile).ino);
    await Promise.all([b.close(), d.close()]);
    expect(statSync(pidFile).nlink).toBe(1);
  });

  it('closing leaves a lock that is no longer the one it made (taken over by a process that judged it dead)', async () => {
    const store = new LogStore(w.dir);
    await existing(store, 'taken');
    const log = await store.open('taken', { create: false });
    await rm(store.lockFile('taken'));
    await writeFile(store.lockFile('taken'), '1\n');
    await log.close();
    expect(await readFile(store.lockFile('taken'), 'utf8')).toBe('1\n');
  });

  it('the pid file and held list of a process killed before it could remove its own are removed by the next writer', async () => {
    const store = new LogStore(w.dir);
    await mkdir(store.lockDir, { recursive: true });
    const pid = await deadPid();
    const dead = [join(store.lockDir, `.writer-${pid}`), heldListOf(store, pid), `${heldListOf(store, pid)}.next`];
    const live = [join(store.lockDir, '.writer-1'), heldListOf(store, 1)];
    for (const f of dead) await writeFile(f, f.includes('held') ? '+after\n' : '1234\n');
    for (const f of live) await writeFile(f, f.includes('held') ? '+other\n' : '1\n');
    await existing(store, 'after');
    await existing(store, 'other');
    // A list whose process is dead holds nothing; a live one's holds what it names.
    await (await store.open('after', { create: false })).close();
    await expect(store.open('other', { create: false })).rejects.toThrow(/locked by process 1\./);
    for (let i = 0; i < 100 && dead.some((f) => existsSync(f)); i++) await new Promise((r) => setTimeout(r, 10));
    expect(dead.filter((f) => existsSync(f))).toEqual([]);
    expect(live.filter((f) => existsSync(f))).toEqual(live);
  });

  // pid 1 is always running: only the boot and start its files name can make them stale.
  it.skipIf(BOOT === undefined)('a lock, pid file or held list naming a running pid of another boot holds nothing, and goes (a power loss gave the pid away)', async () => {
    const store = new LogStore(w.dir);
    const gone = async (file: string) => {
      for (let i = 0; i < 100 && existsSync(file); i++) await new Promise((r) => setTimeout(r, 10));
      return !existsSync(file);
    };
    await mkdir(store.lockDir, { recursive: true });
    await writeFile(join(store.lockDir, '.writer-1'), `1 ${OTHER_BOOT}\n`);
    await writeFile(heldListOf(store, 1), `1 ${OTHER_BOOT}\n+listed\n`);
    // This process's first list here, and its first pid file, clear away what the dead process left.
    for (const id of ['locked', 'listed', 'ours-locked', 'ours-listed']) await existing(store, id);
    expect(await gone(heldListOf(store, 1))).toBe(true);
    await writeFile(store.lockFile('locked'), `1 ${OTHER_BOOT}\n`);
    const locked = await store.open('locked', { create: false });
    expect(await readFile(store.lockFile('locked'), 'utf8')).toBe(selfLine());
    await locked.close();
    expect(await gone(join(store.lockDir, '.writer-1'))).toBe(true);
    // A list left there later (no writer clears it in this process's time) is read and holds nothing.
    await writeFile(heldListOf(store, 1), `1 ${OTHER_BOOT}\n+listed\n`);
    await (await store.open('listed', { create: false })).close();

    // The same files naming this boot are held.
    await writeFile(store.lockFile('ours-locked'), lineOf(1));
    await writeFile(heldListOf(store, 1), `${lineOf(1)}+ours-listed\n`);
    await expect(store.open('ours-locked', { create: false })).rejects.toThrow(/locked by process 1\./);
    await expect(store.open('ours-listed', { create: false })).rejects.toThrow(/locked by process 1\./);
    expect(existsSync(heldListOf(store, 1))).toBe(true);
  });

  it.skipIf(BOOT === undefined)('a lock or held list naming a running pid of this boot that started at another time holds nothing (pids wrapped)', async () => {
    const store = new LogStore(w.dir);
    for (const id of ['locked', 'listed', 'true-locked', 'true-listed']) await existing(store, id);
    const start1 = startOf(1)!;
    const another = `${1 + Number(start1)}`;
    await writeFile(store.lockFile('locked'), `1 ${BOOT} ${another}\n`);
    const locked = await store.open('locked', { create: false });
    expect(await readFile(store.lockFile('locked'), 'utf8')).toBe(selfLine());
    await locked.close();
    await writeFile(heldListOf(store, 1), `1 ${BOOT} ${another}\n+listed\n`);
    await (await store.open('listed', { create: false })).close();
    // pid 1's own start: held.
    await writeFile(store.lockFile('true-locked'), `1 ${BOOT} ${start1}\n`);
    await writeFile(heldListOf(store, 1), `1 ${BOOT} ${start1}\n+true-listed\n`);
    await expect(store.open('true-locked', { create: false })).rejects.toThrow(/locked by process 1\./);
    await expect(store.open('true-listed', { create: false })).rejects.toThrow(/locked by process 1\./);
  });

  it('keeps the locks, the pid file and the held list out of the logs\' directory', async () => {
    const store = new LogStore(w.dir);
    const log = await store.open('apart', { create: true });
    expect(dirname(store.lockFile('apart'))).toBe(store.lockDir);
    expect(existsSync(store.lockFile('apart'))).toBe(false);
    // The logs' directory holds the log and the locks' directory, nothing a lock made or removes.
    expect((await readdir(store.dir)).sort()).toEqual(['apart.jsonl', 'locks']);
    expect(await readdir(store.lockDir)).toEqual([`.held-${process.pid}`]);
    await log.close();
    const again = await store.open('apart', { create: false });
    expect(existsSync(store.lockFile('apart'))).toBe(true);
    await again.close();
    expect((await readdir(store.dir)).sort()).toEqual(['apart.jsonl', 'locks']);
    expect((await readdir(store.lockDir)).sort()).toEqual([`.held-${process.pid}`, `.writer-${process.pid}`]);
  });

  it('honours a lock a live process keeps under the earlier name beside the log; a dead one is nobody\'s', async () => {
    const store = new LogStore(w.dir);
    const made = await store.open('old', { create: true });
    await made.close();
    // pid 1 is always alive (init, or the container's first process).
    await writeFile(store.legacyLockFile('old'), '1\n');
    await expect(store.open('old', { create: false })).rejects.toThrow(/locked by process 1\./);
    expect(existsSync(store.lockFile('old'))).toBe(false);

    await writeFile(store.legacyLockFile('old'), `${await deadPid()}\n`);
    const log = await store.open('old', { create: false });
    expect(log.lastSeq).toBe(0);
    await log.close();
  });
});

describe('one writer across processes', () => {
  it('three processes creating the same new logs, then opening them again, for seconds, never write one at once', async () => {
    const store = new LogStore(w.dir);
    const ids = Array.from({ length: 100 }, (_, i) => `c-${i}`);
    const procs = [1, 2, 3].map(() => new Child('contend.mjs', [w.dir, '3000', String(ids.length)]));
    w.children.push(...procs);
    // They start together, once all are loaded, so they meet on every new id.
    await Promise.all(procs.map((p) => p.waitFor((l) => l === 'ready', 20_000)));
    await writeFile(join(w.dir, 'go'), '');
    const done = await Promise.all(procs.map((p) => p.waitFor((l) => l.startsWith('done '), 20_000)));
    const [wrote, refused] = done.map((l) => l.split(' ').slice(1).map(Number)).reduce((a, b) => [a[0]! + b[0]!, a[1]! + b[1]!]);
    // Enough of both to mean something: turns written, and refusals met while another held a log.
    expect(wrote).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(10);
    let turns = 0;
    for (const id of ids) {
      const read = await store.read(id);
      expect(read.torn).toBeUndefined();
      // One writer at a time: seqs 1..n with no repeat, and every "begin" followed by its own "end".
      expect(read.events.map((e) => e.seq)).toEqual(read.events.map((_, i) => i + 1));
      const said = read.events.map((e) => String((e as { msg?: { content?: unknown } }).msg?.content));
      for (let i = 0; i < said.length; i += 2) {
        expect(said[i]).toMatch(/^begin \d+$/);
        expect(said[i + 1]).toBe(said[i]!.replace('begin', 'end'));
      }
      turns += said.length / 2;
    }
    expect(turns).toBe(wrote);
  });
});

describe('the held list', () => {
  it('names a taken id until it is given back; a torn last line and a longer id do not count', () => {
    expect(holds('+a\n', 'a')).toBe(true);
    expect(holds('+a\n-a\n', 'a')).toBe(false);
    expect(holds('+a\n-a\n+a\n', 'a')).toBe(true);
    expect(holds('+ab\n+b-a\n', 'a')).toBe(false);
    expect(holds('+b\n+a', 'a')).toBe(false);
    expect(holds('+a\n-a', 'a')).toBe(true);
  });

  it('is compacted past 64 KB to the ids still held, and a reader of it sees each', async () => {
    await mkdir(join(w.dir, 'locks'), { recursive: true });
    const list = new HeldList(join(w.dir, 'locks'));
    const kept: string[] = [];
    let largest = 0;
    for (let i = 0; i < 3000; i++) {
      const id = `session-${String(i).padStart(6, '0')}-abcdefghijklmnop`;
      expect(list.take(id)).toBe(true);
      if (i % 100 === 0) kept.push(id);
      else list.release(id);
      largest = Math.max(largest, statSync(list.file).size);
    }
    // 3,000 ids taken and given back are ~190 KB of lines: compacted, the file never passed 64 KB by more than a line.
    expect(largest).toBeLessThan(64 * 1024 + 64);
    const text = await readFile(list.file, 'latin1');
    for (const id of kept) expect(holds(text, id)).toBe(true);
    expect(holds(text, 'session-000001-abcdefghijklmnop')).toBe(false);
    expect(holds(text, 'session-002999-abcdefghijklmnop')).toBe(false);
    for (const id of kept) list.release(id);
    expect(kept.some((id) => holds(readFileSyncLatin1(list.file), id))).toBe(false);
  });
});

function readFileSyncLatin1(file: string): string {
  return readFileSync(file, 'latin1');
}
