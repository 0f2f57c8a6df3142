/**
 * New logs' first syncs in one shared journal (src/log/first-syncs.ts): what a segment holds, how
 * a crash that lost the logs' unsynced bytes is put right from it, whose segments a start leaves
 * alone, and that a checkpoint removes a segment once its logs are durable.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, readdir, readFile, rename, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FirstSyncJournal, recoverFirstSyncs } from '../../src/log/first-syncs.js';
import { BOOT, startOf } from '../../src/log/process-boot.js';
import { LogStore } from '../../src/log/store.js';
import { TS, tempDir, userMsg } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});

afterEach(async () => {
  await cleanup();
});

/** A pid that ran and has exited: its segments are a crashed process's. */
function deadPid(): number {
  const child = spawnSync('true');
  return child.pid!;
}

/** The logs' one-request sessions, each synced once: through the journal. */
async function oneRequestLogs(store: LogStore, ids: string[]): Promise<Map<string, Buffer>> {
  const bytes = new Map<string, Buffer>();
  for (const id of ids) {
    const log = await store.open(id, { create: true });
    log.append(userMsg(`${id} asks something`), TS);
    log.append(userMsg(`${id} asks more`), TS);
    await log.sync();
    await log.close();
    bytes.set(id, await readFile(store.file(id)));
  }
  return bytes;
}

/** The process's segment, renamed as a crashed process's would be. */
async function asCrashed(store: LogStore): Promise<string> {
  const segments = join(store.dir, 'first-syncs');
  const [name] = await readdir(segments);
  const crashed = join(segments, `${deadPid()}-0.log`);
  await rename(join(segments, name!), crashed);
  return crashed;
}

