/**
 * Shapes on the openai-chat wire, kept apart from the neutral types (src/core/types.ts) and
 * converted in one place per direction: `encode-request.ts` builds the request shapes,
 * `decode-reply.ts` reads the reply shapes (the stream decoder assembles into the same shape).
 *
 * Request shapes are exact: the encoder writes them. Reply shapes are what upstreams are known to
 * send; every field is optional and read through `wire-read.ts`, since servers differ.
 */

// ---- request (proxy -> upstream) ----

/** GPT-5.6+: "Marks the exact end of a reusable prompt prefix" (openai-node, ChatCompletionContentPartText). */
export interface WireCacheBreakpoint {
  mode: 'explicit';
}

export interface WireTextPart {
  type: 'text';
  text: string;
  prompt_cache_breakpoint?: WireCacheBreakpoint;
}

export interface WireImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
  prompt_cache_breakpoint?: WireCacheBreakpoint;
}

export type WireContentPart = WireTextPart | WireImagePart;

/** Gemini (OpenAI-compatible endpoint) carries a call's thought signature here, on the call. */
export interface WireExtraContent {
  google: { thought_signature: unknown };
}

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  extra_content?: WireExtraContent;
}

export interface WireSystemMessage {
  role: 'system';
  /** Parts only where a cache breakpoint can go (cache-hints/openai-breakpoints.ts). */
  content: string | WireTextPart[];
}

export interface WireUserMessage {
  role: 'user';
  content: string | WireContentPart[];
}

export interface WireAssistantMessage {
  role: 'assistant';
  content: string | null;
  /** DeepSeek, SGLang, most compatible servers. */
  reasoning_content?: string;
  /** Cerebras (which refuses reasoning_content), vLLM, Ollama /v1. */
  reasoning?: string;
  /** OpenRouter: the reply's reasoning_details array, sent back unchanged and alone. */
  reasoning_details?: unknown;
  tool_calls?: WireToolCall[];
}

export interface WireToolMessage {
  role: 'tool';
  tool_call_id: string;
  /** Parts only where a cache breakpoint can go: a string cannot carry one. */
  content: string | WireTextPart[];
}

export type WireMessage = WireSystemMessage | WireUserMessage | WireAssistantMessage | WireToolMessage;

// ---- reply (upstream -> proxy), non-stream `message` and stream `delta` alike ----

export interface WireReplyToolCall {
  /** Stream only: which call a fragment belongs to. Some servers omit it. */
  index?: number;
  id?: string | null;
  type?: string;
  function?: { name?: string | null; arguments?: unknown };
  extra_content?: { google?: { thought_signature?: unknown } } | null;
}

export interface WireReplyMessage {
  role?: string;
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  reasoning_details?: unknown[] | null;
  tool_calls?: WireReplyToolCall[] | null;
  refusal?: string | null;
}

export interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  /** DeepSeek: cached prompt tokens (prompt_tokens = hit + miss). */
  prompt_cache_hit_tokens?: number;
  prompt_cache_miss_tokens?: number;
  /** SGLang: reasoning tokens at the top level. */
  reasoning_tokens?: number;
  /** OpenRouter: what the request cost, in credits (USD). */
  cost?: number;
}

export interface WireChoice {
  index?: number;
  message?: WireReplyMessage;
  delta?: WireReplyMessage;
  finish_reason?: string | null;
}

/** A `chat.completion` body or a `chat.completion.chunk` event. */
export interface WireCompletion {
  id?: string;
  object?: string;
  model?: string;
  choices?: WireChoice[];
  usage?: WireUsage | null;
  /** A mid-stream error (OpenRouter, OpenAI), or an error body sent with status 200. */
  error?: unknown;
}

// ---- client side (proxy -> its clients), what the official `openai` SDK parses ----

export interface ClientUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

export interface ClientToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ClientFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ClientCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: 0;
    message: {
      role: 'assistant';
      content: string | null;
      refusal: null;
      /** The model's thinking, shown to clients in the field most of them read. */
      reasoning_content?: string;
      tool_calls?: ClientToolCall[];
    };
    logprobs: null;
    finish_reason: ClientFinishReason;
  }[];
  usage: ClientUsage;
}

export interface ClientToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

export interface ClientDelta {
  role?: 'assistant';
  content?: string;
  reasoning_content?: string;
  tool_calls?: ClientToolCallDelta[];
}

export interface ClientChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: 0; delta: ClientDelta; logprobs: null; finish_reason: ClientFinishReason | null }[];
  /** `null` on every chunk but the last when the client asked for usage (as OpenAI does); else absent. */
  usage?: ClientUsage | null;
}
