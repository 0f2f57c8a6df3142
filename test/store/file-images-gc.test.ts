/**
 * Removing the images no log names from `blobs/` (decision 0026), and the image store's half of
 * the bargain: an image it names again an hour after writing it is written (or its file touched)
 * again, so a prune never takes one a log is about to name.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ImageStore } from '../../src/proxy/images.js';
import { asideName, removeIfStillOld, removeUnnamedImageFiles } from '../../src/store/file-images-gc.js';
import { pngDataUrl } from '../e2e/agent-content.js';

const DAY = 86_400_000;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function world(): { blobs: string; logs: string; now: number } {
  const dir = mkdtempSync(join(tmpdir(), 'pp-images-gc-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'blobs'));
  mkdirSync(join(dir, 'sessions'));
  return { blobs: join(dir, 'blobs'), logs: join(dir, 'sessions'), now: Date.now() };
}

const digest = (c: string) => c.repeat(64);

/** A blob of `bytes` bytes last written `daysAgo` days back. */
function blob(dir: string, name: string, daysAgo: number, bytes = 10): string {
  const file = join(dir, name);
  writeFileSync(file, Buffer.alloc(bytes, 1));
  const at = new Date(Date.now() - daysAgo * DAY);
  utimesSync(file, at, at);
  return file;
}

/** A log whose one user message names `sha256`s (whole JSON lines, or a damaged one). */
function log(dir: string, id: string, sha256s: string[], damaged = false): string {
  const file = join(dir, `${id}.jsonl`);
  const parts = sha256s.map((s) => ({ type: 'image', sha256: s, mime: 'image/png', tokens: 85 }));
  const line = JSON.stringify({ seq: 1, ts: '2026-01-01T00:00:00.000Z', type: 'client.msg', msg: { role: 'user', content: parts } });
  writeFileSync(file, damaged ? `${line.slice(0, 20)}garbage${line.slice(20)}\n` : `${line}\n`);
  return file;
}

describe('removeUnnamedImageFiles', () => {
  it('removes the old images no log names; keeps what a log names (a damaged line too), what is recent, and a dry run\'s count matches', async () => {
    const w = world();
    blob(w.blobs, digest('a'), 40); // named by a log
    blob(w.blobs, digest('b'), 40, 100); // named by none
    blob(w.blobs, digest('c'), 2); // named by none, recent
    blob(w.blobs, digest('d'), 40, 1000); // named only by a log about to go
    blob(w.blobs, digest('e'), 40); // named by a damaged line
    blob(w.blobs, `${digest('b')}.123.4.tmp`, 40); // a crashed write's leftover
    blob(w.blobs, `${digest('c')}.123.5.tmp`, 0); // a write under way
    const logs = [log(w.logs, 's1', [digest('a')]), log(w.logs, 's2', [digest('d')]), log(w.logs, 's3', [digest('e')], true)];
    const idleBefore = w.now - 30 * DAY;

    const dry = await removeUnnamedImageFiles(w.blobs, [logs[0]!, logs[2]!], idleBefore, true);
    expect(dry).toEqual({ removed: 2, bytes: 1100, named: 2, recent: 1 });
    expect(existsSync(join(w.blobs, digest('b')))).toBe(true);
    expect(existsSync(join(w.blobs, `${digest('b')}.123.4.tmp`))).toBe(true);

    const real = await removeUnnamedImageFiles(w.blobs, logs, idleBefore, false);
    expect(real).toEqual({ removed: 1, bytes: 100, named: 3, recent: 1 });
    for (const c of 'acde') expect(existsSync(join(w.blobs, digest(c)))).toBe(true);
    expect(existsSync(join(w.blobs, digest('b')))).toBe(false);
    expect(existsSync(join(w.blobs, `${digest('b')}.123.4.tmp`))).toBe(false);
    expect(existsSync(join(w.blobs, `${digest('c')}.123.5.tmp`))).toBe(true);
    // Again: nothing left to remove.
    expect(await removeUnnamedImageFiles(w.blobs, logs, idleBefore, false)).toMatchObject({ removed: 0, named: 3, recent: 1 });
  });

  it('no image old enough to go: no log is read', async () => {
    const w = world();
    blob(w.blobs, digest('a'), 1);
    // A log that cannot be read (a directory): reading it would throw.
    mkdirSync(join(w.logs, 'unreadable.jsonl'));
    expect(await removeUnnamedImageFiles(w.blobs, [join(w.logs, 'unreadable.jsonl')], w.now - 30 * DAY, false)).toEqual({ removed: 0, bytes: 0, named: 0, recent: 1 });
    blob(w.blobs, digest('b'), 40);
    await expect(removeUnnamedImageFiles(w.blobs, [join(w.logs, 'unreadable.jsonl')], w.now - 30 * DAY, false)).rejects.toThrow(/EISDIR/);
  });

  it('no blobs directory: nothing to do', async () => {
    const w = world();
    rmSync(w.blobs, { recursive: true });
    expect(await removeUnnamedImageFiles(w.blobs, [], w.now, false)).toEqual({ removed: 0, bytes: 0, named: 0, recent: 0 });
  });

  it('an image touched after it was listed is put back, not removed; one gone meanwhile is no error', async () => {
    const w = world();
    const file = blob(w.blobs, digest('f'), 40);
    const idleBefore = w.now - 30 * DAY;
    // Listed as old, then a proxy marks it (images.ts touches the file it would name again).
    utimesSync(file, new Date(), new Date());
    expect(await removeIfStillOld(file, idleBefore)).toBe(false);
    expect(readFileSync(file)).toEqual(Buffer.alloc(10, 1));
    expect(existsSync(asideName(file))).toBe(false);
    rmSync(file);
    expect(await removeIfStillOld(file, idleBefore)).toBe(false);
  });
});

