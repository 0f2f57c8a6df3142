/**
 * OpenAI's explicit cache breakpoints (GPT-5.6 and later; docs/decisions.md, OpenAI explicit
 * breakpoints): where `prompt_cache_breakpoint` goes, and which messages go as content parts so a
 * marker can sit on them. Pure, a function of the request alone, so replay places the same marks.
 *
 * GPT-5.6 writes the cache only at breakpoints (one implicit, at the latest user or tool message)
 * and does not fall back to the longest unmarked prefix, so a stable prefix followed by a changing
 * message reads nothing unless its end is marked (openai/codex #35300).
 */
import { estimateMessageTokens, estimateTextTokens } from '../core/estimate.js';
import type { NeutralMessage, NeutralRequest } from '../core/types.js';
import { placeholderSpan } from '../core/placeholder.js';

/** What a route sends: markers with mode `implicit` (the default), or `explicit` (no implicit write). */
export type PromptCacheMode = 'implicit' | 'explicit';

/** "Each request can write up to four breakpoints"; implicit mode keeps one for itself. */
export const MAX_MARKS = 3;

/** A prefix shorter than this is not cached (GPT-5.6+: 1,024 tokens), so a marker there only costs a write. */
const MIN_PREFIX_TOKENS = 1024;

export interface MarkPlan {
  /** Message indexes that carry a marker on their last part, ascending; at most MAX_MARKS. */
  marks: number[];
  /**
   * Message indexes sent as content parts: every place a marker can ever go (the system prefix's
   * end, the last user or tool message of each run). Decided by position alone, and a message's
   * position class never changes once an assistant reply follows it, so its bytes stay as first sent.
   */
  parts: Set<number>;
}

/**
 * (A) the end of the leading system prompt (after the tools in OpenAI's render order); (B) the last
 * user/tool message before the newest reply, where the previous request's implicit breakpoint was;
 * (C) the last user/tool message at or before the window's last elision placeholder, stable from
 * one trim to the next. Never an assistant message (OpenAI accepts no marker there).
 */
export function planMarks(req: NeutralRequest): MarkPlan {
  const msgs = req.messages;
  const parts = new Set<number>();
  let systemEnd = -1;
  while (msgs[systemEnd + 1]?.role === 'system') systemEnd++;
  if (systemEnd >= 0) parts.add(systemEnd);
  for (let i = systemEnd + 1; i < msgs.length; i++) {
    if (isInput(msgs[i]!) && (i === msgs.length - 1 || !isInput(msgs[i + 1]!))) parts.add(i);
  }
  const lastReply = msgs.findLastIndex((m) => m.role === 'assistant');
  const lastPlaceholder = msgs.findLastIndex((m) => placeholderSpan(m) !== undefined);
  const candidates = [
    systemEnd >= 0 && systemEnd < msgs.length - 1 ? systemEnd : -1,
    lastBoundaryBefore(parts, lastReply),
    lastBoundaryBefore(parts, lastPlaceholder + 1),
  ];
  const first = firstCacheable(req);
  const marks = [...new Set(candidates)].filter((i) => i >= first).sort((a, b) => a - b);
  return { marks: marks.slice(-MAX_MARKS), parts };
}

function isInput(m: NeutralMessage): boolean {
  return m.role === 'user' || m.role === 'tool';
}

/** The last part-form user/tool message with index below `end`; -1 when none. */
function lastBoundaryBefore(parts: ReadonlySet<number>, end: number): number {
  let best = -1;
  for (const i of parts) if (i < end && i > best) best = i;
  return best;
}

/**
 * The first message whose end closes a prefix (tools included) of MIN_PREFIX_TOKENS estimated
 * tokens; every later one does too, so the walk stops there rather than reading the whole request.
 */
function firstCacheable(req: NeutralRequest): number {
  let sum = req.tools.length === 0 ? 0 : estimateTextTokens(JSON.stringify(req.tools));
  for (let i = 0; i < req.messages.length; i++) {
    sum += estimateMessageTokens(req.messages[i]!);
    if (sum >= MIN_PREFIX_TOKENS) return i;
  }
  return req.messages.length;
}

/** The mode that goes on the wire: never `explicit` without a marker (it would turn caching off). */
export function sentMode(asked: PromptCacheMode, plan: MarkPlan): PromptCacheMode {
  return asked === 'explicit' && plan.marks.length > 0 ? 'explicit' : 'implicit';
}
