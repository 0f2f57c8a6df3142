/**
 * Public shapes of the simulator: its options, what it records per request and its totals.
 * Wire shapes are not typed here on purpose: the simulator reads request JSON field by field
 * (request.ts), independently of src/dialects, so a proxy bug is not cancelled by shared code.
 */

/** Which upstream the simulator plays; see modes.ts for what each one changes. */
export type SimMode = 'openai' | 'gpt56' | 'deepseek' | 'cerebras' | 'openrouter' | 'gemini';
export const SIM_MODES: readonly SimMode[] = ['openai', 'gpt56', 'deepseek', 'cerebras', 'openrouter', 'gemini'];

/**
 * How a request without a session key picks a replica. `session`: keyless requests all share
 * one replica (the empty key's); `prefix`: hash of the first 256 tokens, as OpenAI documents;
 * `random`: a seeded PRNG, so a missing key really costs hits.
 */
export type SimRouting = 'session' | 'prefix' | 'random';
export const SIM_ROUTINGS: readonly SimRouting[] = ['session', 'prefix', 'random'];

export interface SimOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  replicas?: number;
  routing?: SimRouting;
  /** Seeds the PRNG of `random` routing (the only randomness in the simulator). */
  seed?: number;
  /** Mode of `/v1/...`; `/<mode>/v1/...` selects another mode per request. */
  mode?: SimMode;
  /** A prompt longer than this is a 400 `context_length_exceeded`. */
  contextTokens?: number;
  /** Cache block lifetime; refreshed on every read and write. */
  ttlMs?: number;
  /** LRU bound per replica. */
  maxBlocksPerReplica?: number;
  /** Time source in ms; `advance(ms)` adds to it. */
  clock?: () => number;
  /** A reply of ours sent back without its reasoning in the mode's field is a 400. */
  requireReasoning?: boolean;
  /** When set, any other bearer token is a 401. */
  apiKey?: string;
  /** Ids listed by `GET /v1/models`; any model name is accepted anyway. */
  models?: string[];
  /**
   * The Anthropic mode keys its message cache on `tool_choice`, thinking and effort too, as the API
   * does (default); `false` keys it on the prefix alone.
   */
  anthropicMessageCacheKeys?: boolean;
}

export interface ReasoningCounts {
  /** Assistant messages that match a reply of ours that had reasoning. */
  expected: number;
  /** ... whose reasoning came back in the mode's field, same text. */
  returned: number;
  /** ... whose reasoning did not come back (or came back changed). */
  missing: number;
  /** ... whose reasoning came back in another reasoning field. */
  wrongField: number;
}

/**
 * Opaque reasoning that must come back unchanged: OpenRouter's `reasoning_details`, Gemini's
 * thought signatures. Only the modes that make them count anything; a bad one is a 400 instead.
 */
export interface OpaqueCounts {
  /** Assistant messages of ours whose opaque reasoning came back unchanged. */
  returned: number;
  /** ... that came back without it (allowed where the upstream allows it). */
  dropped: number;
  /** ... that came back with it and with reasoning text beside it (`reasoning_content`, `reasoning`). */
  withText: number;
}

/** Where the session key came from, in the order they are read. */
export type SessionKeySource = 'prompt_cache_key' | 'x-session-id' | 'x-session-affinity';

export interface SimRecord {
  /** 1-based, in arrival order. */
  seq: number;
  path: string;
  mode: SimMode;
  model: string | null;
  /** null when the request was rejected before routing. */
  replica: number | null;
  sessionKey: string | null;
  sessionKeySource: SessionKeySource | null;
  promptTokens: number;
  cachedTokens: number;
  /** Tokens written to the cache as the mode reports them (GPT-5.6 and Claude via OpenRouter); 0 elsewhere. */
  cacheWriteTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  stream: boolean;
  status: number;
  /** The error code sent (status >= 400, or a mid-stream error), else null. */
  error: string | null;
  reasoning: ReasoningCounts;
  opaque: OpaqueCounts;
  /** What the reply cost (OpenRouter's `usage.cost`, USD); null where the mode reports none. */
  costUsd: number | null;
  /** Times from the simulator's clock (ms). */
  receivedAt: number;
  firstByteAt: number | null;
  finishedAt: number | null;
  /** The client closed the connection before the reply was complete. */
  closedEarly: boolean;
  closedAt: number | null;
}

export interface ReplicaStats {
  replica: number;
  requests: number;
  promptTokens: number;
  cachedTokens: number;
  /** Blocks held now (expired ones included until read or evicted). */
  blocks: number;
}

export interface SimStats {
  requests: number;
  /** Requests answered 200 (a mid-stream error included); in-flight ones count in neither. */
  ok: number;
  errors: number;
  /** Over routed requests only: a rejected request has no prompt as far as billing goes. */
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  replicas: ReplicaStats[];
  reasoning: ReasoningCounts;
  opaque: OpaqueCounts;
}
