/**
 * openai-chat usage -> core `Usage`. Upstreams on this wire put the same figures in different
 * places (see each provider's own usage documentation); a figure nobody reported stays
 * absent, and a reported 0 stays 0.
 */
import type { Usage } from '../../core/types.js';
import { asNumber, asObject } from '../wire-read.js';

export function usageFromWire(raw: unknown): Usage | undefined {
  const u = asObject(raw);
  if (u === undefined) return undefined;
  const prompt = asObject(u.prompt_tokens_details);
  const completion = asObject(u.completion_tokens_details);

  const out: Usage = {};
  const set = (key: keyof Usage, value: number | undefined): void => {
    if (value !== undefined) out[key] = value;
  };
  set('prompt_tokens', asNumber(u.prompt_tokens));
  // DeepSeek's own field first: it also sends prompt_tokens_details.cached_tokens, and replies were
  // seen with it 0, so where both are present the native one is trusted. Everyone else (OpenAI,
  // OpenRouter, vLLM, SGLang, xAI, Groq) reports only cached_tokens.
  set('cached_tokens', asNumber(u.prompt_cache_hit_tokens) ?? asNumber(prompt?.cached_tokens));
  set('cache_write_tokens', asNumber(prompt?.cache_write_tokens));
  set('completion_tokens', asNumber(u.completion_tokens));
  // SGLang also puts reasoning_tokens at the top level.
  set('reasoning_tokens', asNumber(completion?.reasoning_tokens) ?? asNumber(u.reasoning_tokens));
  set('cost_usd', asNumber(u.cost));
  return Object.keys(out).length > 0 ? out : undefined;
}
