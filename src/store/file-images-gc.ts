/**
 * The file store's half of removing the images no log names (`proxy sessions prune`,
 * docs/decisions/0026-images-no-log-names-removed.md). An image under `blobs/` goes when no log
 * names it and its file's modification time is before the given time. A running proxy names an
 * image it wrote earlier only after writing or touching its file within the last hour
 * (src/proxy/images.ts), and the time is at least a day back: such an image is never old here.
 *
 * What is removed is first renamed aside and looked at again: a proxy that touched it between the
 * listing and the rename made it new, and it is put back; one that touches it after the rename
 * finds no file and writes it again. A reader of the image in between finds it under its aside
 * name (`asideName`).
 */
import { readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DIGEST } from './file-blobs.js';
import type { ImagesRemoved } from './types.js';

/** A write's temporary file (`<digest>.<pid>.<n>.tmp`, images.ts) or a removal's aside name. */
const DEBRIS = /^[0-9a-f]{64}\.(?:\d+\.\d+\.tmp|\d+\.migrate\.tmp|gc)$/;

/**
 * How a log line names an image (an image part's `sha256`), matched in the raw text: anything in a
 * log that reads as one keeps its image, a damaged line's included.
 */
export const NAMED_IMAGE = /"sha256":"([0-9a-f]{64})"/g;

/** Where an image is while a removal looks at it again. */
export function asideName(file: string): string {
  return `${file}.gc`;
}

/**
 * `logs`: every log file to read for names, less those about to go (a dry run's, still there).
 * Leftovers of a crashed write or removal older than the time go too, not counted.
 */
export async function removeUnnamedImageFiles(blobsDir: string, logs: readonly string[], idleBefore: number, dryRun: boolean): Promise<ImagesRemoved> {
  const out: ImagesRemoved = { removed: 0, bytes: 0, named: 0, recent: 0 };
  let names: string[];
  try {
    names = await readdir(blobsDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw err;
  }
  // The logs are read for names only when some image is old enough to go.
  const old: { file: string; image: string; size: number }[] = [];
  for (const image of names.filter((n) => DIGEST.test(n))) {
    const file = join(blobsDir, image);
    const size = await oldSize(file, idleBefore);
    if (size === undefined) out.recent++;
    else old.push({ file, image, size });
  }
  if (old.length > 0) {
    const named = await namedIn(logs);
    for (const { file, image, size } of old) {
      if (named.has(image)) {
        out.named++;
        continue;
      }
      if (dryRun || (await removeIfStillOld(file, idleBefore))) {
        out.removed++;
        out.bytes += size;
      } else {
        out.recent++;
      }
    }
  }
  if (!dryRun) {
    for (const name of names.filter((n) => DEBRIS.test(n))) {
      const file = join(blobsDir, name);
      if ((await oldSize(file, idleBefore)) !== undefined) await unlink(file).catch(() => undefined);
    }
  }
  return out;
}

/** Every digest the logs name. A log removed meanwhile names nothing. */
async function namedIn(logs: readonly string[]): Promise<Set<string>> {
  const named = new Set<string>();
  for (const log of logs) {
    const text = await readFile(log, 'latin1').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '';
      throw err;
    });
    for (const m of text.matchAll(NAMED_IMAGE)) named.add(m[1]!);
  }
  return named;
}

/** The file's size if it was last written or touched before the time; undefined if since, or gone. */
async function oldSize(file: string, idleBefore: number): Promise<number | undefined> {
  try {
    const s = await stat(file);
    return s.mtimeMs < idleBefore ? s.size : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Renames the image aside and looks at it there: still old, it is removed (true); touched since
 * it was listed, it is put back, unless a proxy wrote it again meanwhile (false either way).
 */
export async function removeIfStillOld(file: string, idleBefore: number): Promise<boolean> {
  const aside = asideName(file);
  try {
    await rename(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  if ((await oldSize(aside, idleBefore)) !== undefined) {
    await unlink(aside);
    return true;
  }
  // Touched before the rename. A proxy that found no file meanwhile wrote it again: that one stays.
  if (await stat(file).then(() => true, () => false)) await unlink(aside);
  else await rename(aside, file);
  return false;
}
