/**
 * Images the client sends as data URLs are stored once, under their SHA-256, in
 * `<data_dir>/blobs/`, or in the database's `blobs` table when the store is PostgreSQL (replicas
 * then need no shared volume); the log holds the digest and the window's estimate, never the pixels.
 * The dialect reads the bytes back through `resolve` when it encodes the upstream request; on the
 * database, `preload` has fetched those of events read from it (another replica's) before then.
 *
 * A request never waits on the disk for an image: each digest is written once per process, in the
 * background (fs/promises), and `written()` is the barrier the session logs wait on before each
 * sync, so a durable log line never names an image that is not on disk (docs/decisions.md,
 * Images written once). An image named again more than an hour after this process last wrote it is
 * written again, which for one still there only marks it (its file touched, its row's time): so
 * `proxy sessions prune`, which removes the images no log names and no proxy has marked for a day
 * or more, never removes one a log is about to name (docs/decisions/0026-images-no-log-names-removed.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import { access, mkdir, open, rename, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { sha256Hex } from '../core/canonical.js';
import { ProxyError } from '../core/errors.js';
import type { LogEvent } from '../core/events.js';
import { estimateImageTokens } from '../core/estimate.js';
import type { ImagePart, NeutralMessage } from '../core/types.js';
import { DIGEST } from '../store/file-blobs.js';
import { asideName } from '../store/file-images-gc.js';
import { imageDigests, messageImageDigests } from '../store/image-digests.js';
import type { BlobStore } from '../store/types.js';
import { imageSize } from './image-size.js';

const DATA_URL = /^data:([a-z]+\/[a-z0-9.+-]+);base64,/i;

/** An image this process wrote is written (marked) again when named this long after. */
const CONFIRM_MS = 3_600_000;

interface Image {
  mime: string;
  base64: string;
}

export interface ImageStoreOptions {
  /** Decoded images kept for encoding, by their base64 length; 64 MiB unless said. */
  cacheBytes?: number;
  /** Sync each file and the directory (the log's `fsync` durability); else the OS has them. */
  durable?: boolean;
  /** Where images go instead of files: the database's, shared by replicas. */
  blobs?: BlobStore | undefined;
  /** How long a write stands before the image is written (marked) again; an hour unless said. */
  confirmMs?: number;
  /** Milliseconds since the epoch (tests move it). */
  now?: () => number;
}

export class ImageStore {
  readonly #dir: string;
  readonly #durable: boolean;
  readonly #blobs: BlobStore | undefined;
  /** Images for encoding, bounded by their base64 bytes: a session's requests do not read the same file each turn. */
  readonly #images: LRUCache<string, Image>;
  /**
   * Data URLs already stored, by their text: clients resend every image of the conversation each
   * turn, and a resent one then costs a lookup, not a decode and a hash. Bounded by the URLs' length.
   */
  readonly #stored = new LRUCache<string, Omit<ImagePart, 'detail'>>({ maxSize: 64 * 2 ** 20, sizeCalculation: (_v, url) => Math.max(1, url.length) });
  /**
   * Digests this process has written, or is writing, and when it began: each is written once, and
   * again (a mark, for one still there) when named `#confirmMs` later.
   */
  readonly #written = new Map<string, number>();
  readonly #confirmMs: number;
  readonly #now: () => number;
  /** Writes under way, with their image, which `resolve` reads while the file is not there yet. */
  readonly #pending = new Map<string, { done: Promise<void>; image: Image }>();
  #tmp = 0;
  /** An image has left memory to make room: a request may name one only the store holds now. */
  #evicted = false;

