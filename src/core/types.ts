/**
 * Provider-neutral request and reply. Every dialect converts to and from these in one place;
 * the window builds `NeutralRequest`s and the digest is taken over them, never over wire bytes.
 */

/** Where an opaque reasoning block came from: it may only ever go back to the same origin. */
export interface Origin {
  /** Provider name from config, or `base_url#credential-fingerprint` for an unnamed provider. */
  provider: string;
  /** The upstream model id that produced the block. */
  model: string;
}

/**
 * Reasoning a provider returned in a form only it can read again (signed, encrypted, or bound to
 * its prefix). Kept exactly as given in `data`; nothing reads it field by field.
 */
export interface OpaqueBlock {
  kind:
    | 'anthropic.thinking'
    | 'anthropic.redacted_thinking'
    | 'openrouter.reasoning_details'
    | 'responses.reasoning'
    | 'gemini.thought_signature';
  origin: Origin;
  /** The block as the provider gave it (a JSON value). */
  data: unknown;
  /**
   * Where the block stood among the reply's parts: the number of tool calls that came before it.
   * Lets a dialect put each block back where it was (Anthropic checks the order).
   */
  before_call?: number;
  /**
   * The provider does not bind the block to what came before it (Gemini's thought signatures), so
   * it still goes back after an earlier entry was elided or summarised; without this, a reply made
   * before such a change goes back without its blocks.
   */
  unbound?: true;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the JSON text the model produced; never re-serialised. */
  arguments: string;
}

/** A tool as first seen in the session, kept in the client's own key order (frozen catalog). */
export interface ToolSpec {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters?: unknown;
    strict?: boolean;
  };
}

export interface TextPart {
  type: 'text';
  text: string;
}

/** An image held in the data directory's blob store under its SHA-256; the log never holds pixels. */
export interface ImagePart {
  type: 'image';
  sha256: string;
  mime: string;
  /** The window's estimate for this image (85 + 170 per 512-px tile after scaling). */
  tokens: number;
  detail?: 'auto' | 'low' | 'high';
}

export type ContentPart = TextPart | ImagePart;

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: string | ContentPart[];
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  /** The model's reasoning text, given back in the field the dialect names. */
  thinking?: string;
  /** Origin-bound opaque reasoning; only present in a request to the same origin. */
  blocks?: OpaqueBlock[];
  tool_calls?: ToolCall[];
}

export interface ToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export type NeutralMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
export type Role = NeutralMessage['role'];

/** Per-request parameters passed through from the client (after validation). */
export interface RequestParams {
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  seed?: number;
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  response_format?: unknown;
  reasoning_effort?: string;
  /** Responses' `reasoning.summary` as the client asked for it (`auto`, `concise`, `detailed`). */
  reasoning_summary?: string;
  presence_penalty?: number;
  frequency_penalty?: number;
  /**
   * Fields of the client's request the proxy does not read (`user`, `metadata`, `service_tier`,
   * ...), sorted by name: passed on to an upstream of the same wire, dropped for any other
   * (docs/inbound.md). Part of the digest, so replay rebuilds them. `dropped`: fields the route's
   * server refuses (its preset's list), taken out before the request was logged and sent.
   */
  extra?: { wire: string; fields: Record<string, unknown>; dropped?: string[] };
  /**
   * Parameters above the client gave that the route's model refuses on this request (an OpenAI
   * reasoning model's sampling fields), taken out before the request was logged and sent
   * (docs/wires.md). Absent: none.
   */
  dropped?: string[];
}

/**
 * The request the window builds. Key names are chosen so that, in canonical (sorted-key) JSON,
 * `messages` comes first: the digest of the stable prefix can then be carried from one request to
 * the next (see `core/canonical.ts`).
 */
export interface NeutralRequest {
  messages: NeutralMessage[];
  /** Upstream model id. */
  model: string;
  params: RequestParams;
  tools: ToolSpec[];
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error';

/**
 * Normalised usage. A field the provider did not report is absent: unknown is never 0.
 * `prompt_tokens` is the whole prompt, cached and cache-written tokens included.
 */
export interface Usage {
  prompt_tokens?: number;
  cached_tokens?: number;
  cache_write_tokens?: number;
  /** The part of `cache_write_tokens` written with a one-hour TTL. */
  cache_write_1h_tokens?: number;
  completion_tokens?: number;
  reasoning_tokens?: number;
  /** Cost the provider reported (OpenRouter), USD. */
  cost_usd?: number;
  /** Prompt evaluation time the provider reported (Ollama), ms. */
  prompt_eval_ms?: number;
}

export interface NeutralReply {
  content: string | null;
  thinking?: string;
  blocks?: OpaqueBlock[];
  tool_calls?: ToolCall[];
  finish_reason: FinishReason | null;
  usage?: Usage;
  /** Model id the upstream reported, if any. */
  model?: string;
  /**
   * Signed reasoning blocks of the request the upstream left out as invalid (Anthropic's
   * `input_transformations` entries of type `thinking_dropped`; docs/decisions/0009). Absent: none said.
   */
  dropped_blocks?: number;
}
