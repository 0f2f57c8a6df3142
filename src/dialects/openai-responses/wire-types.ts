/**
 * OpenAI's Responses wire (`POST /v1/responses`), as openai-node `src/resources/responses/
 * responses.ts` types it; see OpenAI's Responses API reference. Only the fields this
 * dialect writes or reads.
 */

/** GPT-5.6+: the end of a reusable prompt prefix (openai-node, ResponseInputText). */
export interface CacheBreakpoint {
  mode: 'explicit';
}

export interface InputText {
  type: 'input_text';
  text: string;
  prompt_cache_breakpoint?: CacheBreakpoint;
}

export interface InputImage {
  type: 'input_image';
  /** A data URL. */
  image_url: string;
  /** Required by the API's types; "auto" when the client named none. */
  detail: 'auto' | 'low' | 'high';
  prompt_cache_breakpoint?: CacheBreakpoint;
}

export interface OutputText {
  type: 'output_text';
  text: string;
}

export interface MessageItem {
  type: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: (InputText | InputImage | OutputText)[];
}

export interface FunctionCallItem {
  type: 'function_call';
  call_id: string;
  name: string;
  /** JSON text, as the model wrote it. */
  arguments: string;
}

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  call_id: string;
  /** Parts only where a cache breakpoint can go: a string cannot carry one. */
  output: string | InputText[];
}

/**
 * A reasoning item given back. Its `id` is left out: with `store: false` nothing is kept server
 * side, and an echoed id is answered "Item with id 'rs_...' not found" (Codex sends none either).
 */
export interface ReasoningInputItem {
  type: 'reasoning';
  summary: unknown[];
  content?: unknown[];
  encrypted_content: string;
}

export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningInputItem;

export interface FunctionTool {
  type: 'function';
  name: string;
  description?: string;
  parameters: unknown;
  /** The API defaults to true; a chat-completions tool is strict only when it says so. */
  strict: boolean;
}

export interface ReasoningParam {
  effort?: string;
  summary?: 'auto' | 'concise' | 'detailed';
  /** "all_turns" keeps earlier turns' reasoning in the prompt (docs/decisions.md, Responses keep_reasoning). */
  context?: 'auto' | 'current_turn' | 'all_turns';
}

export interface ResponsesRequest {
  model: string;
  instructions?: string;
  input: InputItem[];
  tools?: FunctionTool[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  temperature?: number;
  top_p?: number;
  max_output_tokens?: number;
  /** `format` from the request's response_format; other keys (`verbosity`) as the client sent them. */
  text?: { format?: unknown; [key: string]: unknown };
  reasoning?: ReasoningParam;
  include?: string[];
  store: false;
  prompt_cache_key?: string;
  /** GPT-5.6+: `implicit` (the default) or `explicit` (only the marked breakpoints are written). */
  prompt_cache_options?: { mode: 'implicit' | 'explicit' };
  stream?: true;
}

/** `ResponseUsage`. */
export interface ResponsesUsage {
  input_tokens?: number;
  input_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  output_tokens?: number;
  output_tokens_details?: { reasoning_tokens?: number } | null;
  total_tokens?: number;
}

/** A `response` object: the non-stream body, and inside response.created/completed/failed events. */
export interface ResponsesResponse {
  id?: string;
  object?: 'response';
  model?: string;
  status?: 'completed' | 'incomplete' | 'failed' | 'in_progress' | 'queued' | 'cancelled';
  output?: unknown[];
  usage?: ResponsesUsage | null;
  incomplete_details?: { reason?: 'max_output_tokens' | 'content_filter' | string } | null;
  error?: { code?: string; message?: string } | null;
}

/** Stream events this dialect reads (each SSE `data` repeats its `type`). */
export type ResponsesStreamEvent =
  | { type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed'; response: ResponsesResponse }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: { type: string; id?: string } }
  | { type: 'response.output_text.delta' | 'response.refusal.delta'; item_id: string; output_index: number; content_index: number; delta: string }
  | { type: 'response.reasoning_summary_text.delta'; item_id: string; output_index: number; summary_index: number; delta: string }
  | { type: 'response.function_call_arguments.delta'; item_id: string; output_index: number; delta: string }
  | { type: 'response.function_call_arguments.done'; item_id: string; output_index: number; arguments: string }
  | { type: 'error'; code?: string | null; message?: string; param?: string | null };
