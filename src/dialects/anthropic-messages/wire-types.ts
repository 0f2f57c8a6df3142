/**
 * Shapes on Anthropic's Messages wire (`POST /v1/messages`), kept apart from the neutral types and
 * converted in one place per direction: `encode-request.ts` builds the request shapes,
 * `decode-reply.ts` reads the reply (the stream decoder assembles the same content array).
 *
 * Sources: anthropics/anthropic-sdk-typescript `src/resources/messages/messages.ts` (2026) and
 * Anthropic's Messages API reference. Request shapes are exact: the encoder writes them.
 * Reply shapes list what the API sends; every field is read through `wire-read.ts`.
 */

// ---- request (proxy -> upstream) ----

/** `ttl` absent means five minutes; `1h` is generally available (no beta header since 2025-08). */
export interface WireCacheControl {
  type: 'ephemeral';
  ttl?: '1h';
}

export interface WireTextBlock {
  type: 'text';
  text: string;
  cache_control?: WireCacheControl;
}

export interface WireImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string };
  cache_control?: WireCacheControl;
}

export interface WireToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  /** Always a JSON object: the API refuses anything else. */
  input: Record<string, unknown>;
  cache_control?: WireCacheControl;
}

export interface WireToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  cache_control?: WireCacheControl;
}

/**
 * A thinking or redacted_thinking block as the API gave it (`{type, thinking, signature}` or
 * `{type, data}`), sent back unchanged. Never marked with `cache_control` (the API refuses that).
 */
export interface WireOpaqueBlock {
  type: 'thinking' | 'redacted_thinking';
  [field: string]: unknown;
}

export type WireContentBlock = WireTextBlock | WireImageBlock | WireToolUseBlock | WireToolResultBlock | WireOpaqueBlock;

/** Blocks that may carry a cache breakpoint. */
export type WireMarkableBlock = WireTextBlock | WireImageBlock | WireToolUseBlock | WireToolResultBlock | WireTool;

export interface WireMessageParam {
  role: 'user' | 'assistant';
  content: WireContentBlock[];
}

export interface WireTool {
  name: string;
  description?: string;
  input_schema: unknown;
  strict?: boolean;
  cache_control?: WireCacheControl;
}

export type WireToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

/** `budget_tokens` must be >= 1024 and below `max_tokens`. */
export type WireThinkingConfig = { type: 'enabled'; budget_tokens: number } | { type: 'adaptive' } | { type: 'disabled' };

export type WireEffort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

// ---- reply (upstream -> proxy) ----

export interface WireUsage {
  /** Only the prompt after the last cache breakpoint: the whole prompt is the sum of the three. */
  input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** Equal in sum to `cache_creation_input_tokens` (non-stream and `message_start` only). */
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number } | null;
  output_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

export type WireStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export type WireReplyBlock =
  | { type: 'text'; text: string; citations?: unknown }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  /** Server tools (web search, code execution) and later additions: not read. */
  | { type: string; [field: string]: unknown };

/** A `message` body, and the `message` of a stream's `message_start` event (content empty there). */
export interface WireMessage {
  id?: string;
  type?: 'message';
  role?: 'assistant';
  model?: string;
  content?: WireReplyBlock[];
  stop_reason?: WireStopReason | null;
  stop_sequence?: string | null;
  usage?: WireUsage;
}

/** Stream events (`RawMessageStreamEvent`, plus `ping` and `error`), by their `type`. */
export type WireStreamEvent =
  | { type: 'message_start'; message: WireMessage }
  | { type: 'content_block_start'; index: number; content_block: WireReplyBlock }
  | { type: 'content_block_delta'; index: number; delta: WireBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason?: WireStopReason | null; stop_sequence?: string | null }; usage?: WireUsage }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };

export type WireBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  /** Delivered whole, just before the block's `content_block_stop`. */
  | { type: 'signature_delta'; signature: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'citations_delta'; citation: unknown };
