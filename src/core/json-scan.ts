/**
 * Where the elements of one top-level array sit in a JSON body's bytes, read without parsing:
 * what lets a request that resends its conversation parse only what follows the part it shares
 * with the previous request (src/proxy/body-memo.ts). Lenient on purpose: it finds structure, and
 * JSON.parse still judges every byte it is given; text it cannot follow gives undefined.
 */

import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './json-depth.js';

const COMMA = 0x2c;
const COLON = 0x3a;

/** The top-level array named by the key, as byte offsets, and the keys written before it. */
export interface ArrayLayout {
  /** Top-level keys before the array's, in the order written (a repeated one once). */
  before: string[];
  /** Offset just after the array's `[`. */
  open: number;
  /** Offset just after each element's last byte. */
  ends: number[];
  /** Offset of the array's `]`. */
  close: number;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The offset of the first byte at or after `i` that is not JSON whitespace. */
export function skipSpace(b: Uint8Array, i: number): number {
  while (i < b.length && isSpace(b[i]!)) i++;
  return i;
}

/** `i` at an opening quote: the offset after its closing quote, or -1. */
function skipString(b: Buffer, i: number): number {
  let end = i;
  for (;;) {
    end = b.indexOf(QUOTE, end + 1);
    if (end < 0) return -1;
    let k = end - 1;
    while (b[k] === BACKSLASH) k--;
    // An even run of backslashes escapes itself, not the quote.
    if ((end - 1 - k) % 2 === 0) return end + 1;
  }
}

/** `i` at a value's first byte: the offset after its last, or -1. */
function skipValue(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c !== OPEN_BRACE && c !== OPEN_BRACKET) {
    // A number or a literal: up to the next delimiter.
    while (i < b.length) {
      const d = b[i]!;
      if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
      i++;
    }
    return i;
  }
  let depth = 0;
  while (i < b.length) {
    const d = b[i]!;
    if (d === QUOTE) {
      i = skipString(b, i);
      if (i < 0) return -1;
      continue;
    }
    if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
    else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return -1;
}

/**
 * From `i` just after an element (or just after the `[`, with `first`), the ends of the elements
 * that follow and the offset of the closing `]`; undefined when the bytes do not read as an array.
 */
export function scanElements(b: Buffer, i: number, first: boolean): { ends: number[]; close: number } | undefined {
  const ends: number[] = [];
  i = skipSpace(b, i);
  if (first && b[i] === CLOSE_BRACKET) return { ends, close: i };
  if (!first) {
    if (b[i] === CLOSE_BRACKET) return { ends, close: i };
    if (b[i] !== COMMA) return undefined;
    i = skipSpace(b, i + 1);
  }
  for (;;) {
    const end = skipValue(b, i);
    if (end < 0 || end === i) return undefined;
    ends.push(end);
    i = skipSpace(b, end);
    if (b[i] === CLOSE_BRACKET) return { ends, close: i };
    if (b[i] !== COMMA) return undefined;
    i = skipSpace(b, i + 1);
  }
}

/**
 * The layout of the array under `key` in a top-level JSON object; undefined when the body is not
 * an object, the key is missing, holds something else, or appears twice (JSON.parse would keep
 * the last, and the layout could name the first).
 */
export function arrayLayout(b: Buffer, key: string): ArrayLayout | undefined {
  return readObject(b, key, true);
}

/**
 * The keys before the top-level array under `key` and the offset just after its `[`, read that
 * far and no further: nothing after the `[` is looked at (not even whether the key comes again).
 */
export function listOpening(b: Buffer, key: string): Pick<ArrayLayout, 'before' | 'open'> | undefined {
  return readObject(b, key, false);
}

/** `i` at or before a value (spaces skipped): the offset after its last byte, or -1. */
export function valueEnd(b: Buffer, i: number): number {
  i = skipSpace(b, i);
  return i < b.length ? skipValue(b, i) : -1;
}

/**
 * From `from` just after a member's value (or an array's `]`) in an object, the offsets just after
 * each further member's value (`,"k":v`) that ends by `limit`; it stops at the first it cannot read.
 */
export function memberEnds(b: Buffer, from: number, limit: number): number[] {
  const ends: number[] = [];
  let i = skipSpace(b, from);
  while (b[i] === COMMA) {
    i = skipSpace(b, i + 1);
    if (b[i] !== QUOTE) break;
    const keyEnd = skipString(b, i);
    if (keyEnd < 0) break;
    i = skipSpace(b, keyEnd);
    if (b[i] !== COLON) break;
    const at = skipSpace(b, i + 1);
    const end = valueEnd(b, at);
    if (end <= at || end > limit) break;
    ends.push(end);
    i = skipSpace(b, end);
  }
  return ends;
}

function readObject(b: Buffer, key: string, whole: true): ArrayLayout | undefined;
function readObject(b: Buffer, key: string, whole: false): Pick<ArrayLayout, 'before' | 'open'> | undefined;
function readObject(b: Buffer, key: string, whole: boolean): Pick<ArrayLayout, 'before' | 'open'> | undefined {
  let i = skipSpace(b, 0);
  if (b[i] !== OPEN_BRACE) return undefined;
  i = skipSpace(b, i + 1);
  let found: ArrayLayout | undefined;
  const before = new Set<string>();
  while (i < b.length && b[i] !== CLOSE_BRACE) {
    if (b[i] !== QUOTE) return undefined;
    const keyEnd = skipString(b, i);
    if (keyEnd < 0) return undefined;
    const name = keyName(b, i, keyEnd);
    if (name === undefined) return undefined;
    if (found === undefined && name !== key) before.add(name);
    i = skipSpace(b, keyEnd);
    if (b[i] !== COLON) return undefined;
    i = skipSpace(b, i + 1);
    if (name === key) {
      if (found !== undefined || b[i] !== OPEN_BRACKET) return undefined;
      if (!whole) return { before: [...before], open: i + 1 };
      const elements = scanElements(b, i + 1, true);
      if (elements === undefined) return undefined;
      found = { before: [...before], open: i + 1, ends: elements.ends, close: elements.close };
      i = elements.close + 1;
    } else {
      i = skipValue(b, i);
      if (i < 0) return undefined;
    }
    i = skipSpace(b, i);
    if (b[i] === COMMA) i = skipSpace(b, i + 1);
  }
  return found;
}

/** A key as JSON.parse reads it: escapes decoded (`"m\u0065ssages"` is `messages`). */
function keyName(b: Buffer, start: number, end: number): string | undefined {
  const raw = b.toString('utf8', start + 1, end - 1);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(b.toString('utf8', start, end)) as string;
  } catch {
    return undefined;
  }
}
