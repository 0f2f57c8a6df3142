/**
 * Where the benches that create files per session keep them (the peers' durable floor and
 * prefix-proxy, the session-files section): directories under one parent in the temp directory,
 * removed together when the whole measurement ends.
 *
 * On ext4 without a journal (this machine's disk: `/sys/fs/ext4/<dev>/journal_task` reads
 * `<none>`) the inode allocator passes over every inode freed in the last one to six minutes, and
 * reads each one's inode-table block to tell (fs/ext4/ialloc.c, `recently_deleted`), holding the
 * directory's lock. A new directory under /tmp lands in /tmp's block group, where every earlier
 * run's files were made and removed: measured there, a create cost ~270-900 µs of CPU after a
 * bench run, and ~30 µs in a group with nothing freed. Which target paid depended on what ran
 * before it (the floor or prefix-proxy; never Portkey, which writes nothing). The parent is
 * therefore marked a top directory (`chattr +T`), so ext4 spreads the directories made in it over
 * the disk's groups as it does the root's, away from what was just removed: each target writes
 * where a gateway's long-lived data directory would, in a group that holds only what it wrote.
 * `createCost` measures a create there when a measurement starts, and the report says it
 * (docs/decisions/0011-a-bench-run-does-not-pay-for-removed-files.md).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Parent {
  dir: string;
  /** Whether `chattr +T` took (ext2/3/4); elsewhere the flag means nothing and is not needed. */
  topDir: boolean;
}

let parent: Parent | undefined;
const made: string[] = [];

/** The parent in the temp directory, made and marked on first use. */
export function dataParent(): Parent {
  if (parent !== undefined) return parent;
  const dir = mkdtempSync(join(tmpdir(), 'prefix-proxy-bench-data-'));
  let topDir = true;
  try {
    execFileSync('chattr', ['+T', dir], { stdio: 'ignore' });
  } catch {
    topDir = false;
  }
  parent = { dir, topDir };
  return parent;
}

/** A fresh directory under the parent (or under `elsewhere`, e.g. a tmpfs), removed by `removeDataDirs`. */
export async function dataDir(prefix: string, elsewhere?: string): Promise<string> {
  const dir = await mkdtemp(join(elsewhere ?? dataParent().dir, prefix));
  made.push(dir);
  return dir;
}

/** Removes every directory made here, and the parent; call once the measurement is over. */
export async function removeDataDirs(): Promise<void> {
  const dirs = made.splice(0);
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  if (parent !== undefined) rmSync(parent.dir, { recursive: true, force: true });
  parent = undefined;
}

/**
 * CPU (user + system, µs) per file of `count` files created, written one line and closed one
 * after another in a fresh directory under the parent, as the floor creates its logs.
 */
export function createCost(count = 300): number {
  const dir = mkdtempSync(join(dataParent().dir, 'create-'));
  made.push(dir);
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const fd = openSync(join(dir, `${i}.log`), 'wx');
    writeSync(fd, '{}\n');
    closeSync(fd);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}
