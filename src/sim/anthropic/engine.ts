/**
 * The simulator's Anthropic Messages wire, free of HTTP: parse, render, enforce the API's rules
 * (cache markers, tool pairs, thinking limits, signed thinking), read and write the prompt cache
 * (only where `cache_control` asks), and plan a deterministic reply from the directives of the last
 * turn (directives.ts, as on the chat wire). Its cache and records are its own: Anthropic's cache
 * is per organisation and its usage has fields of its own.
 */
import { sha256Hex } from '../hash.js';
import { directedError, SimError } from '../errors.js';
import { MODES } from '../modes.js';
import { planReply, type ReplyPlan } from '../replies.js';
import { countTokens } from '../tokens.js';
import { inputTransformations } from './block-binding.js';
import { anthropicStreamFailure, promptTooLong } from './errors.js';
import { AnthropicPromptCache, type CacheUsage } from './prompt-cache.js';
import { lastTurnText, renderRequest } from './render.js';
import { replyBlocks, wireUsage, type ReplyMeta } from './reply.js';
import { parseMessagesRequest, thinks, type Block } from './request.js';
import { checkSignatures } from './signature.js';
import { checkMessagesRequest, countCacheMarkers } from './strict.js';

export interface AnthropicEngineConfig {
  contextTokens: number;
  /** Lifetime of a five-minute cache entry (the simulator's TTL); one-hour entries live an hour. */
  ttlMs: number;
  maxEntries: number;
  now: () => number;
  /**
   * Key the cache of message blocks on `tool_choice` and the thinking settings too, as the API
   * does (request.ts, `messageCacheKey`).
   */
  messageCacheKeys?: boolean;
}

export interface AnthropicRecord {
  /** 1-based, in arrival order on this wire. */
  seq: number;
  path: string;
  model: string | null;
  /** The whole prompt: input + cache read + cache written. */
  promptTokens: number;
  inputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  cacheWrite1hTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  /** `cache_control` markers the request carried, its top-level one included. */
  cacheMarkers: number;
  /** Thinking blocks sent back (each checked against its signature). */
  thinkingBlocksBack: number;
  /** Of those, the ones left out of the prompt by `prefix_mismatch_behavior: "drop_block"`. */
  thinkingDropped: number;
  stream: boolean;
  status: number;
  /** The error code sent (status >= 400, or a mid-stream error), else null. */
  error: string | null;
  receivedAt: number;
  finishedAt: number | null;
}

export type AnthropicOutcome =
  | { kind: 'error'; error: SimError; slowMs: number }
  | { kind: 'reply'; meta: ReplyMeta; blocks: Block[]; plan: ReplyPlan; usage: Record<string, unknown>; stream: boolean; failure: SimError | null };

export class AnthropicEngine {
  readonly records: AnthropicRecord[] = [];
  readonly cache: AnthropicPromptCache;
  readonly #config: AnthropicEngineConfig;

  constructor(config: AnthropicEngineConfig) {
    this.#config = config;
    this.cache = new AnthropicPromptCache(config.maxEntries);
  }

  record(path: string): AnthropicRecord {
    const record: AnthropicRecord = {
      seq: this.records.length + 1, path, model: null, promptTokens: 0, inputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0,
      cacheWrite1hTokens: 0, completionTokens: 0, reasoningTokens: 0, cacheMarkers: 0, thinkingBlocksBack: 0, thinkingDropped: 0, stream: false,
      status: 0, error: null, receivedAt: this.#config.now(), finishedAt: null,
    };
    this.records.push(record);
    return record;
  }

  /** `betas`: the request's `anthropic-beta` values. */
  answer(bodyText: string, record: AnthropicRecord, betas: readonly string[] = []): AnthropicOutcome {
    try {
      return this.#answer(bodyText, record, betas);
    } catch (err) {
      if (!(err instanceof SimError)) throw err;
      return { kind: 'error', error: err, slowMs: 0 };
    }
  }

  /**
   * `POST /v1/messages/count_tokens`: the prompt's tokens as a request would render them; nothing
   * cached. Signatures are checked only to leave out what "drop_block" would drop.
   */
  count(bodyText: string, betas: readonly string[] = []): { input_tokens: number } {
    const req = parseMessagesRequest(bodyText, { count: true, betas });
    const segments = req.thinking?.prefixMismatch === 'drop_block' ? checkSignatures(req, renderRequest(req)).segments : renderRequest(req);
    return { input_tokens: countTokens(segments.map((s) => s.text).join('')) };
  }

  reset(): void {
    this.records.length = 0;
    this.cache.clear();
  }

  #answer(bodyText: string, record: AnthropicRecord, betas: readonly string[]): AnthropicOutcome {
    const req = parseMessagesRequest(bodyText, { betas });
    record.model = req.model;
    record.stream = req.stream;
    const sent = renderRequest(req);
    record.cacheMarkers = countCacheMarkers(req, sent);
    record.thinkingBlocksBack = req.messages.reduce((n, t) => n + (t.role === 'assistant' ? t.content.filter((b) => b.type === 'thinking').length : 0), 0);
    // The request's own rules apply to it as sent (a dropped block still starts its turn); what
    // follows reads the prompt the model reads, without the dropped blocks.
    checkMessagesRequest(req, sent);
    const { dropped, segments } = checkSignatures(req, sent);
    record.thinkingDropped = dropped.length;

    const rendered = segments.map((s) => s.text).join('');
    const digest = sha256Hex(rendered);
    const plan = planFor(lastTurnText(req.messages), digest, thinks(req));
    const promptTokens = countTokens(rendered);
    if (promptTokens > this.#config.contextTokens || plan.failure?.kind === 'overflow') {
      return { kind: 'error', error: promptTooLong(promptTokens, this.#config.contextTokens), slowMs: plan.slowMs };
    }
    if (plan.failure?.kind === 'error') return { kind: 'error', error: directedError(plan.failure.status), slowMs: plan.slowMs };

    const cache: CacheUsage = this.cache.apply(req.model, segments, req.topLevelCache, this.#config.now(), this.#config.ttlMs, this.#config.messageCacheKeys === true ? req.messageCacheKey : '');
    record.promptTokens = cache.total;
    record.inputTokens = cache.input;
    record.cachedTokens = cache.read;
    record.cacheWriteTokens = cache.written5m + cache.written1h;
    record.cacheWrite1hTokens = cache.written1h;
    record.completionTokens = plan.completionTokens;
    record.reasoningTokens = plan.reasoningTokens;

    const failure = plan.streamError ? anthropicStreamFailure() : null;
    if (failure !== null && !req.stream) return { kind: 'error', error: failure, slowMs: plan.slowMs };
    return {
      kind: 'reply',
      meta: { id: `msg_sim${digest.slice(0, 24)}`, model: req.model, inputTransformations: inputTransformations(dropped, betas) },
      blocks: replyBlocks(plan, digest, segments),
      plan,
      usage: wireUsage(cache, plan),
      stream: req.stream,
      failure,
    };
  }
}

/**
 * The chat wire's reply planner over the last turn's text. Thinking is produced only when the request
 * asks for it (a `[[think]]` directive without it is dropped), and then always: Claude thinks when told to.
 */
function planFor(lastText: string, digest: string, thinking: boolean): ReplyPlan {
  const plan = planReply([{ role: 'user', content: lastText }], digest, { ...MODES.openai, alwaysThinks: thinking });
  if (thinking || plan.thinking === null) return plan;
  return { ...plan, thinking: null, completionTokens: plan.completionTokens - plan.reasoningTokens, reasoningTokens: 0 };
}
