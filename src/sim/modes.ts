/**
 * What each simulated upstream does differently, in one table, so no other file branches on a
 * mode's name: where reasoning goes out and must come back, which history fields it rejects or
 * requires, and which usage fields it reports (each provider's own API documentation: OpenAI,
 * OpenRouter, DeepSeek, Cerebras, Gemini). Rules that need more than a flag (OpenRouter's
 * reasoning_details, Gemini's thought signatures) are a `ModeRules` of their own, made per
 * simulator.
 */
import { geminiRules } from './gemini.js';
import type { ModeRules } from './mode-rules.js';
import { openrouterRules, openrouterUsage } from './openrouter.js';
import { checkDeepSeekParams, checkOpenAIChatParams } from './openai-params.js';
import type { SimMode } from './types.js';

export type ReasoningField = 'reasoning_content' | 'reasoning';

/** Every field a client might give reasoning back in; used to tell "wrong field" from "missing". */
export const REASONING_FIELDS = ['reasoning_content', 'reasoning', 'thinking'] as const;

export interface UsageCounts {
  prompt: number;
  cached: number;
  /** Tokens written to the cache because the request asked (0 where the cache fills by itself). */
  cacheWrite: number;
  completion: number;
  reasoning: number;
}

export interface ModeSpec {
  mode: SimMode;
  /** Field of the reply (message and delta) that carries thinking. */
  replyField: ReasoningField;
  /** Every reply has thinking (generated when the request asks for none). */
  alwaysThinks: boolean;
  /** Field the reasoning must come back in on later requests. */
  backField: ReasoningField;
  /** Cerebras: any message with `reasoning_content` is a 400 `wrong_api_format`. */
  rejectsReasoningContent: boolean;
  /** DeepSeek V4 thinking mode: an assistant turn with tool calls must carry `reasoning_content`. */
  requiresReasoningOnToolTurns: boolean;
  /**
   * GPT-5.6 and later: the cache works at breakpoints (prompt-breakpoints.ts) and the request may
   * carry `prompt_cache_options` and `prompt_cache_breakpoint`, which every other mode answers
   * with a 400 (cache-fields.ts).
   */
  breakpoints: boolean;
  usage(u: UsageCounts): Record<string, unknown>;
  /** Throws the 400 the mode's server answers to a parameter it refuses (openai-params.ts). */
  checkParams(body: Record<string, unknown>, model: string): void;
  /** The mode's own rules, made once per simulator (they remember the replies they made). */
  rules?: () => ModeRules;
}

function openaiUsage(u: UsageCounts): Record<string, unknown> {
  return {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion,
    total_tokens: u.prompt + u.completion,
    prompt_tokens_details: { cached_tokens: u.cached },
    completion_tokens_details: { reasoning_tokens: u.reasoning },
  };
}

/** Modes whose servers refuse none of the parameters docs/wires.md lists (OpenRouter and Gemini drop what a model lacks). */
function acceptsAll(): void {}

export const MODES: Record<SimMode, ModeSpec> = {
  // GPT-5.6 and later: writes are reported (and billed at 1.25x input) beside the reads.
  gpt56: {
    mode: 'gpt56',
    checkParams: checkOpenAIChatParams,
    replyField: 'reasoning_content',
    alwaysThinks: false,
    backField: 'reasoning_content',
    rejectsReasoningContent: false,
    requiresReasoningOnToolTurns: false,
    breakpoints: true,
    usage: (u) => {
      const usage = openaiUsage(u);
      usage.prompt_tokens_details = { cached_tokens: u.cached, cache_write_tokens: u.cacheWrite };
      return usage;
    },
  },
  openai: {
    mode: 'openai',
    checkParams: checkOpenAIChatParams,
    replyField: 'reasoning_content',
    alwaysThinks: false,
    backField: 'reasoning_content',
    rejectsReasoningContent: false,
    requiresReasoningOnToolTurns: false,
    breakpoints: false,
    usage: openaiUsage,
  },
  deepseek: {
    mode: 'deepseek',
    checkParams: checkDeepSeekParams,
    replyField: 'reasoning_content',
    alwaysThinks: true,
    backField: 'reasoning_content',
    rejectsReasoningContent: false,
    requiresReasoningOnToolTurns: true,
    breakpoints: false,
    // DeepSeek reports hits and misses, and (as far as known) not prompt_tokens_details.
    usage: (u) => ({
      prompt_tokens: u.prompt,
      completion_tokens: u.completion,
      total_tokens: u.prompt + u.completion,
      prompt_cache_hit_tokens: u.cached,
      prompt_cache_miss_tokens: u.prompt - u.cached,
      completion_tokens_details: { reasoning_tokens: u.reasoning },
    }),
  },
  cerebras: {
    mode: 'cerebras',
    checkParams: acceptsAll,
    replyField: 'reasoning',
    alwaysThinks: true,
    backField: 'reasoning',
    rejectsReasoningContent: true,
    requiresReasoningOnToolTurns: false,
    breakpoints: false,
    usage: openaiUsage,
  },
  // OpenRouter: `reasoning` text plus `reasoning_details`, which must come back unchanged or not
  // at all; `usage.cost`; Claude models cache only when asked (openrouter.ts).
  openrouter: {
    mode: 'openrouter',
    checkParams: acceptsAll,
    replyField: 'reasoning',
    alwaysThinks: true,
    backField: 'reasoning',
    rejectsReasoningContent: false,
    requiresReasoningOnToolTurns: false,
    breakpoints: false,
    usage: openrouterUsage,
    rules: openrouterRules,
  },
  // Gemini's OpenAI endpoint: a thought signature on the first call of each reply, required back
  // in the current turn (gemini.ts); thought text only when the request asks for it.
  gemini: {
    mode: 'gemini',
    checkParams: acceptsAll,
    replyField: 'reasoning_content',
    alwaysThinks: false,
    backField: 'reasoning_content',
    rejectsReasoningContent: false,
    requiresReasoningOnToolTurns: false,
    breakpoints: false,
    usage: openaiUsage,
    rules: geminiRules,
  },
};
