/**
 * Provider presets: one typed table. A preset names the wire format and the vendor's defaults
 * (address, key variable, where reasoning goes back, which affinity headers it reads, whether it
 * takes a session key in the body). Nothing outside this table tests a preset's name; dialects and
 * cache hints read these options from the resolved route.
 *
 * Sources: each provider's own API documentation, and docs/decisions.md (Reasoning fields per
 * server; Session keys and affinity headers; Anthropic caches only when asked).
 */
import type { ReasoningOut, WireFormat } from '../core/route.js';

/** How the session key reaches the upstream (docs/architecture.md section 7). */
export type CacheKeyMode = 'session' | 'header' | 'off';
export type CacheControlMode = 'off' | 'ephemeral' | '1h';
/** `[models] prompt_cache_breakpoints` (docs/decisions.md, OpenAI explicit breakpoints). */
export type PromptCacheSetting = 'auto' | 'off' | 'implicit' | 'explicit';

export interface Preset {
  wire: WireFormat;
  /** Default base URL including any version path; absent: the config must give one. */
  baseUrl?: string;
  /** Environment variable holding the key, read unless the provider says otherwise. */
  apiKeyEnv?: string;
  /** Environment variable holding the base URL (Ollama's `OLLAMA_HOST`). */
  baseUrlEnv?: string;
  /** With no config file, a provider of this preset is made when `apiKeyEnv` or `baseUrlEnv` is set. */
  fromEnv: boolean;
  /** Field an assistant message's thinking text goes back in; 'none': it does not go back as text. */
  reasoningOut: ReasoningOut;
  /** The upstream requires `reasoning_content` on every assistant message with tool calls. */
  reasoningOnToolTurns: boolean;
  /** Headers (lower case; HTTP names are case-insensitive) that carry the session key. */
  affinityHeaders: readonly string[];
  /** Default `cache_key`: `session` where the server takes `prompt_cache_key` or ignores unknown fields, `header` where it refuses them. */
  cacheKey: CacheKeyMode;
  /** Reads a top-level `cache_control` (OpenRouter to Claude, Anthropic); else the dialect places breakpoints. */
  topLevelCacheControl: boolean;
  /** Default `cache_control` for the preset's models. */
  cacheControl: CacheControlMode;
  /**
   * The server takes OpenAI's `prompt_cache_breakpoint` and `prompt_cache_options` for the models
   * that know them, so `auto` sends them there. Not the Codex backend, NVIDIA NIM or OpenRouter
   * (400s reported; docs/decisions.md, OpenAI explicit breakpoints).
   */
  explicitBreakpoints: boolean;
  /** A dialect for this wire format exists; routes to others fail at request time, the config still loads. */
  ready: boolean;
  /**
   * The model catalogue's provider id (pricing/catalogue.ts) whose context sizes and prices the
   * preset's models get; absent: a server that runs any model (Ollama, vLLM), which config sizes.
   */
  catalogue?: string;
  /** The GenAI semantic conventions' `gen_ai.provider.name` where it is not the preset's name. */
  genAi?: string;
  /**
   * Top-level request fields the server refuses with a 400, as its own documentation says: taken
   * out of the client's fields the proxy passes on (docs/inbound.md, Fields the proxy does not read).
   */
  refuses: readonly string[];
  /**
   * openai-chat: the field the output limit goes in (`[models] max_tokens_field` overrides it).
   * `by-model`: `max_completion_tokens` for OpenAI's reasoning models, `max_tokens` for others
   * (docs/wires.md, Output limits).
   */
  maxTokensField: 'max_tokens' | 'max_completion_tokens' | 'by-model';
  /**
   * The server applies OpenAI's rules for its reasoning models: while one reasons it refuses the
   * sampling fields, which the proxy then leaves out (docs/wires.md, OpenAI).
   */
  openaiModels: boolean;
  /** The server is Gemini's OpenAI endpoint: thought signatures ride on calls as `extra_content` (core/gemini-family.ts). */
  geminiCalls?: boolean;
}

const chat = {
  wire: 'openai-chat',
  fromEnv: true,
  reasoningOnToolTurns: false,
  affinityHeaders: [],
  cacheKey: 'session',
  topLevelCacheControl: false,
  cacheControl: 'off',
  explicitBreakpoints: false,
  ready: true,
  refuses: [],
  maxTokensField: 'max_tokens',
  openaiModels: false,
} as const satisfies Partial<Preset>;

