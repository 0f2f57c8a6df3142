import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isProxyError } from '../../src/core/errors.js';
import { readEventAt, readLog } from '../../src/log/reader.js';
import { LogStore } from '../../src/log/store.js';
import { TS, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await cleanup();
});

function line(seq: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ seq, ts: TS, type: 'client.msg', msg: { role: 'user', content: `m${seq}` }, ...extra }) + '\n';
}

async function logFile(name: string, text: string | Buffer): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

async function failure(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

describe('readLog', () => {
  it('reads events with their byte offsets', async () => {
    const text = line(1) + line(2) + line(3);
    const file = await logFile('a.jsonl', text);
    const read = await readLog(file);
    expect(read.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(read.offsets).toEqual([0, line(1).length, line(1).length + line(2).length]);
    expect(read.end).toBe(text.length);
    expect(read.torn).toBeUndefined();
    for (let i = 0; i < 3; i++) expect(await readEventAt(file, read.offsets[i]!)).toEqual(read.events[i]);
  });

  it('reads lines longer than its chunk, and multi-byte text, at exact offsets', async () => {
    const big = line(2, { msg: { role: 'user', content: 'é'.repeat(150_000) } });
    const text = line(1) + big + line(3);
    const file = await logFile('big.jsonl', text);
    const read = await readLog(file);
    expect(read.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(read.offsets[2]).toBe(Buffer.byteLength(line(1) + big));
    expect(await readEventAt(file, read.offsets[2]!)).toEqual(read.events[2]);
    expect(await readEventAt(file, read.offsets[1]!)).toEqual(read.events[1]);
  });

  it('reports a last line without a newline as torn, and leaves the file alone', async () => {
    const good = line(1) + line(2);
    const file = await logFile('t.jsonl', good + line(3).slice(0, 20));
    const read = await readLog(file);
    expect(read.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(read.torn).toEqual({ file, line: 3, offset: good.length, bytes: 20 });
    expect(read.end).toBe(good.length);
    expect((await stat(file)).size).toBe(good.length + 20);
  });

  it('a complete JSON last line without its newline is torn too', async () => {
    const file = await logFile('t2.jsonl', line(1) + line(2).trimEnd());
    expect((await readLog(file)).torn).toMatchObject({ line: 2, offset: line(1).length });
  });

  it('a last line that is not JSON is torn even with its newline', async () => {
    const file = await logFile('t3.jsonl', line(1) + '{"seq":2,"ts\n');
    const read = await readLog(file);
    expect(read.torn).toEqual({ file, line: 2, offset: line(1).length, bytes: 13 });
    expect(read.end).toBe(line(1).length);
  });

  it('zeros left by a crash after the last line are torn', async () => {
    const file = await logFile('z.jsonl', Buffer.concat([Buffer.from(line(1)), Buffer.alloc(4096)]));
    expect((await readLog(file)).torn).toMatchObject({ line: 2, bytes: 4096 });
  });

  const bad: [string, string, string, number?][] = [
    ['a malformed middle line', line(1) + '{"seq":2,\n' + line(3), 'not valid JSON'],
    ['a bad line followed by a torn one', line(1) + 'garbage\n' + '{"seq":3', 'not valid JSON'],
    ['a seq gap', line(1) + line(3) + line(4), '"seq" is 3, expected 2'],
    ['a first seq that is not 1', line(2) + line(3), '"seq" is 2, expected 1', 1],
    ['a missing ts', line(1) + JSON.stringify({ seq: 2, type: 'catalog', tools: [] }) + '\n', '"ts" is missing'],
    ['an unknown type', line(1) + line(2, { type: 'llm.weird' }), 'unknown event type "llm.weird"'],
    ['an array', line(1) + '[1,2]\n' + line(3), 'not a JSON object'],
    ['a blank line', line(1) + '\n' + line(2), 'not valid JSON'],
  ];
  for (const [name, text, detail, lineNo = 2] of bad) {
    it(`rejects ${name}, naming file:line`, async () => {
      const file = await logFile('m.jsonl', text);
      const err = await failure(readLog(file));
      expect(isProxyError(err) && err.code).toBe('log_malformed');
      expect(err.message).toContain(`${file}:${lineNo}: `);
      expect(err.message).toContain(detail);
    });
  }

  it('reads from an offset; names byte offsets when it does not know the line', async () => {
    const text = line(1) + line(2) + line(3) + '{"seq":5}\n' + line(5);
    const file = await logFile('o.jsonl', text);
    const at2 = line(1).length;
    const withLine = await failure(readLog(file, { fromOffset: at2, fromLine: 2 }));
    expect(withLine.message).toContain(`${file}:4: `);
    const without = await failure(readLog(file, { fromOffset: at2 }));
    expect(without.message).toContain(`${file}:byte ${at2 + line(2).length + line(3).length}: `);

    const fine = await logFile('o2.jsonl', line(1) + line(2) + line(3));
    const read = await readLog(fine, { fromOffset: at2 });
    expect(read.events.map((e) => e.seq)).toEqual([2, 3]);
    expect(read.offsets[0]).toBe(at2);
    expect((await failure(readLog(fine, { fromOffset: at2 + 1 }))).message).toContain('not the start of a line');
    expect((await failure(readLog(fine, { fromOffset: 10_000 }))).message).toContain('past the end');
  });

  it('readEventAt refuses a torn line and a mid-line offset', async () => {
    const file = await logFile('e.jsonl', line(1) + line(2).slice(0, 10));
    expect((await failure(readEventAt(file, line(1).length))).message).toContain('has no end');
    expect((await failure(readEventAt(file, 3))).message).toContain('not the start of a line');
  });

  it('a missing file is session_not_found', async () => {
    const err = await failure(readLog(join(dir, 'gone.jsonl')));
    expect(isProxyError(err) && err.code).toBe('session_not_found');
  });
});

describe('opening for writing repairs a torn tail', () => {
  async function seed(store: LogStore, id: string, text: string): Promise<string> {
    await mkdir(store.dir, { recursive: true });
    await writeFile(store.file(id), text);
    return store.file(id);
  }

  it('cuts the file at the last newline, reports it, and keeps earlier events', async () => {
    const store = new LogStore(dir);
    const good = line(1) + line(2);
    const file = await seed(store, 'torn', good + line(3).slice(0, 25));
    const log = await store.open('torn', { create: false });
    expect(log.repaired).toEqual({ file, line: 3, offset: good.length, bytes: 25 });
    expect(await readFile(file, 'utf8')).toBe(good);
    expect(log.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(log.append({ type: 'catalog', tools: [] }, TS).seq).toBe(3);
    await log.close();
    const read = await readLog(file);
    expect(read.torn).toBeUndefined();
    expect(read.events.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('a malformed middle line: an error naming file:line, the file byte-for-byte unchanged', async () => {
    const store = new LogStore(dir);
    const text = line(1) + 'not json at all\n' + line(3) + line(4).slice(0, 9);
    const file = await seed(store, 'bad', text);
    const before = await readFile(file);
    const err = await failure(store.open('bad', { create: false }));
    expect(isProxyError(err) && err.code).toBe('log_malformed');
    expect(err.message).toContain(`${file}:2: not valid JSON`);
    expect((await readFile(file)).equals(before)).toBe(true);
    expect(existsSync(store.lockFile('bad'))).toBe(false);
  });
});
