/**
 * The file store's images as a BlobStore, `<data_dir>/blobs/<sha256>`, for `proxy migrate` (the
 * running proxy writes them itself, src/proxy/images.ts, in the same place and the same way: a
 * temporary name, synced, renamed; a digest already there is left alone).
 */
import { access, mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore } from './types.js';

/** A blob's name: its SHA-256, lowercase hex. */
export const DIGEST = /^[0-9a-f]{64}$/;

export class FileBlobStore implements BlobStore {
  readonly #dir: string;

  constructor(dataDir: string) {
    this.#dir = join(dataDir, 'blobs');
  }

  async put(sha256: string, bytes: Buffer): Promise<void> {
    if (!DIGEST.test(sha256)) throw new RangeError(`not a SHA-256 digest: ${sha256}`);
    const file = join(this.#dir, sha256);
    if (await access(file).then(() => true, () => false)) return;
    await mkdir(this.#dir, { recursive: true });
    const tmp = `${file}.${process.pid}.migrate.tmp`;
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(bytes);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  }

  async get(sha256s: readonly string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    for (const sha256 of sha256s) {
      if (!DIGEST.test(sha256)) continue;
      const bytes = await readFile(join(this.#dir, sha256)).catch(() => undefined);
      if (bytes !== undefined) out.set(sha256, bytes);
    }
    return out;
  }
}
