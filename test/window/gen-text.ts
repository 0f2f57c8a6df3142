/**
 * Deterministic text for generated sessions: a seeded PRNG, sentences, multi-line tool output,
 * and opaque reasoning blocks shaped as each origin returns them.
 */
import type { OpaqueBlock, Origin } from '../../src/core/types.js';
import { mulberry32 } from '../../src/core/prng.js';

export { mulberry32 };

export type Rng = () => number;


const WORDS = [
  'the', 'window', 'cache', 'prefix', 'request', 'reply', 'tool', 'result', 'file', 'line', 'test', 'build', 'fix',
  'error', 'module', 'function', 'value', 'session', 'log', 'digest', 'elided', 'trim', 'model', 'origin', 'block',
  'résumé', 'naïve', 'größe', '日本', '🙂',
];

export function sentence(rng: Rng, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(rng() * WORDS.length)]!);
  return out.join(' ') + '.';
}

/** A tool's multi-line output, e.g. a file read. */
export function largeResult(rng: Rng, lines: number): string {
  const out: string[] = [];
  for (let i = 1; i <= lines; i++) out.push(`${String(i).padStart(4)}| ${sentence(rng, 3 + Math.floor(rng() * 8))}`);
  return out.join('\n') + (rng() < 0.5 ? '\n' : '');
}

/** Output with no line end to cut at (minified JSON, a base64 blob). */
export function longLine(rng: Rng, chars: number): string {
  let s = '';
  while (s.length < chars) s += Math.floor(rng() * 1e9).toString(36);
  return s.slice(0, chars);
}

export function blocksFor(origin: Origin, thinking: string, n: number): OpaqueBlock[] {
  if (origin.provider === 'anthropic') {
    return [
      { kind: 'anthropic.thinking', origin, data: { type: 'thinking', thinking, signature: `sig-${n}-${thinking.length}` }, before_call: 0 },
      ...(n % 3 === 0 ? [{ kind: 'anthropic.redacted_thinking' as const, origin, data: { type: 'redacted_thinking', data: `enc-${n}` }, before_call: 0 }] : []),
    ];
  }
  return [{ kind: 'openrouter.reasoning_details', origin, data: [{ type: 'reasoning.text', text: thinking, index: 0 }, { type: 'reasoning.encrypted', data: `b64-${n}`, index: 1 }] }];
}