/** An image stored through an ImageStore on its own clock; `later()` moves that clock past the hour. */
async function storedImage(salt: string) {
  const w = world();
  let now = Date.now();
  const images = new ImageStore(join(w.blobs, '..'), { now: () => now });
  const url = pngDataUrl(64, 48, salt);
  const { sha256 } = images.put(url, undefined, 'p');
  await images.written();
  const file = join(w.blobs, sha256);
  return { images, url, file, bytes: readFileSync(file), later: () => { now += 3_600_001; } };
}

describe('the image store marks what it names again', () => {
  it('an image named an hour after its write is written again if a prune took it, and its file touched if not', async () => {
    const { images, url, file, bytes, later } = await storedImage('gc');

    // Within the hour the store names it without asking the disk.
    rmSync(file);
    images.put(url, undefined, 'p');
    await images.written();
    expect(existsSync(file)).toBe(false);

    // An hour on, named again (resent, by its URL): written again before any log sync goes on.
    later();
    images.put(url, undefined, 'p');
    await images.written();
    expect(readFileSync(file)).toEqual(bytes);

    // Still there an hour later: its file touched, so a prune sees it recent.
    const old = new Date(Date.now() - 40 * DAY);
    utimesSync(file, old, old);
    later();
    images.put(url, 'high', 'p'); // another `detail`: decoded again, the same digest
    await images.written();
    expect(statSync(file).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    expect(readFileSync(file)).toEqual(bytes);
  });

  it('a prune and a proxy naming the same old image at once, a hundred times over: the image is always there after', async () => {
    const { images, url, file, bytes, later } = await storedImage('race');
    const idleBefore = Date.now() - 30 * DAY;
    let removedFirst = 0;
    for (let i = 0; i < 100; i++) {
      const old = new Date(Date.now() - 40 * DAY);
      utimesSync(file, old, old);
      later(); // the proxy's last write of it is more than an hour back
      // Started together, in either order: the removal's steps and the proxy's mark or write interleave.
      const removal = i % 2 === 0 ? removeIfStillOld(file, idleBefore) : Promise.resolve().then(() => removeIfStillOld(file, idleBefore));
      images.put(url, undefined, 'p');
      const [removed] = await Promise.all([removal, images.written()]);
      if (removed) removedFirst++;
      expect(readFileSync(file), `round ${i}`).toEqual(bytes);
      expect(existsSync(asideName(file))).toBe(false);
    }
    // Both orders happened: some rounds the removal took the file and the proxy wrote it back.
    expect(removedFirst).toBeGreaterThan(0);
  });

  it('an image a prune is looking at is read from its aside name', () => {
    const w = world();
    const dataDir = join(w.blobs, '..');
    const writer = new ImageStore(dataDir);
    const { sha256 } = writer.put(pngDataUrl(32, 32, 'aside'), undefined, 'p');
    return writer.written().then(() => {
      const file = join(w.blobs, sha256);
      renameSync(file, asideName(file));
      // A process that holds no copy in memory reads it from the disk.
      const reader = new ImageStore(dataDir);
      expect(reader.resolve(sha256).mime).toBe('image/png');
    });
  });
});
