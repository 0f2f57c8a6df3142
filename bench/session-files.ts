/**
 * What a new session's files cost the proxy, apart from everything else a request does: the file
 * store's whole life of a session (its log named in the writer's held list and created, two events appended and
 * synced, its sidecar's line appended to the journal, closed) in a loop, 10 at a time, against a
 * floor in the same run: the same lines of every session appended to one shared file with the
 * same group commit, which is what a log shared by sessions would pay. User and system CPU of this process per session (the thread
 * pool's file calls count as this process's system time), medians over interleaved rounds.
 * docs/decisions.md (Durability) reads these figures.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { GroupCommitWriter } from '../src/log/group-commit.js';
import { LogStore } from '../src/log/store.js';
import { dataDir, removeDataDirs } from './data-dirs.js';
import type { Line } from './session-sections.js';
import { fmt, median } from './stats.js';

const SESSIONS = 1000;
const CONCURRENCY = 10;
const ROUNDS = 3;
const TS = '2026-01-01T00:00:00.000Z';

interface Cost {
  userUs: number;
  sysUs: number;
  wallUs: number;
}

type Way = 'files, fsync' | 'files, write' | 'one shared file, fsync';
const WAYS: Way[] = ['files, fsync', 'files, write', 'one shared file, fsync'];

async function measure(way: Way): Promise<Cost> {
  // Kept until the section ends: removing one way's thousand logs would make the next way's creates dearer (bench/data-dirs.ts).
  const dir = await dataDir('pp-session-files-');
  const run = way === 'one shared file, fsync' ? await sharedFile(dir) : filesStore(dir, way === 'files, fsync' ? 'fsync' : 'write');
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < SESSIONS) await run.one(next++);
  }));
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await run.close();
  return { userUs: cpu.user / SESSIONS, sysUs: cpu.system / SESSIONS, wallUs: (wall * 1000) / SESSIONS };
}

function filesStore(dir: string, durability: 'fsync' | 'write') {
  const store = new LogStore(dir, { durability });
  return {
    async one(i: number): Promise<void> {
      const log = await store.open(`s${i}`, { create: true });
      log.append({ type: 'session.start', recipe: { version: 1 } as never, ids: [] }, TS);
      log.append({ type: 'client.msg', msg: { role: 'user', content: `question ${i} ${'x'.repeat(1500)}` } }, TS);
      await log.sync();
      await store.writeIndex(`s${i}`, { version: 2, log_size: log.size });
      await log.close();
    },
    close: () => Promise.resolve(),
  };
}

async function sharedFile(dir: string) {
  const fh = await open(join(dir, 'shared.jsonl'), 'a');
  const writer = new GroupCommitWriter(fh, 0, true);
  return {
    async one(i: number): Promise<void> {
      writer.write(Buffer.from(`{"seq":1,"ts":"${TS}","type":"session.start","session":"s${i}"}\n`));
      writer.write(Buffer.from(`{"seq":2,"ts":"${TS}","type":"client.msg","session":"s${i}","msg":{"role":"user","content":"question ${i} ${'x'.repeat(1500)}"}}\n`));
      await writer.sync();
    },
    close: async () => {
      await writer.idle();
      await fh.close();
    },
  };
}

export async function sessionFilesSection(line: Line): Promise<boolean> {
  const costs = new Map<Way, Cost[]>(WAYS.map((w) => [w, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Rotated, so no way always runs on a warmer or cooler machine.
      for (let k = 0; k < WAYS.length; k++) {
        const way = WAYS[(round + k) % WAYS.length]!;
        costs.get(way)!.push(await measure(way));
      }
    }
  } finally {
    await removeDataDirs();
  }
  line('## Session files: what a new session\'s files cost');
  line();
  line(`The file store's life of one session (its log named in the writer's held list and created, two events appended and synced, its sidecar's line`);
  line(`appended to the journal, closed),`);
  line(`${SESSIONS.toLocaleString('en')} sessions ${CONCURRENCY} at a time, with \`durability = "fsync"\` and \`"write"\`; beside it the floor a log shared by sessions`);
  line('would pay: the same lines appended to one file with the same group commit. CPU of the process per session (its thread');
  line(`pool's file calls are its system time). Medians of ${ROUNDS} interleaved rounds; the logs stay until the section ends, under one`);
  line('parent marked a top directory, so no way pays for files another removed (docs/decisions/0011-a-bench-run-does-not-pay-for-removed-files.md).');
  line();
  line('| way | user CPU (µs/session) | system CPU (µs/session) | wall (µs/session) | CPU vs shared file |');
  line('|---|---:|---:|---:|---:|');
  const cpuOf = (way: Way) => median(costs.get(way)!.map((c) => c.userUs + c.sysUs));
  const floor = cpuOf('one shared file, fsync');
  for (const way of WAYS) {
    const cs = costs.get(way)!;
    line(`| ${way} | ${fmt(median(cs.map((c) => c.userUs)), 0)} | ${fmt(median(cs.map((c) => c.sysUs)), 0)} | ${fmt(median(cs.map((c) => c.wallUs)), 0)} | ${fmt(cpuOf(way) / floor, 1)}x |`);
  }
  line();
  return true;
}
