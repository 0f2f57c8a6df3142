/**
 * The simulator's own canonical JSON and SHA-256, written apart from src/core on purpose: a test
 * double that shares the proxy's hashing would hide a bug in it. Canonical form: object keys in
 * UTF-16 code unit order (what `Array.prototype.sort` gives), no whitespace, `undefined` members
 * dropped, scalars as JSON.stringify writes them (RFC 8785's ordering, JSON.stringify's numbers).
 */
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const members = Object.keys(obj).sort().filter((key) => obj[key] !== undefined);
    return `{${members.map((key) => `${JSON.stringify(key)}:${canonicalJson(obj[key])}`).join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`canonical JSON cannot hold ${value}`);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** UTF-8 length of a string (a lone surrogate counts as the 3 bytes of U+FFFD, as Buffer writes it). */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
