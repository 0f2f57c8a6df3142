/**
 * Images the client sends as data URLs are stored once, under their SHA-256, in
 * `<data_dir>/blobs/`; the log holds the digest and the window's estimate, never the pixels.
 * The dialect reads the bytes back through `resolve` when it encodes the upstream request.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../core/canonical.js';
import { ProxyError } from '../core/errors.js';
import { estimateImageTokens } from '../core/estimate.js';
import type { ImagePart } from '../core/types.js';
import { LRUCache } from 'lru-cache';
import { imageSize } from './image-size.js';

const DATA_URL = /^data:([a-z]+\/[a-z0-9.+-]+);base64,/i;

export class ImageStore {
  readonly #dir: string;
  /** Recently used images, so a session's requests do not read the same file each turn. */
  readonly #recent = new Map<string, { mime: string; base64: string }>();
  readonly #maxRecent: number;
  /**
   * Data URLs already stored, by their text: clients resend every image of the conversation each
   * turn, and a resent one then costs a lookup, not a decode, a hash and a file check. Bounded by
   * the URLs' length.
   */
  readonly #stored = new LRUCache<string, Omit<ImagePart, 'detail'>>({ maxSize: 64 * 2 ** 20, sizeCalculation: (_v, url) => Math.max(1, url.length) });

  constructor(dataDir: string, maxRecent = 64) {
    this.#dir = join(dataDir, 'blobs');
    this.#maxRecent = maxRecent;
  }

  /** Store a data-URL image and describe it for the log. */
  put(url: string, detail: 'auto' | 'low' | 'high' | undefined, param: string): ImagePart {
    // The estimate depends on `detail`: only the default's (`auto`, or none given) is kept.
    const usual = detail === undefined || detail === 'auto';
    const seen = usual ? this.#stored.get(url) : undefined;
    if (seen !== undefined) return detail === undefined ? { ...seen } : { ...seen, detail };
    const part = this.#store(url, detail, param);
    if (usual) {
      const { detail: _detail, ...described } = part;
      this.#stored.set(url, described);
    }
    return part;
  }

  #store(url: string, detail: 'auto' | 'low' | 'high' | undefined, param: string): ImagePart {
    const match = DATA_URL.exec(url);
    if (match === null) {
      throw new ProxyError('invalid_request', { detail: `${param}: only data: URLs (base64) are accepted for images; the proxy does not fetch remote images.` }, { param });
    }
    const mime = match[1]!.toLowerCase();
    const base64 = url.slice(match[0].length);
    const bytes = Buffer.from(base64, 'base64');
    if (bytes.length === 0) throw new ProxyError('invalid_request', { detail: `${param}: the image is empty.` }, { param });
    const sha256 = sha256Hex(bytes);
    const file = join(this.#dir, sha256);
    if (!existsSync(file)) {
      mkdirSync(this.#dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, bytes);
      renameSync(tmp, file);
    }
    this.#remember(sha256, { mime, base64: bytes.toString('base64') });
    const size = imageSize(bytes);
    const tokens = size === undefined ? 85 : estimateImageTokens(size.width, size.height, detail ?? 'auto');
    return { type: 'image', sha256, mime, tokens, ...(detail === undefined ? {} : { detail }) };
  }

  /** The stored bytes of an image, base64, for the upstream request. */
  resolve(sha256: string): { mime: string; base64: string } {
    const cached = this.#recent.get(sha256);
    if (cached !== undefined) return cached;
    const file = join(this.#dir, sha256);
    if (!/^[0-9a-f]{64}$/.test(sha256) || !existsSync(file)) {
      throw new ProxyError('internal_error', { detail: `image ${sha256} is not in ${this.#dir}` });
    }
    const bytes = readFileSync(file);
    const image = { mime: sniffMime(bytes), base64: bytes.toString('base64') };
    this.#remember(sha256, image);
    return image;
  }

  #remember(sha256: string, image: { mime: string; base64: string }): void {
    this.#recent.delete(sha256);
    this.#recent.set(sha256, image);
    if (this.#recent.size > this.#maxRecent) this.#recent.delete(this.#recent.keys().next().value!);
  }
}

function sniffMime(bytes: Buffer): string {
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0x89504e47) return 'image/png';
  if (bytes.length >= 3 && bytes.toString('latin1', 0, 3) === 'GIF') return 'image/gif';
  if (bytes.length >= 12 && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  return 'application/octet-stream';
}
