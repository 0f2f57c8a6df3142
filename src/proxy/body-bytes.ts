/**
 * Byte-level helpers the body memos share (src/proxy/body-memo.ts, src/proxy/head-memo.ts): where
 * two bodies part, what follows a list in its object, and which parsed keys a memo must not
 * rebuild by assignment.
 */
import { CLOSE_BRACE, QUOTE } from '../core/json-depth.js';
import { skipSpace } from '../core/json-scan.js';

const CHUNK = 64 * 1024;
const COMMA = 0x2c;

/** The first offset below `limit` where the two differ, or `limit`; memcmp does the reading. */
export function firstDifferingByte(a: Buffer, b: Buffer, limit: number): number {
  for (let lo = 0; lo < limit; lo += CHUNK) {
    let hi = Math.min(limit, lo + CHUNK);
    if (a.compare(b, lo, hi, lo, hi) === 0) continue;
    let start = lo;
    while (hi - start > 32) {
      const mid = (start + hi) >> 1;
      if (a.compare(b, start, mid, start, mid) === 0) start = mid;
      else hi = mid;
    }
    for (let i = start; i < hi; i++) if (a[i] !== b[i]) return i;
    return hi;
  }
  return limit;
}

/** How many last bytes the two have in common, at most `limit`; memcmp does the reading. */
export function sharedTailLength(a: Buffer, b: Buffer, limit: number): number {
  const max = Math.min(limit, a.length, b.length);
  // Doubling, then halving: a long shared tail costs a few memcmps, not a byte loop.
  let same = 0;
  let step = 64;
  while (same < max) {
    const n = Math.min(step, max - same);
    if (a.compare(b, b.length - same - n, b.length - same, a.length - same - n, a.length - same) !== 0) {
      if (n <= 1) return same;
      step = n >> 1;
      continue;
    }
    same += n;
    step *= 2;
  }
  return same;
}

/**
 * What follows the list's `]` in the top-level object, without the separating comma: `"k":v,...}`
 * or `}`. Undefined where that is not JSON's (a trailing comma, no comma, other spaces), so the
 * body is parsed whole for JSON.parse's error.
 */
export function objectRest(b: Buffer, from: number): string | undefined {
  const i = skipSpace(b, from);
  if (b[i] === CLOSE_BRACE) return b.toString('utf8', i);
  if (b[i] !== COMMA) return undefined;
  const next = skipSpace(b, i + 1);
  return b[next] === QUOTE ? b.toString('utf8', next) : undefined;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Keys an object literal would not copy as own data (`__proto__`), or that JS orders first (integers). */
export function unsafeKey(k: string): boolean {
  return k === '__proto__' || /^(0|[1-9][0-9]*)$/.test(k);
}
