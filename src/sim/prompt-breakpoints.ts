/**
 * GPT-5.6's prompt cache, as OpenAI documents it (docs/decisions.md, OpenAI explicit breakpoints;
 * the SDK's `prompt_cache_options` and `prompt_cache_breakpoint`, and the prompt caching guide):
 * - an entry is an exact prefix ending at a breakpoint, not rounded to 128-token blocks; 1,024
 *   tokens at least;
 * - writes: implicit mode writes one implicit breakpoint, at the end of the latest user or tool
 *   message, and the latest three explicit markers; explicit mode the latest four markers, and
 *   with none the request does not use the cache at all;
 * - reads: the longest cached prefix that ends at an eligible breakpoint: a marker of this request
 *   (the latest 80), or the end of a user or tool message where an earlier request's implicit
 *   breakpoint may have written (the latest 50). There is no fallback to an unmarked prefix, so a
 *   stable system prompt before a changing message reads nothing unless its end is marked
 *   (openai/codex #35300).
 */
import { createHash } from 'node:crypto';
import type { ReplicaCache } from './cache.js';
import { TOKEN_BYTES } from './tokens.js';

/** GPT-5.6+: "Minimum 1,024 tokens per cached prefix". */
export const MIN_PREFIX_TOKENS = 1024;
const WRITES = 4;
const MARKS_READ = 80;
const INPUTS_READ = 50;

/** A place in the rendered prompt where a breakpoint can stand (byte offset of its end). */
export interface Boundary {
  bytes: number;
  /** A `prompt_cache_breakpoint` ends here. */
  marked: boolean;
  /** The end of a user or tool message: where an implicit breakpoint goes. */
  input: boolean;
}

export interface BreakpointOutcome {
  cached: number;
  written: number;
}

export function tokensAt(bytes: number): number {
  return Math.ceil(bytes / TOKEN_BYTES);
}

/** Reads the longest cached eligible prefix, then writes the request's breakpoints, on one replica's cache. */
export function readAndWrite(
  cache: ReplicaCache, prompt: Buffer, boundaries: readonly Boundary[], mode: 'implicit' | 'explicit', now: number, ttlMs: number,
): BreakpointOutcome {
  const points = merge(boundaries).filter((b) => tokensAt(b.bytes) >= MIN_PREFIX_TOKENS);
  const marks = points.filter((b) => b.marked);
  if (mode === 'explicit' && marks.length === 0) return { cached: 0, written: 0 };
  const keys = prefixKeys(prompt, points);
  const inputs = points.filter((b) => b.input);
  const readable = [...new Set([...marks.slice(-MARKS_READ), ...inputs.slice(-INPUTS_READ)])].sort((a, b) => b.bytes - a.bytes);
  let cached = 0;
  for (const b of readable) {
    if (cache.read([keys.get(b)!], now, ttlMs) === 1) {
      cached = tokensAt(b.bytes);
      break;
    }
  }
  const implicit = mode === 'implicit' ? inputs.slice(-1) : [];
  const writes = [...new Set([...implicit, ...marks.slice(-(WRITES - implicit.length))])];
  let furthest = 0;
  for (const b of writes) {
    const key = keys.get(b)!;
    if (cache.read([key], now, ttlMs) === 1) continue;
    cache.write([key], now, ttlMs);
    furthest = Math.max(furthest, tokensAt(b.bytes));
  }
  // "A longer cache write does not bill the already cached tokens again" (the guide's example).
  return { cached, written: Math.max(0, furthest - cached) };
}

/** One boundary per offset, its flags joined, in prompt order. */
function merge(boundaries: readonly Boundary[]): Boundary[] {
  const byOffset = new Map<number, Boundary>();
  for (const b of boundaries) {
    const known = byOffset.get(b.bytes);
    byOffset.set(b.bytes, known === undefined ? { ...b } : { bytes: b.bytes, marked: known.marked || b.marked, input: known.input || b.input });
  }
  return [...byOffset.values()].sort((a, b) => a.bytes - b.bytes);
}

/** SHA-256 of the prompt's bytes up to each boundary: an entry names its whole prefix. */
function prefixKeys(prompt: Buffer, points: readonly Boundary[]): Map<Boundary, string> {
  const hash = createHash('sha256');
  const keys = new Map<Boundary, string>();
  let at = 0;
  for (const b of points) {
    hash.update(prompt.subarray(at, b.bytes));
    at = b.bytes;
    keys.set(b, hash.copy().digest('base64'));
  }
  return keys;
}
