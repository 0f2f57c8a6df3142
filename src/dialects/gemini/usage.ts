/**
 * `usageMetadata` <-> neutral Usage. Gemini counts the prompt with its cached part included
 * (`promptTokenCount`, `cachedContentTokenCount`) and the answer apart from the thoughts
 * (`candidatesTokenCount`, `thoughtsTokenCount`); the neutral completion holds both, its reasoning
 * the thoughts. The API leaves out a count that is zero, so with a prompt count present an absent
 * cached count is 0 (no hit), and an absent thoughts count 0; with no prompt count nothing is known.
 */
import type { Usage } from '../../core/types.js';
import { asNumber, asObject } from '../wire-read.js';
import type { WireUsageMetadata } from './wire-types.js';

export function usageFrom(raw: unknown): Usage | undefined {
  const u = asObject(raw);
  if (u === undefined) return undefined;
  const prompt = asNumber(u.promptTokenCount);
  const candidates = asNumber(u.candidatesTokenCount);
  const thoughts = asNumber(u.thoughtsTokenCount);
  const out: Usage = {};
  if (prompt !== undefined) {
    out.prompt_tokens = prompt;
    out.cached_tokens = asNumber(u.cachedContentTokenCount) ?? 0;
  }
  if (candidates !== undefined || thoughts !== undefined) {
    out.completion_tokens = (candidates ?? 0) + (thoughts ?? 0);
    out.reasoning_tokens = thoughts ?? 0;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** The neutral usage as a Gemini client reads it; counts the upstream did not give stay out. */
export function renderUsage(usage: Usage | undefined): WireUsageMetadata {
  const out: WireUsageMetadata = {};
  if (usage === undefined) return out;
  if (usage.prompt_tokens !== undefined) out.promptTokenCount = usage.prompt_tokens;
  if (usage.cached_tokens !== undefined && usage.cached_tokens > 0) out.cachedContentTokenCount = usage.cached_tokens;
  if (usage.completion_tokens !== undefined) out.candidatesTokenCount = usage.completion_tokens - (usage.reasoning_tokens ?? 0);
  if (usage.reasoning_tokens !== undefined && usage.reasoning_tokens > 0) out.thoughtsTokenCount = usage.reasoning_tokens;
  if (usage.prompt_tokens !== undefined || usage.completion_tokens !== undefined) out.totalTokenCount = (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0);
  return out;
}