export const PRESETS = {
  // OpenAI sends no reasoning in chat completions and refuses unknown message fields, so nothing
  // goes back; the body key is its own field (prompt_cache_key).
  // Every OpenAI model takes `max_completion_tokens`; its reasoning models refuse `max_tokens`.
  openai: {
    ...chat, baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', reasoningOut: 'none', catalogue: 'openai', explicitBreakpoints: true,
    maxTokensField: 'max_completion_tokens', openaiModels: true,
  },
  // OpenRouter reads `reasoning` and its alias `reasoning_content` (used in practice); its
  // own reasoning_details go back from their origin through the dialect. Sticky key: x-session-id,
  // with prompt_cache_key as its fallback.
  openrouter: {
    ...chat, baseUrl: 'https://openrouter.ai/api/v1', apiKeyEnv: 'OPENROUTER_API_KEY',
    reasoningOut: 'reasoning_content', affinityHeaders: ['x-session-id'], topLevelCacheControl: true, catalogue: 'openrouter',
  },
  // DeepSeek V4 thinking mode: reasoning_content is required on tool-call turns (a 400 without it).
  // Its reasoning model refuses logprobs and top_logprobs ("Setting logprobs, top_logprobs will
  // trigger an error", api-docs.deepseek.com/guides/reasoning_model); the proxy answers
  // `logprobs: null` whatever the upstream sent, so nothing is lost by leaving them out.
  deepseek: {
    ...chat, baseUrl: 'https://api.deepseek.com', apiKeyEnv: 'DEEPSEEK_API_KEY',
    reasoningOut: 'reasoning_content', reasoningOnToolTurns: true, refuses: ['logprobs', 'top_logprobs'], catalogue: 'deepseek',
  },
  // Cerebras answers 400 `wrong_api_format` to reasoning_content and accepts `reasoning`; it
  // validates fields strictly, so the key goes only as headers (it documents none).
  cerebras: {
    ...chat, baseUrl: 'https://api.cerebras.ai/v1', apiKeyEnv: 'CEREBRAS_API_KEY',
    reasoningOut: 'reasoning', cacheKey: 'header', catalogue: 'cerebras',
  },
  // vLLM renamed reasoning_content to `reasoning` (input: CustomChatCompletionMessageParam.reasoning);
  // it logs and ignores unknown request fields.
  vllm: { ...chat, baseUrl: 'http://127.0.0.1:8000/v1', fromEnv: false, reasoningOut: 'reasoning' },
  // SGLang reads reasoning_content on assistant messages. Its body `session_id` is its own
  // stateful-session feature, not an affinity key, so only prompt_cache_key is sent.
  sglang: { ...chat, baseUrl: 'http://127.0.0.1:30000/v1', fromEnv: false, reasoningOut: 'reasoning_content' },
  // Groq answers `reasoning` (reasoning_format parsed) and refuses unknown properties, reasoning_content
  // included ("property 'reasoning_content' is unsupported"); no affinity header is documented.
  // "logprobs, logit_bias, top_logprobs ... will result in a 400 error" (console.groq.com/docs/openai;
  // its other rule, n = 1, the chat endpoint enforces for every upstream).
  groq: {
    ...chat, baseUrl: 'https://api.groq.com/openai/v1', apiKeyEnv: 'GROQ_API_KEY',
    reasoningOut: 'reasoning', cacheKey: 'header', refuses: ['logit_bias', 'logprobs', 'top_logprobs'], catalogue: 'groq',
  },
  // xAI's message carries reasoning_content (grok-3-mini; xai-proto added it "to be passed back");
  // chat completions route by the x-grok-conv-id header (prompt_cache_key is documented for Responses).
  xai: {
    ...chat, baseUrl: 'https://api.x.ai/v1', apiKeyEnv: 'XAI_API_KEY',
    reasoningOut: 'reasoning_content', affinityHeaders: ['x-grok-conv-id'], cacheKey: 'header', catalogue: 'x-ai', genAi: 'x_ai',
  },
  // Fireworks serves DeepSeek/Qwen-style reasoning as reasoning_content; the cache is per replica,
  // routed by x-session-affinity, and prompt_cache_key is read too.
  fireworks: {
    ...chat, baseUrl: 'https://api.fireworks.ai/inference/v1', apiKeyEnv: 'FIREWORKS_API_KEY',
    reasoningOut: 'reasoning_content', affinityHeaders: ['x-session-affinity'], catalogue: 'fireworks',
  },
  // Together answers `reasoning`; it states there is no cache parameter or header, so nothing is
  // sent for the key (header mode with no headers).
  together: {
    ...chat, baseUrl: 'https://api.together.xyz/v1', apiKeyEnv: 'TOGETHER_API_KEY',
    reasoningOut: 'reasoning', cacheKey: 'header', catalogue: 'together',
  },
  // Z.AI (GLM) answers reasoning_content and reads it back (preserved thinking); affinity by the
  // X-Session-Id header (per Z.AI support, openclaw PR #68079). Unknown-field policy unknown: headers only.
  zai: {
    ...chat, baseUrl: 'https://api.z.ai/api/paas/v4', apiKeyEnv: 'ZAI_API_KEY',
    reasoningOut: 'reasoning_content', affinityHeaders: ['x-session-id'], cacheKey: 'header', catalogue: 'zai',
  },
  // Baseten's Model APIs answer reasoning_content. Dedicated deployments route by
  // x-baseten-session-id; X-Session-Affinity is sent too (unconfirmed, harmless).
  baseten: {
    ...chat, baseUrl: 'https://inference.baseten.co/v1', apiKeyEnv: 'BASETEN_API_KEY',
    reasoningOut: 'reasoning_content', affinityHeaders: ['x-baseten-session-id', 'x-session-affinity'], cacheKey: 'header', catalogue: 'baseten',
  },
  // Gemini's OpenAI endpoint is a Google API that refuses unknown names: no reasoning text back
  // (thought signatures go back through the dialect), no body key.
  'gemini-openai': {
    ...chat, baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai', apiKeyEnv: 'GEMINI_API_KEY',
    reasoningOut: 'none', cacheKey: 'header', catalogue: 'google', genAi: 'gcp.gemini', geminiCalls: true,
  },
  // Gemini's own API (the gemini dialect): thought signatures go back on the parts that carried them,
  // to their origin only; no reasoning text back; no session key or affinity header (its implicit
  // cache reads the prefix, which the window keeps byte-stable); the key as x-goog-api-key.
  gemini: {
    ...chat, wire: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', apiKeyEnv: 'GEMINI_API_KEY',
    fromEnv: false, reasoningOut: 'none', cacheKey: 'off', catalogue: 'google', genAi: 'gcp.gemini',
  },
  // An unknown compatible server: reasoning_content, the field DeepSeek, SGLang and Qwen's chat
  // templates read; the key as prompt_cache_key and both common affinity headers, which a server
  // that knows neither ignores (docs/decisions.md, Session keys).
  generic: {
    ...chat, fromEnv: false, reasoningOut: 'reasoning_content', affinityHeaders: ['x-session-id', 'x-session-affinity'], maxTokensField: 'by-model',
  },
  // The simulator (docs/architecture.md section 9). Without base_url the proxy starts it on loopback itself.
  // Its breakpoints stay off by default: the simulator's default mode plays an OpenAI before GPT-5.6
  // and answers 400 to them; a route to its `gpt56` mode sets `prompt_cache_breakpoints`.
  sim: { ...chat, fromEnv: false, reasoningOut: 'reasoning_content', affinityHeaders: ['x-session-id'], maxTokensField: 'by-model', openaiModels: true },
  // Anthropic caches only when asked, so its models ask for the five-minute cache by default
  // (docs/decisions.md, Anthropic caches only when asked), as explicit breakpoints on the stable
  // boundaries: a top-level cache_control marks only the last block, which cannot reach the head a
  // trim leaves unchanged (docs/decisions/0003); thinking goes back only as signed blocks; it has
  // no session header.
  anthropic: {
    ...chat, wire: 'anthropic-messages', baseUrl: 'https://api.anthropic.com/v1', apiKeyEnv: 'ANTHROPIC_API_KEY',
    reasoningOut: 'none', cacheKey: 'off', topLevelCacheControl: false, cacheControl: 'ephemeral', catalogue: 'anthropic',
  },
  // Native /api/chat: thinking goes back as messages[].thinking (the dialect's own field; a model's
  // reasoning = "none" keeps it out); no session key (one KV slot per model is the cache); num_ctx
  // and keep_alive come from the route.
  ollama: {
    ...chat, wire: 'ollama-chat', baseUrl: 'http://127.0.0.1:11434', baseUrlEnv: 'OLLAMA_HOST',
    reasoningOut: 'reasoning', cacheKey: 'off',
  },
  // Responses: reasoning goes back as encrypted items (keep_reasoning), never as text; the key as
  // prompt_cache_key, and Codex's session headers for a ChatGPT-plan credential (codex_headers).
  'openai-responses': {
    ...chat, wire: 'openai-responses', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY',
    fromEnv: false, reasoningOut: 'none', catalogue: 'openai', genAi: 'openai', explicitBreakpoints: true, openaiModels: true,
  },
} as const satisfies Record<string, Preset>;

export type PresetName = keyof typeof PRESETS;

export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

export function presetOf(name: PresetName): Preset {
  return PRESETS[name];
}

export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name);
}
