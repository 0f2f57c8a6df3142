/**
 * Ollama's native chat wire (`POST /api/chat`), as Ollama's `api/types.go` (ChatRequest, Message,
 * ToolCall, Options, ChatResponse, Metrics) and `docs/api.md` describe it. Only the fields this
 * dialect writes or reads.
 */

export interface OllamaToolCall {
  /** Newer servers name their calls; older ones do not (the dialect then makes an id). */
  id?: string;
  function: {
    /** Some servers number the calls of a reply. */
    index?: number;
    name: string;
    /** An object, not JSON text as on the OpenAI wires. */
    arguments: Record<string, unknown>;
  };
}

export interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Base64 image bytes, no data-URL prefix. */
  images?: string[];
  /** "The model's thinking process", given back on assistant turns. */
  thinking?: string;
  tool_calls?: OllamaToolCall[];
  /** On a tool result: the function it answers. */
  tool_name?: string;
  /** On a tool result: the call it answers (newer servers). */
  tool_call_id?: string;
}

export interface OllamaTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: unknown };
}

/** `think`: a switch, or a level for the models that take levels (GPT-OSS takes only levels). */
export type OllamaThink = boolean | 'low' | 'medium' | 'high' | 'max';

/** The options this dialect sets (`api/types.go` `Options` and `Runner`). */
export interface OllamaOptions {
  num_ctx?: number;
  num_predict?: number;
  temperature?: number;
  top_p?: number;
  seed?: number;
  stop?: string[];
  presence_penalty?: number;
  frequency_penalty?: number;
}

export interface OllamaChatRequest {
  model: string;
  messages: OllamaMessage[];
  tools?: unknown[];
  think?: OllamaThink;
  /** "json", or a JSON schema. */
  format?: unknown;
  options: OllamaOptions;
  keep_alive: string | number;
  /** false: a prompt over num_ctx is an error instead of being cut silently (the window trims). */
  truncate: false;
  stream: boolean;
}

/** One NDJSON line of a stream, or the whole non-stream body. Durations in nanoseconds. */
export interface OllamaChatChunk {
  model?: string;
  created_at?: string;
  message?: {
    role?: string;
    content?: string;
    thinking?: string;
    tool_calls?: OllamaToolCall[];
  };
  done?: boolean;
  /** "stop", "length", "load", "unload". */
  done_reason?: string;
  total_duration?: number;
  load_duration?: number;
  /** Current runners include cached prompt tokens in this count (Ollama's llama-server runner). */
  prompt_eval_count?: number;
  /** Covers only the tokens evaluated, not those read from the KV cache. */
  prompt_eval_duration?: number;
  eval_count?: number;
  eval_duration?: number;
  /** An error body, or a mid-stream error line (the HTTP status stays 200). */
  error?: string;
}
