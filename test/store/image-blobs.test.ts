/**
 * ImageStore over a shared blob store (the database's, here a map): each digest put once and no
 * file written; an image another process stored resolves once `preload` saw events naming it, and
 * not before; a resent image dropped from the bytes kept for encoding resolves again from its URL.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import { ImageStore } from '../../src/proxy/images.js';
import type { BlobStore } from '../../src/store/types.js';
import { pngDataUrl } from '../e2e/agent-content.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function blobs(): BlobStore & { puts: number; gets: number; rows: Map<string, Buffer> } {
  const rows = new Map<string, Buffer>();
  const b = {
    rows, puts: 0, gets: 0,
    async put(sha256: string, bytes: Buffer) {
      b.puts++;
      if (!rows.has(sha256)) rows.set(sha256, bytes);
    },
    async get(sha256s: readonly string[]) {
      b.gets++;
      return new Map(sha256s.filter((s) => rows.has(s)).map((s) => [s, rows.get(s)!]));
    },
  };
  return b;
}

function named(sha256: string): LogEvent {
  return { type: 'client.msg', seq: 3, ts: '2026-01-01T00:00:00.000Z', msg: { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', sha256, mime: 'image/png', tokens: 85 }] } } as LogEvent;
}

describe('ImageStore on a shared blob store', () => {
  it('puts each digest once, writes no file, and resolves what another process stored only after preload', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pp-image-blobs-'));
    dirs.push(dir);
    const shared = blobs();
    const a = new ImageStore(dir, { blobs: shared });
    const url = pngDataUrl(800, 600, 'a');
    const part = a.put(url, undefined, 'p');
    a.put(url, undefined, 'p');
    await a.written();
    expect(shared.puts).toBe(1);
    expect(shared.rows.has(part.sha256)).toBe(true);
    expect(existsSync(join(dir, 'blobs'))).toBe(false);

    const b = new ImageStore(dir, { blobs: shared });
    expect(() => b.resolve(part.sha256)).toThrow(/was not read from the store/);
    await b.preload([named(part.sha256)]);
    expect(b.resolve(part.sha256)).toEqual(a.resolve(part.sha256));
    // Held now: a second preload asks nothing.
    await b.preload([named(part.sha256)]);
    expect(shared.gets).toBe(1);
    await expect(b.preload([named('0'.repeat(64))])).rejects.toThrow(/not in the store's blobs/);
  });

  /** Two images into a store that keeps 4,500 bytes: the second pushes the first out. */
  async function evicted() {
    const shared = blobs();
    const urls = [pngDataUrl(400, 300, 'x'.repeat(3000)), pngDataUrl(400, 300, 'y'.repeat(3000))];
    const small = new ImageStore('/nonexistent', { blobs: shared, cacheBytes: 4500 });
    const first = small.put(urls[0]!, undefined, 'p');
    small.put(urls[1]!, undefined, 'p');
    await small.written();
    expect(() => small.resolve(first.sha256)).toThrow(/was not read from the store/);
    return { shared, small, first, url: urls[0]! };
  }

  it('a resent image dropped from the bytes kept for encoding resolves again from its URL', async () => {
    const { shared, small, first, url } = await evicted();
    expect(small.put(url, undefined, 'p')).toEqual(first);
    expect(small.resolve(first.sha256).base64).toBe(shared.rows.get(first.sha256)!.toString('base64'));
  });

  it('an image dropped from memory that only the log names is fetched again before its request is encoded', async () => {
    const { shared, small, first } = await evicted();
    // What the build stage hands it: the request's messages, the dropped image among them.
    const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'look' }, { ...first, detail: 'auto' as const }] }, { role: 'assistant' as const, content: 'a cat' }];
    const gets = shared.gets;
    await small.ensure(messages);
    expect(shared.gets).toBe(gets + 1);
    expect(small.resolve(first.sha256).base64).toBe(shared.rows.get(first.sha256)!.toString('base64'));
    // Held again: asked nothing more; on files there is nothing to fetch.
    await small.ensure(messages);
    expect(shared.gets).toBe(gets + 1);
    await new ImageStore('/nonexistent').ensure(messages);
  });
});