  constructor(dataDir: string, opts: ImageStoreOptions = {}) {
    this.#dir = join(dataDir, 'blobs');
    this.#durable = opts.durable ?? true;
    this.#blobs = opts.blobs;
    this.#confirmMs = opts.confirmMs ?? CONFIRM_MS;
    this.#now = opts.now ?? Date.now;
    this.#images = new LRUCache<string, Image>({
      maxSize: opts.cacheBytes ?? 64 * 2 ** 20, sizeCalculation: (image) => Math.max(1, image.base64.length),
      dispose: (_image, _sha, reason) => {
        if (reason === 'evict') this.#evicted = true;
      },
    });
  }

  /** Store a data-URL image and describe it for the log. */
  put(url: string, detail: 'auto' | 'low' | 'high' | undefined, param: string): ImagePart {
    // The estimate depends on `detail`: only the default's (`auto`, or none given) is kept.
    const usual = detail === undefined || detail === 'auto';
    const seen = usual ? this.#stored.get(url) : undefined;
    if (seen !== undefined) {
      // Resent, and since dropped from the bytes kept for encoding: from the database no file can
      // be read back at once, so it is kept again from the URL it came in.
      const keep = this.#blobs !== undefined && !this.#images.has(seen.sha256);
      // Named an hour or more after its write: written (marked) again, decoded from its URL once.
      const mark = !this.#confirmed(seen.sha256);
      if (keep || mark) {
        const image = imageOf(seen.mime, url);
        if (keep) this.#images.set(seen.sha256, image);
        if (mark) this.#write(seen.sha256, Buffer.from(image.base64, 'base64'), image, url);
      }
      return detail === undefined ? { ...seen } : { ...seen, detail };
    }
    const part = this.#store(url, detail, param);
    if (usual) {
      const { detail: _detail, ...described } = part;
      this.#stored.set(url, described);
    }
    return part;
  }

  /**
   * Resolves once every image write begun before the call is done. A write that failed rejects the
   * first call that sees it (the log sync of the request that sent the image, unless another came
   * first), and is then forgotten: the image is written again when a client next sends it.
   */
  async written(): Promise<void> {
    // The usual case, a request with no image: nothing to wait for (every log sync asks).
    if (this.#pending.size === 0) return;
    const entries = [...this.#pending];
    const results = await Promise.allSettled(entries.map(([, p]) => p.done));
    let failure: unknown;
    results.forEach((result, i) => {
      const [sha256, entry] = entries[i]!;
      if (this.#pending.get(sha256) === entry) this.#pending.delete(sha256);
      if (result.status === 'rejected') failure ??= result.reason;
    });
    if (failure !== undefined) throw failure;
  }

  /**
   * The bytes of an image, base64, for the upstream request: from memory, else read from the
   * store (synchronously, once: an image this process has not seen since it started).
   */
  resolve(sha256: string): Image {
    const cached = this.#images.get(sha256) ?? this.#pending.get(sha256)?.image;
    if (cached !== undefined) return cached;
    if (this.#blobs !== undefined) {
      throw new ProxyError('internal_error', { detail: `image ${sha256} was not read from the store before its request was built` });
    }
    if (!DIGEST.test(sha256)) throw new ProxyError('internal_error', { detail: `image ${sha256} is not in ${this.#dir}` });
    let file = join(this.#dir, sha256);
    // A prune looking at it again has it under its aside name for a moment (file-images-gc.ts).
    if (!existsSync(file) && existsSync(asideName(file))) file = asideName(file);
    if (!existsSync(file)) {
      throw new ProxyError('internal_error', { detail: `image ${sha256} is not in ${this.#dir}` });
    }
    const bytes = readFileSync(file);
    const image = { mime: sniffMime(bytes), base64: bytes.toString('base64') };
    this.#images.set(sha256, image);
    return image;
  }

  /**
   * Fetches from the shared store the images that `events` name and this process does not hold
   * (a session another replica wrote), so `resolve` finds them; nothing to do with files.
   */
  async preload(events: readonly LogEvent[]): Promise<void> {
    if (this.#blobs === undefined) return;
    await this.#fetch(this.#blobs, imageDigests(events));
  }

  /**
   * Fetches from the shared store the images a request about to be encoded names and this process
   * no longer holds: one dropped from the bytes kept for encoding that only the log names (a
   * Responses follow-up by `previous_response_id`, a side request). Files are read by `resolve`.
   */
  ensure(messages: readonly NeutralMessage[]): Promise<void> | undefined {
    // Nothing to look for until memory has let an image go: the common request pays nothing.
    if (this.#blobs === undefined || !this.#evicted) return undefined;
    return this.#fetch(this.#blobs, messageImageDigests(messages));
  }

  async #fetch(blobs: BlobStore, digests: ReadonlySet<string>): Promise<void> {
    const missing = [...digests].filter((sha256) => !this.#images.has(sha256) && !this.#pending.has(sha256));
    if (missing.length === 0) return;
    const found = await blobs.get(missing);
    for (const sha256 of missing) {
      const bytes = found.get(sha256);
      if (bytes === undefined) throw new ProxyError('internal_error', { detail: `image ${sha256} is not in the store's blobs` });
      this.#images.set(sha256, { mime: sniffMime(bytes), base64: bytes.toString('base64') });
    }
  }

  #store(url: string, detail: 'auto' | 'low' | 'high' | undefined, param: string): ImagePart {
    const match = DATA_URL.exec(url);
    if (match === null) {
      throw new ProxyError('invalid_request', { detail: `${param}: only data: URLs (base64) are accepted for images; the proxy does not fetch remote images.` }, { param });
    }
    const mime = match[1]!.toLowerCase();
    const bytes = Buffer.from(url.slice(match[0].length), 'base64');
    if (bytes.length === 0) throw new ProxyError('invalid_request', { detail: `${param}: the image is empty.` }, { param });
    const sha256 = sha256Hex(bytes);
    const image = { mime, base64: bytes.toString('base64') };
    this.#images.set(sha256, image);
    if (!this.#confirmed(sha256)) this.#write(sha256, bytes, image, url);
    const size = imageSize(bytes);
    const tokens = size === undefined ? 85 : estimateImageTokens(size.width, size.height, detail ?? 'auto');
    return { type: 'image', sha256, mime, tokens, ...(detail === undefined ? {} : { detail }) };
  }

  /** Written by this process, or being written, within `#confirmMs`: named without writing it again. */
  #confirmed(sha256: string): boolean {
    const at = this.#written.get(sha256);
    return at !== undefined && this.#now() - at < this.#confirmMs;
  }

  /** Writes the file in the background; after a failure the image is neither written nor known by its URL, so its next sight writes it. */
  #write(sha256: string, bytes: Buffer, image: Image, url: string): void {
    this.#written.set(sha256, this.#now());
    const done = this.#blobs === undefined ? this.#writeFile(join(this.#dir, sha256), bytes) : this.#blobs.put(sha256, bytes);
    const entry = { done, image };
    this.#pending.set(sha256, entry);
    entry.done.then(
      () => {
        if (this.#pending.get(sha256) === entry) this.#pending.delete(sha256);
      },
      () => {
        // Left in #pending for written() to report.
        this.#written.delete(sha256);
        this.#stored.delete(url);
      },
    );
  }

  /** To a temporary name, then renamed: a reader never sees half an image. */
  async #writeFile(file: string, bytes: Buffer): Promise<void> {
    // Stored already (the same digest is the same bytes): marked written now, by the file
    // system's clock, which a prune reads. One this process may not mark (another user's file) is
    // there all the same; one that is not there is written.
    const now = new Date();
    const there = await utimes(file, now, now).then(() => true, (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPERM' || err.code === 'EACCES') return access(file).then(() => true, () => false);
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return false;
      throw err;
    });
    if (there) return;
    await mkdir(this.#dir, { recursive: true });
    const tmp = `${file}.${process.pid}.${++this.#tmp}.tmp`;
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(bytes);
      if (this.#durable) await fh.datasync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
    if (this.#durable) {
      const dir = await open(this.#dir, 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    }
  }
}

/** A data URL's image, as kept for encoding. */
function imageOf(mime: string, url: string): Image {
  return { mime, base64: Buffer.from(url.slice(url.indexOf(',') + 1), 'base64').toString('base64') };
}

function sniffMime(bytes: Buffer): string {
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0x89504e47) return 'image/png';
  if (bytes.length >= 3 && bytes.toString('latin1', 0, 3) === 'GIF') return 'image/gif';
  if (bytes.length >= 12 && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  return 'application/octet-stream';
}
