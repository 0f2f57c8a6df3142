/**
 * Tool results over the cap are shown head and tail (docs/decisions.md, Named cuts of large
 * results): cut at line ends, with a marker line naming the lines left out, 1-based, of the
 * result. Head and tail each get about half the cap. A result with no line end to cut at (or
 * whose lines are each longer than half the cap, so a line cut would keep nothing) is cut at
 * character boundaries and says roughly how much it left out. Deterministic: the same text and
 * cap always give the same bytes, so the memoised rendering and replay agree.
 *
 * A cut is kept as where it falls (`Cut`), not as the text it makes: the window makes the text
 * from the logged result when it is read, so a live session does not hold its capped results a
 * second time (docs/decisions.md, Memory follows live sessions).
 */
import { estimateTextTokens, utf8Length } from '../core/estimate.js';

/** A result shown as `content.slice(0, head) + marker + content.slice(tail)`. */
export interface Cut {
  readonly head: number;
  readonly marker: string;
  readonly tail: number;
}

export function capToolResult(content: string, maxTokens: number): string {
  const cut = cutOf(content, maxTokens);
  return cut === undefined ? content : applyCut(content, cut);
}

/** Where the cap cuts `content`; undefined when it is shown whole. */
export function cutOf(content: string, maxTokens: number): Cut | undefined {
  if (estimateTextTokens(content) <= maxTokens) return undefined;
  // bytes/3 estimator: half the cap in tokens is this many UTF-8 bytes on each side.
  const sideBytes = Math.max(0, Math.floor((maxTokens * 3) / 2));
  const cut = cutAtLines(content, sideBytes);
  return cut === null ? undefined : (cut ?? cutAtChars(content, sideBytes));
}

export function applyCut(content: string, cut: Cut): string {
  return content.slice(0, cut.head) + cut.marker + content.slice(cut.tail);
}

/** The marker line a line cut writes; exported for tests and for `proxy diff` readers. */
export function omittedLinesMarker(first: number, last: number, total: number): string {
  return `[lines ${first}-${last} of ${total} omitted]`;
}

/** A cut at line ends; undefined when there is none to make; null when every line fits. */
function cutAtLines(content: string, sideBytes: number): Cut | undefined | null {
  // A final newline ends the last line; it does not start an empty one.
  const trailing = content.endsWith('\n');
  const body = trailing ? content.slice(0, -1) : content;
  if (!body.includes('\n')) return undefined;
  const lines = body.split('\n');
  const total = lines.length;

  // `headEnd`: just past the newline after the last head line; `tailStart`: the newline before
  // the first tail line (the end of the body when no line is kept there).
  let head = 0;
  let headEnd = 0;
  let used = 0;
  while (head < total) {
    const bytes = utf8Length(lines[head]!) + 1;
    if (used + bytes > sideBytes) break;
    used += bytes;
    headEnd += lines[head]!.length + 1;
    head++;
  }
  let tail = 0;
  let tailStart = body.length;
  used = 0;
  while (tail < total - head) {
    const line = lines[total - 1 - tail]!;
    const bytes = utf8Length(line) + 1;
    if (used + bytes > sideBytes) break;
    used += bytes;
    tailStart -= line.length + (tail === 0 ? 0 : 1);
    tail++;
  }
  if (head === 0 && tail === 0) return undefined;
  if (head + tail >= total) return null;
  if (tail > 0) tailStart--;
  return { head: headEnd, marker: omittedLinesMarker(head + 1, total - tail, total), tail: tailStart };
}

function cutAtChars(content: string, sideBytes: number): Cut {
  const head = prefixEnd(content, sideBytes);
  const tail = Math.max(head, suffixStart(content, sideBytes));
  return { head, marker: `\n[about ${estimateTextTokens(content.slice(head, tail))} tokens omitted]\n`, tail };
}

/** End index of the longest prefix within `budget` UTF-8 bytes that splits no surrogate pair. */
function prefixEnd(text: string, budget: number): number {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const [size, units] = charAt(text, i);
    if (bytes + size > budget) break;
    bytes += size;
    i += units;
  }
  return i;
}

/** Start index of the longest suffix within `budget` UTF-8 bytes that splits no surrogate pair. */
function suffixStart(text: string, budget: number): number {
  let bytes = 0;
  let i = text.length;
  while (i > 0) {
    const low = text.charCodeAt(i - 1);
    const pair = low >= 0xdc00 && low <= 0xdfff && i >= 2 && isHigh(text.charCodeAt(i - 2));
    const units = pair ? 2 : 1;
    const size = pair ? 4 : unitBytes(low);
    if (bytes + size > budget) break;
    bytes += size;
    i -= units;
  }
  return i;
}

function charAt(text: string, i: number): [bytes: number, units: number] {
  const code = text.charCodeAt(i);
  if (isHigh(code) && i + 1 < text.length) {
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return [4, 2];
  }
  return [unitBytes(code), 1];
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function unitBytes(code: number): number {
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  return 3;
}
