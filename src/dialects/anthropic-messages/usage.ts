/**
 * Anthropic usage -> core `Usage`. `input_tokens` is only the prompt after the last cache
 * breakpoint: the whole prompt is it plus what was written to and read from the cache (SDK,
 * `Usage`: "Total input tokens in a request is the summation of ..."). A figure not reported stays
 * absent; a reported 0 stays 0.
 */
import type { Usage } from '../../core/types.js';
import { asNumber, asObject, type JsonObject } from '../wire-read.js';

export function usageFromWire(raw: unknown): Usage | undefined {
  const u = asObject(raw);
  if (u === undefined) return undefined;
  const input = asNumber(u.input_tokens);
  const written = asNumber(u.cache_creation_input_tokens);
  const read = asNumber(u.cache_read_input_tokens);

  const out: Usage = {};
  const set = (key: keyof Usage, value: number | undefined): void => {
    if (value !== undefined) out[key] = value;
  };
  set('prompt_tokens', input === undefined ? undefined : input + (written ?? 0) + (read ?? 0));
  set('cached_tokens', read);
  set('cache_write_tokens', written);
  set('cache_write_1h_tokens', asNumber(asObject(u.cache_creation)?.ephemeral_1h_input_tokens));
  set('completion_tokens', asNumber(u.output_tokens));
  set('reasoning_tokens', asNumber(asObject(u.output_tokens_details)?.thinking_tokens));
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * A stream reports usage twice: `message_start` (input and cache figures, `cache_creation`, an
 * early `output_tokens`) and `message_delta` (cumulative figures, some of them null). Each field
 * keeps its latest non-null value, so the merge reads as the non-stream `usage` would.
 */
export function mergeUsage(into: JsonObject, raw: unknown): boolean {
  const u = asObject(raw);
  if (u === undefined) return false;
  for (const [key, value] of Object.entries(u)) {
    if (value !== null && value !== undefined) into[key] = value;
  }
  return true;
}
