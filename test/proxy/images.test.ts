/**
 * The image store: a data URL resent with every turn is recognised by its text; each digest is
 * written once per process, in the background, and a log sync waits for the writes begun before it;
 * the images kept for encoding are bounded by their bytes.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LogStore } from '../../src/log/store.js';
import { ImageStore } from '../../src/proxy/images.js';
import { pngDataUrl } from '../e2e/agent-content.js';

const png = (width: number, height: number, salt = ''): string => pngDataUrl(width, height, salt);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pp-images-'));
  dirs.push(dir);
  return dir;
}

describe('ImageStore', () => {
  it('a resent data URL is recognised without being stored again; its bytes still resolve', async () => {
    const dir = tempDir();
    const store = new ImageStore(dir);
    const url = png(2000, 1000);
    const first = store.put(url, undefined, 'messages[0].content[0]');
    await store.written();
    const file = join(dir, 'blobs', first.sha256);
    expect(existsSync(file)).toBe(true);
    rmSync(file);
    // Were it decoded and stored again, the file would be back.
    const again = store.put(url, 'auto', 'messages[2].content[0]');
    await store.written();
    expect(existsSync(file)).toBe(false);
    expect(again).toEqual({ ...first, detail: 'auto' });
    expect(store.resolve(first.sha256).mime).toBe('image/png');
  });

  it('writes each digest once per process, however its URL is spelled or its detail asked', async () => {
    const dir = tempDir();
    const store = new ImageStore(dir);
    const url = png(640, 480, 'once');
    const part = store.put(url, undefined, 'p');
    await store.written();
    rmSync(join(dir, 'blobs', part.sha256));
    // Neither is the text seen before: both are decoded and hashed, neither is written.
    expect(store.put(url, 'high', 'p').sha256).toBe(part.sha256);
    expect(store.put(url.replace('image/png', 'image/PNG'), undefined, 'p').sha256).toBe(part.sha256);
    await store.written();
    expect(readdirSync(join(dir, 'blobs'))).toEqual([]);
  });

  it('put returns before the disk has the image; resolve reads it from memory meanwhile', async () => {
    const dir = tempDir();
    const store = new ImageStore(dir);
    const part = store.put(png(10, 10, 'async'), undefined, 'p');
    expect(existsSync(join(dir, 'blobs', part.sha256))).toBe(false);
    expect(store.resolve(part.sha256).mime).toBe('image/png');
    await store.written();
    expect(existsSync(join(dir, 'blobs', part.sha256))).toBe(true);
    expect(readdirSync(join(dir, 'blobs')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('the estimate follows the detail asked for, whatever was seen before', () => {
    const store = new ImageStore(tempDir());
    const url = png(2000, 1000);
    const auto = store.put(url, undefined, 'p');
    const low = store.put(url, 'low', 'p');
    expect(low.tokens).toBe(85);
    expect(auto.tokens).toBeGreaterThan(85);
    expect(store.put(url, undefined, 'p').tokens).toBe(auto.tokens);
  });

  it('keeps decoded images up to its byte bound: past it, the oldest is read back from the store', async () => {
    const dir = tempDir();
    const urls = ['a', 'b', 'c'].map((salt) => png(100, 100, salt.repeat(1000)));
    const size = urls[0]!.length - 'data:image/png;base64,'.length;
    const store = new ImageStore(dir, { cacheBytes: 2 * size + 10 });
    const parts = urls.map((url) => store.put(url, undefined, 'p'));
    await store.written();
    for (const part of parts) rmSync(join(dir, 'blobs', part.sha256));
    // The two latest are in memory; the first was let go and its file is gone.
    expect(store.resolve(parts[2]!.sha256).mime).toBe('image/png');
    expect(store.resolve(parts[1]!.sha256).mime).toBe('image/png');
    expect(() => store.resolve(parts[0]!.sha256)).toThrow(/is not in/);
  });

  it('an image larger than the bound is not kept: it is read from the store each time', async () => {
    const dir = tempDir();
    const store = new ImageStore(dir, { cacheBytes: 100 });
    const part = store.put(png(100, 100, 'x'.repeat(1000)), undefined, 'p');
    await store.written();
    expect(store.resolve(part.sha256).mime).toBe('image/png');
    rmSync(join(dir, 'blobs', part.sha256));
    expect(() => store.resolve(part.sha256)).toThrow(/is not in/);
  });
});

describe('images before the log', () => {
  it('a log sync resolves only once the images put before it are on disk', async () => {
    const dir = tempDir();
    const images = new ImageStore(dir);
    const logs = new LogStore(dir, { beforeSync: () => images.written() });
    const log = await logs.open('s1', { create: true });
    const part = images.put(png(64, 64, 'ordered'), undefined, 'p');
    log.append({ type: 'client.msg', msg: { role: 'user', content: [part] } }, new Date().toISOString());
    await log.sync();
    expect(existsSync(join(dir, 'blobs', part.sha256))).toBe(true);
    await log.close();
  });

  it('a failed image write fails the sync that would make its reference durable, and the image is written when sent again', async () => {
    const dir = tempDir();
    // A file where the blobs directory goes: the write cannot be made.
    writeFileSync(join(dir, 'blobs'), '');
    const images = new ImageStore(dir);
    const logs = new LogStore(dir, { beforeSync: () => images.written() });
    const log = await logs.open('s2', { create: true });
    const url = png(64, 64, 'fails');
    const part = images.put(url, undefined, 'p');
    log.append({ type: 'client.msg', msg: { role: 'user', content: [part] } }, new Date().toISOString());
    await expect(log.sync()).rejects.toThrow();
    rmSync(join(dir, 'blobs'));
    images.put(url, undefined, 'p');
    await log.sync();
    expect(existsSync(join(dir, 'blobs', part.sha256))).toBe(true);
    await log.close();
  });
});
