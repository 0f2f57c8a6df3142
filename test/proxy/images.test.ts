/** The image store: a data URL resent with every turn is stored once and recognised by its text. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ImageStore } from '../../src/proxy/images.js';
import { pngDataUrl } from '../e2e/agent-content.js';

const png = (width: number, height: number): string => pngDataUrl(width, height, '');

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
