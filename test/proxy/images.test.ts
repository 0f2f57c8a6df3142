/** The image store: a data URL resent with every turn is stored once and recognised by its text. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ImageStore } from '../../src/proxy/images.js';

/** A PNG header naming an image of this size: enough for the size reader. */
function png(width: number, height: number): string {
  const b = Buffer.alloc(33);
  b.writeUInt32BE(0x89504e47, 0);
  b.writeUInt32BE(0x0d0a1a0a, 4);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return `data:image/png;base64,${b.toString('base64')}`;
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('ImageStore', () => {
  it('a resent data URL is recognised without being stored again; its bytes still resolve', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pp-images-'));
    dirs.push(dir);
    const store = new ImageStore(dir);
    const url = png(2000, 1000);
    const first = store.put(url, undefined, 'messages[0].content[0]');
    const file = join(dir, 'blobs', first.sha256);
    expect(existsSync(file)).toBe(true);
    rmSync(file);
    // Were it decoded and stored again, the file would be back.
    const again = store.put(url, 'auto', 'messages[2].content[0]');
    expect(existsSync(file)).toBe(false);
    expect(again).toEqual({ ...first, detail: 'auto' });
    expect(store.resolve(first.sha256).mime).toBe('image/png');
  });

  it('the estimate follows the detail asked for, whatever was seen before', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pp-images-'));
    dirs.push(dir);
    const store = new ImageStore(dir);
    const url = png(2000, 1000);
    const auto = store.put(url, undefined, 'p');
    const low = store.put(url, 'low', 'p');
    expect(low.tokens).toBe(85);
    expect(auto.tokens).toBeGreaterThan(85);
    expect(store.put(url, undefined, 'p').tokens).toBe(auto.tokens);
  });
});
