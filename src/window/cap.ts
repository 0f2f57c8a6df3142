/**
 * Tool results over the cap are shown head and tail (docs/decisions.md, Named cuts of large
 * results): cut at line ends, with a marker line naming the lines left out, 1-based, of the
 * result. Head and tail each get about half the cap. A result with no line end to cut at (or
 * whose lines are each longer than half the cap, so a line cut would keep nothing) is cut at
 * character boundaries and says roughly how much it left out. Deterministic: the same text and
 * cap always give the same bytes, so the memoised rendering and replay agree.
 */
import { estimateTextTokens, utf8Length } from '../core/estimate.js';

export function capToolResult(content: string, maxTokens: number): string {
  if (estimateTextTokens(content) <= maxTokens) return content;
  // bytes/3 estimator: half the cap in tokens is this many UTF-8 bytes on each side.
  const sideBytes = Math.max(0, Math.floor((maxTokens * 3) / 2));
  return cutAtLines(content, sideBytes) ?? cutAtChars(content, sideBytes);
}

/** The marker line a line cut writes; exported for tests and for `proxy diff` readers. */
export function omittedLinesMarker(first: number, last: number, total: number): string {
  return `[lines ${first}-${last} of ${total} omitted]`;
}

function cutAtLines(content: string, sideBytes: number): string | undefined {
  // A final newline ends the last line; it does not start an empty one.
  const trailing = content.endsWith('\n');
  const body = trailing ? content.slice(0, -1) : content;
  if (!body.includes('\n')) return undefined;
  const lines = body.split('\n');
  const total = lines.length;

  let head = 0;
  let used = 0;
  while (head < total) {
    const bytes = utf8Length(lines[head]!) + 1;
    if (used + bytes > sideBytes) break;
    used += bytes;
    head++;
  }
  let tail = 0;
  used = 0;
  while (tail < total - head) {
    const bytes = utf8Length(lines[total - 1 - tail]!) + 1;
    if (used + bytes > sideBytes) break;
    used += bytes;
    tail++;
  }
  if (head === 0 && tail === 0) return undefined;
  if (head + tail >= total) return content;
  const kept = [...lines.slice(0, head), omittedLinesMarker(head + 1, total - tail, total), ...lines.slice(total - tail)];
  return kept.join('\n') + (trailing ? '\n' : '');
}

function cutAtChars(content: string, sideBytes: number): string {
  const headEnd = prefixEnd(content, sideBytes);
  const tailStart = Math.max(headEnd, suffixStart(content, sideBytes));
  const omitted = content.slice(headEnd, tailStart);
  return `${content.slice(0, headEnd)}\n[about ${estimateTextTokens(omitted)} tokens omitted]\n${content.slice(tailStart)}`;
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
