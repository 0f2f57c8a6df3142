import fs, { existsSync } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventBody } from '../../src/core/events.js';
import { isProxyError } from '../../src/core/errors.js';
import { IndexJournal } from '../../src/log/index-journal.js';
import { RawFile } from '../../src/log/raw-file.js';
import { LogStore } from '../../src/log/store.js';
import { fakeCredentials } from './fake-credentials.js';
import { Child, requireDist, TS, tempDir, userMsg } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  vi.restoreAllMocks();
  await cleanup();
});


async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

describe('LogStore / SessionLog', () => {
  it('appends, syncs and reads back after reopening', async () => {
    const store = new LogStore(dir);
    const log = await store.open('s1', { create: true });
    expect(log.lastSeq).toBe(0);
    expect(log.events).toEqual([]);
    const a = log.append(userMsg('one'), TS);
    const b = log.append({ type: 'catalog', tools: [] }, TS);
    const c = log.append(userMsg('three'), TS);
    expect([a.seq, b.seq, c.seq]).toEqual([1, 2, 3]);
    await log.sync();
    await log.close();

    const again = await store.open('s1', { create: false });
    expect(again.repaired).toBeUndefined();
    expect(again.events).toEqual([a, b, c]);
    expect(again.lastSeq).toBe(3);
    expect(again.append(userMsg('four'), TS).seq).toBe(4);
    await again.close();
    expect((await store.read('s1')).events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(await store.listSessions()).toEqual(['s1']);
    expect(await store.exists('s1')).toBe(true);
    expect(await store.exists('s2')).toBe(false);
  });

  it('writes seq, ts, type first, then the body in its own order', async () => {
    const store = new LogStore(dir);
    const log = await store.open('order', { create: true });
    // type last in the body, and a stray seq that must not win.
    const body = { msg: { role: 'user', content: 'x' }, seq: 99, type: 'client.msg' } as unknown as EventBody;
    const ev = log.append(body, TS);
    await log.close();
    const raw = await readFile(store.file('order'), 'utf8');
    expect(raw).toBe(`{"seq":1,"ts":"${TS}","type":"client.msg","msg":{"role":"user","content":"x"}}\n`);
    expect(Object.keys(ev)).toEqual(['seq', 'ts', 'type', 'msg']);
  });

  it('redacts before writing: the secret never reaches the disk', async () => {
    const onRedact = vi.fn();
    const store = new LogStore(dir, { onRedact });
    const creds = fakeCredentials(3);
    const gh = creds.find((c) => c.kind === 'github')!;
    const ant = creds.find((c) => c.kind === 'anthropic')!;
    const log = await store.open('secret', { create: true });
    const ev = log.append(userMsg(`my token is ${gh.text} and ${ant.text}`), TS);
    await log.sync();
    const raw = await readFile(store.file('secret'));
    expect(raw.includes(gh.core)).toBe(false);
    expect(raw.includes(ant.core)).toBe(false);
    expect(raw.toString()).toContain('my token is [redacted:github] and [redacted:anthropic]');
    expect(ev.type === 'client.msg' && ev.msg.content).toBe('my token is [redacted:github] and [redacted:anthropic]');
    expect(onRedact).toHaveBeenCalledWith('secret', 1, ['anthropic', 'github']);
    await log.close();
  });

  it('group commit: 100 concurrent appends and syncs share a few fsyncs, lines in order', async () => {
    const store = new LogStore(dir);
    const log = await store.open('gc', { create: true });
    const datasync = vi.spyOn(RawFile.prototype, 'datasync');
    const write = vi.spyOn(fs, 'writeSync');
    const seqs = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const ev = log.append(userMsg(`m${i}`), TS);
        await log.sync();
        return ev.seq;
      }),
    );
    expect(seqs).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(datasync.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(datasync.mock.calls.length).toBeLessThanOrEqual(3);
    expect(write.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(write.mock.calls.length).toBeLessThanOrEqual(3);
    await log.close();
    const lines = (await readFile(store.file('gc'), 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(100);
    lines.forEach((line, i) => {
      expect(JSON.parse(line)).toMatchObject({ seq: i + 1, msg: { content: `m${i}` } });
    });
  });

  it('an append made right after a sync resolves is still written (no stall)', async () => {
    const store = new LogStore(dir);
    const log = await store.open('seq', { create: true });
    // Await sync() directly: any extra hop would hide the stall this reproduces.
    const loop = async (): Promise<void> => {
      for (let i = 0; i < 50; i++) {
        log.append(userMsg(`m${i}`), TS);
        await log.sync();
      }
    };
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`stalled after ${log.lastSeq} appends`)), 3000);
    });
    await Promise.race([loop(), stalled]).finally(() => clearTimeout(timer));
    await log.close();
    expect((await store.read('seq')).events).toHaveLength(50);
  });

  it('sync with nothing pending resolves at once; sync after close-time flush sees everything', async () => {
    const store = new LogStore(dir);
    const log = await store.open('idle', { create: true });
    await log.sync();
    log.append(userMsg('a'), TS);
    await log.close();
    expect((await store.read('idle')).events).toHaveLength(1);
    expect(() => log.append(userMsg('b'), TS)).toThrow(/closed/);
  });

  it('a write error surfaces on the next sync and poisons the log', async () => {
    const store = new LogStore(dir);
    const log = await store.open('eio', { create: true });
    const eio = Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    vi.spyOn(fs, 'writeSync').mockImplementationOnce(() => {
      throw eio;
    });
    log.append(userMsg('lost'), TS);
    expect(await rejection(log.sync())).toBe(eio);
    expect(await rejection(log.sync())).toBe(eio);
    expect(() => log.append(userMsg('after'), TS)).toThrow(eio);
    expect(await rejection(log.close())).toBe(eio);
    // The lock is released all the same.
    expect(existsSync(store.lockFile('eio'))).toBe(false);
    const again = await store.open('eio', { create: false });
    expect(again.lastSeq).toBe(0);
    await again.close();
  });

  it('tracks byte offsets and opens from an offset', async () => {
    const store = new LogStore(dir);
    const log = await store.open('off', { create: true });
    for (let i = 0; i < 10; i++) log.append(userMsg(`message ${i}`), TS);
    const off6 = log.offsetOf(6)!;
    const end = log.size;
    expect(log.offsetOf(1)).toBe(0);
    expect(log.offsetOf(0)).toBeUndefined();
    expect(log.offsetOf(11)).toBeUndefined();
    await log.close();
    const read = await store.read('off');
    expect(read.offsets[5]).toBe(off6);
    expect(read.end).toBe(end);

    const tail = await store.open('off', { create: false, fromOffset: off6, fromLine: 6 });
    expect(tail.events.map((e) => e.seq)).toEqual([6, 7, 8, 9, 10]);
    expect(tail.offsetOf(6)).toBe(off6);
    expect(tail.offsetOf(5)).toBeUndefined();
    expect(tail.append(userMsg('eleven'), TS).seq).toBe(11);
    expect(tail.offsetOf(11)).toBe(end);
    await tail.close();

    // From the very end: no event read, the last seq still known.
    const size = (await store.read('off')).end;
    const atEnd = await store.open('off', { create: false, fromOffset: size });
    expect(atEnd.events).toEqual([]);
    expect(atEnd.lastSeq).toBe(11);
    await atEnd.close();

    const err = await rejection(store.open('off', { create: false, fromOffset: off6 + 3 }));
    expect(err.message).toContain('not the start of a line');
    expect(existsSync(store.lockFile('off'))).toBe(false);
  });

  it('one writer per session in this process', async () => {
    const store = new LogStore(dir);
    const log = await store.open('one', { create: true });
    const err = await rejection(new LogStore(dir).open('one', { create: true }));
    expect(isProxyError(err) && err.code).toBe('log_locked');
    expect(err.message).toContain(String(process.pid));
    // A new log: held through this process's list, no lock file.
    expect(existsSync(store.lockFile('one'))).toBe(false);
    expect(await readFile(join(store.lockDir, `.held-${process.pid}`), 'latin1')).toContain('+one\n');
    await log.close();
    expect(existsSync(store.lockFile('one'))).toBe(false);
    const again = await store.open('one', { create: false });
    await again.close();
  });

  it('refuses a missing session without create, and bad ids', async () => {
    const store = new LogStore(dir);
    const err = await rejection(store.open('nope', { create: false }));
    expect(isProxyError(err) && err.code).toBe('session_not_found');
    expect(existsSync(store.lockFile('nope'))).toBe(false);
    expect(() => store.file('../etc/passwd')).toThrow(/invalid session id/);
    expect(() => store.file('.hidden')).toThrow(/invalid session id/);
    expect(await new LogStore(`${dir}/absent`).listSessions()).toEqual([]);
  });

  it('keeps every sidecar in one journal, the last line of a session winning', async () => {
    const store = new LogStore(dir);
    expect(await store.readIndex('ix')).toBeUndefined();
    await store.writeIndex('ix', { start: { seq: 4, offset: 120 } });
    await store.writeIndex('other', { start: { seq: 2, offset: 60 } });
    await store.writeIndex('ix', { start: { seq: 9, offset: 800 } });
    expect(await store.readIndex('ix')).toEqual({ start: { seq: 9, offset: 800 } });
    expect(await store.readIndex('other')).toEqual({ start: { seq: 2, offset: 60 } });
    // One file, a line per save: no file (no inode) per session.
    expect((await readdir(store.dir)).sort()).toEqual(['sidecars.ndjson']);
    expect((await readFile(store.indexJournalFile, 'utf8')).split('\n')).toHaveLength(4);
    expect(store.savedIndexes()).toEqual(new Map([['ix', { start: { seq: 9, offset: 800 } }], ['other', { start: { seq: 2, offset: 60 } }]]));
  });

  it('reads what another process appended, skips a line torn by a crash and ends it before appending', async () => {
    const store = new LogStore(dir);
    await store.writeIndex('a', { n: 1 });
    expect(await store.readIndex('a')).toEqual({ n: 1 });
    // Another writer's lines, then a crash in the middle of a line.
    await appendFile(store.indexJournalFile, '{"id":"b","index":{"n":2}}\n{"id":"a","index":{"n":');
    expect(await store.readIndex('b')).toEqual({ n: 2 });
    expect(await store.readIndex('a')).toEqual({ n: 1 });
    await store.close();
    await store.writeIndex('c', { n: 3 });
    expect(await store.readIndex('c')).toEqual({ n: 3 });
    expect(await store.readIndex('a')).toEqual({ n: 1 });
    expect((await readFile(store.indexJournalFile, 'utf8')).endsWith('{"id":"a","index":{"n":\n{"id":"c","index":{"n":3}}\n')).toBe(true);
    // Removed by hand: nothing is saved any more, and the next save after a look starts it again.
    await rm(store.indexJournalFile);
    expect(await store.readIndex('b')).toBeUndefined();
    await store.writeIndex('d', { n: 4 });
    expect(await store.readIndex('d')).toEqual({ n: 4 });
    expect(await store.readIndex('c')).toBeUndefined();
  });

  it('two processes saving at once: every line whole, the last save of each session read back', async () => {
    requireDist();
    const store = new LogStore(dir);
    await store.writeIndex('mine', { n: -1 });
    const children = ['a', 'b'].map((p) => new Child('save-indexes.mjs', [dir, p, '2000']));
    await Promise.all(children.map((c) => c.waitFor((l) => l === 'done', 20_000)));
    const text = await readFile(store.indexJournalFile, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    // A process that opens the journal while another is mid-line sees no newline at the end and
    // ends that "torn" line: a blank line, which readers skip. Never a line cut in two.
    const lines = text.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(4001);
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    expect(await store.readIndex('a7')).toMatchObject({ n: 1957 });
    expect(await store.readIndex('b49')).toMatchObject({ n: 1999 });
    expect(await store.readIndex('mine')).toEqual({ n: -1 });
    expect(store.savedIndexes().size).toBe(101);
  });

  it('a sidecar file from before the journal is read while the journal names no newer one', async () => {
    const store = new LogStore(dir);
    await mkdir(store.dir, { recursive: true });
    await writeFile(store.indexFile('old'), '{"start":{"seq":3,"offset":90}}');
    expect(await store.readIndex('old')).toEqual({ start: { seq: 3, offset: 90 } });
    await store.writeIndex('old', { start: { seq: 7, offset: 400 } });
    expect(await store.readIndex('old')).toEqual({ start: { seq: 7, offset: 400 } });
    await writeFile(store.indexFile('bad'), '{"start":');
    const err = await rejection(store.readIndex('bad'));
    expect(isProxyError(err) && err.code).toBe('log_malformed');
  });

  it('an appender looks again whether the journal is still its file at most every recheck interval', async () => {
    await mkdir(join(dir, 'sessions'), { recursive: true });
    let clock = 0;
    const mine = new IndexJournal(join(dir, 'sessions'), { recheckMs: 200, now: () => clock });
    const other = new IndexJournal(join(dir, 'sessions'));
    mine.append('a', { n: 1 });
    // Another process replaces the file (its compaction at startup).
    const file = mine.file;
    await writeFile(`${file}.tmp`, `${JSON.stringify({ id: 'b', index: { n: 2 } })}\n`);
    await rename(`${file}.tmp`, file);
    // Within the interval the append goes to the file it holds (no stat per append): a hint lost.
    clock = 199;
    mine.append('c', { n: 3 });
    expect(other.get('c')).toBeUndefined();
    clock = 200;
    mine.append('d', { n: 4 });
    expect(other.get('d')).toEqual({ n: 4 });
    expect(other.get('b')).toEqual({ n: 2 });
    expect((await readFile(file, 'utf8')).trimEnd().split('\n')).toHaveLength(2);
    mine.close();
    other.close();
  });

  it('startup compacts a journal holding more than twice the lines it has sessions', async () => {
    const store = new LogStore(dir);
    for (let i = 0; i < 1500; i++) await store.writeIndex(`s${i % 10}`, { n: i });
    const before = (await readFile(store.indexJournalFile, 'utf8')).split('\n').length - 1;
    expect(before).toBe(1500);
    const saved = store.savedIndexes();
    expect(saved.size).toBe(10);
    expect(saved.get('s3')).toEqual({ n: 1493 });
    expect((await readFile(store.indexJournalFile, 'utf8')).split('\n').length - 1).toBe(10);
    // Appends after the compaction land in the compacted file, and it is read from its start.
    await store.writeIndex('s3', { n: 2000 });
    expect(await store.readIndex('s3')).toEqual({ n: 2000 });
    expect(await store.readIndex('s4')).toEqual({ n: 1494 });
    expect((await readFile(store.indexJournalFile, 'utf8')).split('\n').length - 1).toBe(11);
    // Short journals are left alone.
    expect(store.savedIndexes().size).toBe(10);
    expect((await readFile(store.indexJournalFile, 'utf8')).split('\n').length - 1).toBe(11);
  });
});

