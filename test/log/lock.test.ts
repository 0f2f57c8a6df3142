import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isProxyError } from '../../src/core/errors.js';
import { LogStore } from '../../src/log/store.js';
import { Child, requireDist, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const children: Child[] = [];
beforeAll(requireDist);
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.kill()));
  await cleanup();
});

/** A pid that surely belongs to no process: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid!;
}

describe('the lock file', () => {
  it('a second process cannot open a locked session; once it dies the lock is taken over', async () => {
    const store = new LogStore(dir);
    const holder = new Child('hold-lock.mjs', [dir, 'shared']);
    children.push(holder);
    await holder.waitFor((l) => l.startsWith('ready '));
    expect(await readFile(store.lockFile('shared'), 'utf8')).toBe(`${holder.pid}\n`);

    let err: unknown;
    try {
      await store.open('shared', { create: false });
    } catch (e) {
      err = e;
    }
    expect(isProxyError(err) && err.code).toBe('log_locked');
    expect((err as Error).message).toBe(`${store.file('shared')}: the session is locked by process ${holder.pid}.`);

    // Readers need no lock.
    expect((await store.read('shared')).events).toHaveLength(1);

    await holder.kill();
    const log = await store.open('shared', { create: false });
    expect(await readFile(store.lockFile('shared'), 'utf8')).toBe(`${process.pid}\n`);
    expect(log.lastSeq).toBe(1);
    await log.close();
    expect(existsSync(store.lockFile('shared'))).toBe(false);
  });

  it('a lock left by a dead pid is stale and taken over', async () => {
    const store = new LogStore(dir);
    await mkdir(store.lockDir, { recursive: true });
    const pid = await deadPid();
    await writeFile(store.lockFile('stale'), `${pid}\n`);
    const log = await store.open('stale', { create: true });
    expect(await readFile(store.lockFile('stale'), 'utf8')).toBe(`${process.pid}\n`);
    await log.close();
    expect(existsSync(store.lockFile('stale'))).toBe(false);
  });

  it('an empty lock (a writer that died between create and write) is stale after a grace period', async () => {
    const store = new LogStore(dir);
    await mkdir(store.lockDir, { recursive: true });
    await writeFile(store.lockFile('empty'), '');
    const log = await store.open('empty', { create: true });
    expect(await readFile(store.lockFile('empty'), 'utf8')).toBe(`${process.pid}\n`);
    await log.close();
  });

  it('a live foreign pid in the lock is log_locked even without a writer behind it', async () => {
    const store = new LogStore(dir);
    await mkdir(store.lockDir, { recursive: true });
    // pid 1 is always alive (init, or the container's first process).
    await writeFile(store.lockFile('live'), '1\n');
    await expect(store.open('live', { create: true })).rejects.toThrow(/locked by process 1\./);
    expect(await readFile(store.lockFile('live'), 'utf8')).toBe('1\n');
  });

  it('every lock this process holds is a link to its one pid file, which it makes again if removed', async () => {
    const store = new LogStore(dir);
    const pidFile = join(store.lockDir, `.writer-${process.pid}`);
    const a = await store.open('a', { create: true });
    const b = await store.open('b', { create: true });
    // One inode for the pid file and both locks: no lock allocated an inode of its own.
    const ino = statSync(pidFile).ino;
    expect([statSync(store.lockFile('a')).ino, statSync(store.lockFile('b')).ino]).toStrictEqual([ino, ino]);
    expect(statSync(pidFile).nlink).toBe(3);
    await a.close();
    expect(existsSync(store.lockFile('a'))).toBe(false);
    expect(await readFile(store.lockFile('b'), 'utf8')).toBe(`${process.pid}\n`);

    await rm(pidFile);
    const c = await store.open('c', { create: true });
    expect(await readFile(store.lockFile('c'), 'utf8')).toBe(`${process.pid}\n`);
    await c.close();
    const d = await store.open('d', { create: true });
    expect(statSync(store.lockFile('d')).ino).toBe(statSync(pidFile).ino);
    await Promise.all([b.close(), d.close()]);
    expect(statSync(pidFile).nlink).toBe(1);
  });

  it('closing leaves a lock that is no longer the one it made (taken over by a process that judged it dead)', async () => {
    const store = new LogStore(dir);
    const log = await store.open('taken', { create: true });
    await rm(store.lockFile('taken'));
    await writeFile(store.lockFile('taken'), '1\n');
    await log.close();
    expect(await readFile(store.lockFile('taken'), 'utf8')).toBe('1\n');
  });

  it('the pid file of a process killed before it could remove its own is removed by the next writer', async () => {
    const store = new LogStore(dir);
    await mkdir(store.lockDir, { recursive: true });
    const dead = join(store.lockDir, `.writer-${await deadPid()}`);
    const live = join(store.lockDir, '.writer-1');
    await writeFile(dead, '1234\n');
    await writeFile(live, '1\n');
    const log = await store.open('after', { create: true });
    for (let i = 0; i < 100 && existsSync(dead); i++) await new Promise((r) => setTimeout(r, 10));
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    await log.close();
  });

  it('keeps the locks and the pid file out of the logs\' directory', async () => {
    const store = new LogStore(dir);
    const log = await store.open('apart', { create: true });
    expect(dirname(store.lockFile('apart'))).toBe(store.lockDir);
    expect(existsSync(store.lockFile('apart'))).toBe(true);
    // The logs' directory holds the log and the locks' directory, nothing a lock made or removes.
    expect((await readdir(store.dir)).sort()).toEqual(['apart.jsonl', 'locks']);
    await log.close();
    expect(await readdir(store.lockDir)).toEqual([`.writer-${process.pid}`]);
  });

  it('honours a lock a live process keeps under the earlier name beside the log; a dead one is nobody\'s', async () => {
    const store = new LogStore(dir);
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
