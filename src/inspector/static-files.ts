/**
 * The page's files under `/ui/`, from the build's `dist/ui/` (the page's esbuild output), with the
 * headers a page that shows logs should have: a strict Content-Security-Policy (nothing from
 * elsewhere, no inline script), no sniffing, no framing, revalidated on each load (the file names
 * carry no hash).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not `no-referrer`: with it a browser posts the login form with `Origin: null`, which the
  // origin guard refuses. `same-origin` still sends nothing to any other site.
  'referrer-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

export interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

export type Found = { file: StaticFile } | { missing: 'build' | 'file' };

export class StaticFiles {
  readonly #root: string;
  readonly #cache = new Map<string, StaticFile>();
  readonly #keep: boolean;

  /** `keep`: hold files in memory once read (a built package does not change under the server). */
  constructor(root: string, keep: boolean) {
    this.#root = root;
    this.#keep = keep;
  }

  /** The file for a path under /ui/ (`''` is index.html; a path without an extension is the page's own route). */
  async find(path: string): Promise<Found> {
    const rel = path === '' || extname(path) === '' ? 'index.html' : path;
    const full = normalize(join(this.#root, rel));
    if (!full.startsWith(this.#root + sep)) return { missing: 'file' };
    const cached = this.#cache.get(full);
    if (cached !== undefined) return { file: cached };
    let body: Buffer;
    try {
      body = await readFile(full);
    } catch {
      if (rel === 'index.html') return { missing: 'build' };
      try {
        await readFile(join(this.#root, 'index.html'));
        return { missing: 'file' };
      } catch {
        return { missing: 'build' };
      }
    }
    const file = { body, type: TYPES[extname(full)] ?? 'application/octet-stream', etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    if (this.#keep) this.#cache.set(full, file);
    return { file };
  }
}