describe('durability', () => {
  it('a one-request log is synced through the shared journal: neither its file nor the directory is synced for it', async () => {
    const store = new LogStore(dir);
    const written = async (id: string) => {
      const log = await store.open(id, { create: true });
      log.append(userMsg(id), TS);
      await log.sync();
      await log.close();
    };
    await written('warm'); // the journal's directory and first segment are made and named once
    const opens = vi.spyOn(RawFile, 'open');
    const syncs = vi.spyOn(RawFile.prototype, 'sync');
    const dataSyncs = vi.spyOn(RawFile.prototype, 'datasync');
    for (const id of ['a', 'b', 'c']) await written(id);
    // One fdatasync each, all of the journal's segment: no directory sync, no own file opened again.
    expect([syncs.mock.calls.length, dataSyncs.mock.calls.length]).toStrictEqual([0, 3]);
    expect(opens.mock.calls.filter(([path]) => path === store.dir)).toHaveLength(0);
    await store.close();
  });

  it('a new log\'s first sync goes to the journal; its second syncs its file and the directory, in the same wait', async () => {
    const store = new LogStore(dir);
    const log = await store.open('first', { create: true });
    const dirSyncs = vi.spyOn(RawFile.prototype, 'sync');
    const dataSyncs = vi.spyOn(RawFile.prototype, 'datasync');
    // Nothing waits on the disk before the request goes on.
    expect([dirSyncs.mock.calls.length, dataSyncs.mock.calls.length]).toStrictEqual([0, 0]);
    log.append(userMsg('one'), TS);
    await log.sync();
    // The journal: its segment's fdatasync, and the directories naming it (made here, once).
    const afterFirst = [dirSyncs.mock.calls.length, dataSyncs.mock.calls.length];
    expect(afterFirst[1]).toBe(1);
    const segments = await readdir(join(store.dir, 'first-syncs'));
    expect(segments).toHaveLength(1);
    const own = await readFile(log.file);
    expect(await readFile(join(store.dir, 'first-syncs', segments[0]!))).toStrictEqual(Buffer.concat([Buffer.from(`{"id":"first","len":${own.length}}\n`), own]));
    log.append(userMsg('two'), TS);
    let synced = false;
    const second = log.sync().then(() => (synced = true));
    // The file and its name, both started before either is waited for: one wait, not two in a row.
    await vi.waitFor(() => expect([dirSyncs.mock.calls.length, dataSyncs.mock.calls.length]).toStrictEqual([afterFirst[0]! + 1, 2]));
    await second;
    expect(synced).toBe(true);
    log.append(userMsg('three'), TS);
    await log.sync();
    expect([dirSyncs.mock.calls.length, dataSyncs.mock.calls.length]).toStrictEqual([afterFirst[0]! + 1, 3]);
    await log.close();
    // A log opened again syncs the directory with its first sync, once: its name may rest on a
    // journal not yet checkpointed, and its new events must not.
    const again = await store.open('first', { create: false });
    again.append(userMsg('four'), TS);
    await again.sync();
    expect([dirSyncs.mock.calls.length, dataSyncs.mock.calls.length]).toStrictEqual([afterFirst[0]! + 2, 4]);
    again.append(userMsg('five'), TS);
    await again.close();
    expect([dirSyncs.mock.calls.length, dataSyncs.mock.calls.length]).toStrictEqual([afterFirst[0]! + 2, 5]);
    await store.close();
  });

  it('"fsync" syncs to disk before sync() resolves; "write" only writes to the OS', async () => {
    const { dir: d, cleanup: done } = await tempDir();
    try {
      for (const [durability, expected] of [['fsync', true], ['write', false]] as const) {
        const log = await new LogStore(d, { durability }).open(`d-${durability}`, { create: true });
        const spy = vi.spyOn(RawFile.prototype, 'datasync');
        log.append(userMsg('hello'), TS);
        await log.sync();
        expect(spy.mock.calls.length > 0).toBe(expected);
        expect((await readFile(log.file, 'utf8')).includes('hello')).toBe(true);
        spy.mockRestore();
        await log.close();
      }
    } finally {
      await done();
    }
  });
});