describe('the first-sync journal', () => {
  it('a one-request log\'s bytes are in a record of the segment, as its own file holds them', async () => {
    const store = new LogStore(dir);
    const bytes = await oneRequestLogs(store, ['a', 'b']);
    const [name] = await readdir(join(store.dir, 'first-syncs'));
    expect(name).toMatch(new RegExp(`^${process.pid}-(?:${BOOT}-${startOf(process.pid)}-)?\\d+\\.log$`));
    const segment = await readFile(join(store.dir, 'first-syncs', name!));
    const expected = Buffer.concat(['a', 'b'].flatMap((id) => [Buffer.from(`{"id":"${id}","len":${bytes.get(id)!.length}}\n`), bytes.get(id)!]));
    expect(segment).toStrictEqual(expected);
  });

  it('a start after a crash puts back each log whose bytes were lost, and removes the segment', async () => {
    const store = new LogStore(dir);
    const bytes = await oneRequestLogs(store, ['lost', 'garbled', 'gone', 'kept']);
    // A log with a turn synced on its own after its first: longer than its record, and durable.
    const long = await store.open('kept', { create: false });
    long.append(userMsg('a second turn'), TS);
    await long.close();
    // (Its close synced it, and its name with it: a log opened again does not lean on the journal.)
    const keptWhole = await readFile(store.file('kept'));
    const segment = await asCrashed(store);
    // What a power loss can leave of files written but not synced: nothing, other bytes, no name.
    await truncate(store.file('lost'), 0);
    await writeFile(store.file('garbled'), Buffer.concat([Buffer.alloc(40), bytes.get('garbled')!.subarray(40), Buffer.from('{"seq":9')]));
    await unlink(store.file('gone'));

    const recovered = await recoverFirstSyncs(store.dir, (id) => store.file(id));
    expect(recovered.segments).toBe(1);
    expect(recovered.repaired.sort()).toStrictEqual(['garbled', 'gone', 'lost'].map((id) => store.file(id)));
    for (const id of ['lost', 'garbled', 'gone']) expect(await readFile(store.file(id)), id).toStrictEqual(bytes.get(id));
    expect(await readFile(store.file('kept'))).toStrictEqual(keptWhole);
    expect(existsSync(segment)).toBe(false);
    // The logs read as the proxy wrote them.
    for (const id of ['lost', 'garbled', 'gone']) expect((await store.read(id)).events.map((e) => e.seq)).toStrictEqual([1, 2]);
    // Nothing is left to do the next time.
    expect(await recoverFirstSyncs(store.dir, (id) => store.file(id))).toStrictEqual({ segments: 0, repaired: [] });
  });

  it('a record cut short by the crash was never acknowledged: the records before it are put back, it is not', async () => {
    const store = new LogStore(dir);
    const bytes = await oneRequestLogs(store, ['whole', 'torn']);
    const segment = await asCrashed(store);
    const data = await readFile(segment);
    await writeFile(segment, data.subarray(0, data.length - 10));
    await truncate(store.file('whole'), 0);
    await writeFile(store.file('torn'), 'left as the crash left it\n');
    const recovered = await recoverFirstSyncs(store.dir, (id) => store.file(id));
    expect(recovered.repaired).toStrictEqual([store.file('whole')]);
    expect(await readFile(store.file('whole'))).toStrictEqual(bytes.get('whole'));
    expect(await readFile(store.file('torn'), 'utf8')).toBe('left as the crash left it\n');
  });

  it('a segment of a process still running is left alone, and so is a record naming no valid id', async () => {
    const store = new LogStore(dir);
    await oneRequestLogs(store, ['mine']);
    const segments = join(store.dir, 'first-syncs');
    const [name] = await readdir(segments);
    const sleeper = spawn('sleep', ['30']);
    try {
      const live = join(segments, `${sleeper.pid}-0.log`);
      await rename(join(segments, name!), live);
      await truncate(store.file('mine'), 0);
      expect(await recoverFirstSyncs(store.dir, (id) => store.file(id))).toStrictEqual({ segments: 0, repaired: [] });
      expect(existsSync(live)).toBe(true);
      expect((await readFile(store.file('mine'))).length).toBe(0);
    } finally {
      const exited = new Promise((r) => sleeper.once('exit', r));
      sleeper.kill();
      await exited;
    }
    // Once that process has gone, its segment is a crashed one's; an id that could not be a log's is skipped.
    const bad = join(segments, `${deadPid()}-1.log`);
    await writeFile(bad, '{"id":"../escape","len":3}\nabc');
    expect(await recoverFirstSyncs(store.dir, (id) => store.file(id))).toStrictEqual({ segments: 2, repaired: [store.file('mine')] });
    expect((await store.read('mine')).events).toHaveLength(2);
    expect(existsSync(join(store.dir, '..', 'escape.jsonl'))).toBe(false);
  });

  it.skipIf(BOOT === undefined)('a segment names its boot and start: one of another boot or start is put back even if its pid now runs', async () => {
    const store = new LogStore(dir);
    const bytes = await oneRequestLogs(store, ['before', 'now']);
    const segments = join(store.dir, 'first-syncs');
    const [name] = await readdir(segments);
    expect(name).toBe(`${process.pid}-${BOOT}-${startOf(process.pid)}-0.log`);
    const segment = await readFile(join(segments, name!));
    await store.close();
    const other = `${BOOT![0] === 'a' ? 'b' : 'a'}${BOOT!.slice(1)}`;
    // pid 1 always runs: its segment of this boot and start (or naming no start) is a running
    // process's; of another boot, or of another start in this boot (pids wrapped), a dead one's.
    const start1 = startOf(1)!;
    const running = [`1-${BOOT}-${start1}-0.log`, `1-${BOOT}-0.log`].sort();
    for (const n of [...running, `1-${other}-0.log`, `1-${BOOT}-${Number(start1) + 1}-0.log`]) await writeFile(join(segments, n), segment);
    await truncate(store.file('before'), 0);
    await truncate(store.file('now'), 0);
    const recovered = await recoverFirstSyncs(store.dir, (id) => store.file(id));
    // The first segment put back repairs both logs; the second finds them whole.
    expect(recovered).toStrictEqual({ segments: 2, repaired: [store.file('before'), store.file('now')] });
    expect(await readFile(store.file('before'))).toStrictEqual(bytes.get('before'));
    expect((await readdir(segments)).sort()).toStrictEqual(running);
  });

  it('a proxy that starts beside a store of this process still writing its journal leaves that journal alone', async () => {
    const store = new LogStore(dir);
    const bytes = await oneRequestLogs(store, ['live']);
    const [name] = await readdir(join(store.dir, 'first-syncs'));
    expect(await new LogStore(dir).recoverFirstSyncs()).toStrictEqual({ segments: 0, repaired: [] });
    expect(await readdir(join(store.dir, 'first-syncs'))).toStrictEqual([name]);
    // It goes on taking records, and closing the store checkpoints and removes it.
    await oneRequestLogs(store, ['later']);
    await store.close();
    expect(await readdir(join(store.dir, 'first-syncs'))).toStrictEqual([]);
    expect(await readFile(store.file('live'))).toStrictEqual(bytes.get('live'));
  });

  it('a segment is retired past its size: its logs made durable, then it is removed; closing retires the last', async () => {
    const journal = new FirstSyncJournal(join(dir, 'logs'), 1024);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'logs'), { recursive: true });
    const files = [];
    for (let i = 0; i < 6; i++) {
      const file = join(dir, 'logs', `s${i}.jsonl`);
      const bytes = Buffer.from(`${JSON.stringify({ seq: 1, ts: TS, type: 'client.msg', text: 'x'.repeat(300) })}\n`);
      await appendFile(file, bytes);
      await journal.commit(`s${i}`, file, bytes);
      files.push(file);
    }
    // Past 1 KB the segment in use changed: the full ones are retired in the background.
    await new Promise((r) => setTimeout(r, 50));
    await journal.close();
    expect(await readdir(journal.dir)).toStrictEqual([]);
    for (const file of files) expect(existsSync(file)).toBe(true);
    // A commit after close opens a new segment.
    await journal.commit('late', files[0]!, Buffer.from('{}\n'));
    expect(await readdir(journal.dir)).toHaveLength(1);
    await journal.close();
  });
});
