/**
 * What a dialect needs to know about the upstream it encodes for. Resolved from config by
 * `src/config`; cache hints are computed by `src/cache-hints` and handed over as `WireHints`.
 */

export type WireFormat = 'openai-chat' | 'anthropic-messages' | 'ollama-chat' | 'openai-responses' | 'gemini';

/** How an assistant message's thinking text goes back on the openai-chat wire. */
export type ReasoningOut = 'reasoning_content' | 'reasoning' | 'none';

export interface DialectRoute {
  wire: WireFormat;
  /** Preset name (openai, deepseek, cerebras, ..., sim); dialects branch on options, not on this. */
  preset: string;
  /** Provider name from config: the origin of the blocks its replies carry. */
  provider: string;
  /** Upstream model id. */
  model: string;
  /** Base URL including any version path, e.g. `https://api.openai.com/v1`; the dialect adds its path. */
  baseUrl: string;
  reasoningOut: ReasoningOut;
  /** DeepSeek: an assistant message with tool calls must carry `reasoning_content`, even empty. */
  reasoningOnToolTurns: boolean;
  /** Extra headers from config (e.g. `anthropic-beta`). */
  headers: Record<string, string>;
  /**
   * openai-chat: the body field that carries `params.max_tokens`. OpenAI's reasoning models (o-series,
   * gpt-5) refuse `max_tokens` with a 400 and take `max_completion_tokens`; most compatible servers
   * know only `max_tokens`. Absent means `max_tokens`.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /**
   * openai-responses: ask for each reply's reasoning encrypted (`include`) and keep its reasoning
   * items as blocks to give back (`keep_reasoning`; docs/decisions.md, Responses keep_reasoning).
   * true: on every request; false: never, whatever the client asks; absent: when the client asks
   * for encrypted reasoning itself (Codex does).
   */
  keepReasoning?: boolean;
  /**
   * The route's `thinking` setting; a dialect with a switch for thinking reads it (Ollama's `think`;
   * Anthropic's `thinking`, where absent means the client's `reasoning_effort` decides).
   */
  thinking?: 'enabled' | 'disabled' | 'adaptive';
  /**
   * anthropic-messages: ask the API to drop signed thinking blocks whose prefix the window edited
   * (`thinking.block_binding`, beta `thinking-binding-controls-2026-08-01`) rather than leave them
   * out; set with `Recipe.stale_blocks = 'keep'` (docs/decisions/0009-stale-thinking-dropped-by-the-api.md).
   */
  dropStaleThinking?: boolean;
  /**
   * openai-chat: the upstream is Gemini's OpenAI endpoint serving Gemini 3 or later, which refuses a
   * step whose first call has no `extra_content.google.thought_signature`: one another model made
   * gets Google's stand-in (core/gemini-family.ts).
   */
  standInSignatures?: boolean;
  /** ollama-chat: `options.num_ctx`, the route's context. Kept constant: a change reloads the model. */
  numCtx?: number;
  /** ollama-chat: `keep_alive`, a duration ("30m") or seconds (-1: keep loaded); absent: the dialect's default. */
  keepAlive?: string | number;
}

/** Cache hints for one request, computed by `src/cache-hints`; wire-only, never in the digest. */
export interface WireHints {
  /** `sha256(lineage)` hex (docs/decisions.md, Lineage key), sent as `prompt_cache_key` when `bodyKey` is set. */
  sessionKey?: string;
  bodyKey: boolean;
  /** Affinity headers (already holding the session key). */
  headers: Record<string, string>;
  cacheControl?: 'ephemeral' | '1h';
  /**
   * Set with `cacheControl`: `top-level` for upstreams that read a top-level `cache_control`
   * (OpenRouter to Claude, Anthropic); `breakpoints` for explicit markers the dialect places
   * (see `cache-hints/breakpoints.ts`).
   */
  cacheControlAt?: 'top-level' | 'breakpoints';
  /**
   * OpenAI's GPT-5.6+ breakpoints (cache-hints/openai-breakpoints.ts): the dialect marks the stable
   * boundaries and sends `prompt_cache_options` with this mode (`explicit` only when it placed a
   * marker). Absent: neither field goes.
   */
  promptCache?: 'implicit' | 'explicit';
  /**
   * Gemini's explicit context cache (src/proxy/gemini-caches.ts): the `cachedContents` entry that
   * holds the system instruction, the tools and the request's first `messages` messages. The
   * dialect names it and leaves that part out of the body. Absent: the whole prompt goes.
   */
  geminiCache?: { name: string; messages: number };
}

export interface EncodedRequest {
  /** Path appended to the route's base URL, e.g. `/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  /** The wire body: text, or its UTF-8 bytes when the dialect assembles them from kept parts. */
  body: string | Buffer;
  /** Explicit cache breakpoints the dialect put on blocks (for `llm.req` hints); absent: none. */
  cacheBreakpoints?: number;
  /** OpenAI breakpoints: the mode sent and the message indexes marked (for `llm.req`, so replay can check them). */
  promptCache?: { mode: 'implicit' | 'explicit'; marks: number[] };
}
