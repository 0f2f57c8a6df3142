/**
 * The simulator's state and its answer to one chat request, free of HTTP: parse, check the
 * reasoning that came back, enforce the conversation rules, tokenise, route to a replica, read
 * and write its cache, and plan the reply. The server (server.ts) only moves bytes.
 */
import { contextOverflow, directedError, SimError, streamFailure } from './errors.js';
import { MODES, type ModeSpec } from './modes.js';
import { ReplicaCache } from './cache.js';
import type { ReplyMeta } from './completion.js';
import { addOpaque, zeroOpaque, type ModeRules } from './mode-rules.js';
import { addCounts, ReasoningMemory, zeroCounts } from './reasoning-check.js';
import { NO_FAULTS, planReply, withoutFailures, type ReplyPlan, type TransportFaults } from './replies.js';
import { sha256Hex } from './hash.js';
import { parseChatRequest } from './request.js';
import { Router } from './routing.js';
import { checkConversation } from './strict.js';
import { BLOCK_TOKENS, messageBoundaries, renderPrompt, TokenSeq } from './tokens.js';
import { checkCacheFields } from './cache-fields.js';
import { readAndWrite as readAndWriteAt } from './prompt-breakpoints.js';
import type { SessionKeySource, SimMode, SimRecord, SimRouting, SimStats } from './types.js';

/** The options with defaults filled in. */
export interface EngineConfig {
  replicas: number;
  routing: SimRouting;
  seed: number;
  contextTokens: number;
  ttlMs: number;
  maxBlocksPerReplica: number;
  requireReasoning: boolean;
  clock: () => number;
}

/** OpenAI: "Caching is enabled automatically for prompts that are 1024 tokens or longer". */
export const MIN_CACHED_PROMPT = 1024;

export type Outcome =
  | { kind: 'error'; error: SimError; slowMs: number; faults: TransportFaults }
  | {
      kind: 'reply';
      plan: ReplyPlan;
      meta: ReplyMeta;
      usage: Record<string, unknown>;
      stream: boolean;
      includeUsage: boolean;
      /** `[[stream-error]]`: the stream breaks with this error. */
      failure: SimError | null;
    };

/** Header names are lower case, as node:http gives them. */
export type HeaderLookup = (name: string) => string | undefined;

const SESSION_HEADERS = ['x-session-id', 'x-session-affinity'] as const;

export class SimEngine {
  readonly records: SimRecord[] = [];
  readonly #config: EngineConfig;
  readonly #caches: ReplicaCache[];
  readonly #router: Router;
  readonly #memory = new ReasoningMemory();
  /** Each mode's own rules, made on first use (they remember the replies they made). */
  readonly #rules = new Map<SimMode, ModeRules>();
  /** `[[fail-times N]]`: how many times each request body (by its SHA-256) has come. */
  readonly #seen = new Map<string, number>();
  #offset = 0;

  constructor(config: EngineConfig) {
    this.#config = config;
    this.#caches = Array.from({ length: config.replicas }, () => new ReplicaCache(config.maxBlocksPerReplica));
    this.#router = new Router(config.replicas, config.routing, config.seed);
  }

  now(): number {
    return this.#config.clock() + this.#offset;
  }

  /** Moves the simulator's clock forward (cache expiry, timestamps). */
  advance(ms: number): void {
    this.#offset += ms;
  }

  record(path: string, mode: SimMode): SimRecord {
    const record: SimRecord = {
      seq: this.records.length + 1, path, mode, model: null, replica: null, sessionKey: null, sessionKeySource: null,
      promptTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, completionTokens: 0, reasoningTokens: 0, stream: false, status: 0, error: null,
      reasoning: zeroCounts(), opaque: zeroOpaque(), costUsd: null, receivedAt: this.now(), firstByteAt: null, finishedAt: null, closedEarly: false, closedAt: null,
    };
    this.records.push(record);
    return record;
  }

  /** Answers one chat request; fills `record` with everything but the HTTP timings. */
  chat(bodyText: string, header: HeaderLookup, record: SimRecord): Outcome {
    const mode = MODES[record.mode];
    try {
      return this.#chat(bodyText, header, record, mode);
    } catch (err) {
      if (!(err instanceof SimError)) throw err;
      return { kind: 'error', error: err, slowMs: 0, faults: NO_FAULTS };
    }
  }

  #chat(bodyText: string, header: HeaderLookup, record: SimRecord, mode: ModeSpec): Outcome {
    const req = parseChatRequest(bodyText);
    record.model = req.model;
    record.stream = req.stream;
    const rules = this.#rulesOf(mode);
    const { counts, problems } = this.#memory.check(req.messages, mode.backField, rules?.givesReasoningBack.bind(rules));
    record.reasoning = counts;
    checkConversation(req.messages, mode);
    mode.checkParams(req.body, req.model);
    const cacheMode = checkCacheFields(req.body, req.messages.map((m, i) => ({ content: m.content, where: `messages.[${i}].content`, assistant: m.role === 'assistant' })), mode.breakpoints);
    if (rules !== undefined) record.opaque = rules.checkHistory(req);
    const problem = problems[0];
    if (this.#config.requireReasoning && problem !== undefined) {
      throw new SimError(
        400,
        'reasoning_not_returned',
        `messages[${problem.index}] is a reply of this simulator whose reasoning did not come back in '${mode.backField}' (${problem.kind === 'wrongField' ? 'it came in another field' : 'missing or changed'}).`,
        `messages.[${problem.index}].${mode.backField}`,
      );
    }

    const tokens = new TokenSeq(renderPrompt(req.tools, req.messages));
    record.promptTokens = tokens.count;
    // A model calls only a function it was given, and none under `tool_choice: "none"`.
    const callable = { tools: req.tools.length > 0 && req.body.tool_choice !== 'none' };
    const plan = planReply(req.messages, tokens.digest, mode, callable);
    const shows = rules?.showsThinking(req);
    if (shows === true && plan.thinking === null) Object.assign(plan, planReply(req.messages, tokens.digest, { ...mode, alwaysThinks: true }, callable));
    if (shows === false && plan.thinking !== null) {
      plan.completionTokens -= plan.reasoningTokens;
      plan.thinking = null;
      plan.reasoningTokens = 0;
    }
    if (plan.failTimes !== null && this.#count(bodyText) > plan.failTimes) Object.assign(plan, withoutFailures(plan));
    if (tokens.count > this.#config.contextTokens || plan.failure?.kind === 'overflow') {
      return { kind: 'error', error: contextOverflow(tokens.count, this.#config.contextTokens), slowMs: plan.slowMs, faults: plan.faults };
    }
    if (plan.failure?.kind === 'error') return { kind: 'error', error: directedError(plan.failure.status), slowMs: plan.slowMs, faults: plan.faults };

    const session = sessionKey(req.promptCacheKey, header);
    record.sessionKey = session?.key ?? null;
    record.sessionKeySource = session?.source ?? null;
    const replica = this.#router.pick(record.sessionKey, tokens);
    record.replica = replica;
    let cacheWrite = 0;
    if (mode.breakpoints) {
      const outcome = readAndWriteAt(this.#caches[replica]!, tokens.bytes, messageBoundaries(req.tools, req.messages), cacheMode, this.now(), this.#config.ttlMs);
      record.cachedTokens = outcome.cached;
      cacheWrite = outcome.written;
    } else {
      const caching = rules?.caching(req) ?? 'auto';
      record.cachedTokens = caching === 'off' ? 0 : this.#readAndWrite(replica, tokens);
      // What a cache that was asked for wrote: the whole blocks it did not already hold.
      cacheWrite = caching === 'asked' && tokens.count >= MIN_CACHED_PROMPT ? tokens.fullBlocks * BLOCK_TOKENS - record.cachedTokens : 0;
    }
    record.cacheWriteTokens = cacheWrite;
    record.completionTokens = plan.completionTokens;
    record.reasoningTokens = plan.reasoningTokens;
    this.#memory.remember(plan);
    rules?.decorate(plan, req, tokens.digest);

    const failure = plan.streamError ? streamFailure() : null;
    if (failure !== null && !req.stream) return { kind: 'error', error: failure, slowMs: plan.slowMs, faults: plan.faults };
    const usage = mode.usage({ prompt: tokens.count, cached: record.cachedTokens, cacheWrite, completion: plan.completionTokens, reasoning: plan.reasoningTokens });
    record.costUsd = typeof usage.cost === 'number' ? usage.cost : null;
    return {
      kind: 'reply',
      plan,
      meta: { id: `chatcmpl-${tokens.digest.slice(0, 24)}`, created: Math.floor(record.receivedAt / 1000), model: req.model, replyField: mode.replyField },
      usage,
      stream: req.stream,
      includeUsage: req.includeUsage,
      failure,
    };
  }

  /** Cached tokens for this prompt on `replica`; then every full block of it is written. */
  #readAndWrite(replica: number, tokens: TokenSeq): number {
    if (tokens.count < MIN_CACHED_PROMPT) return 0;
    const cache = this.#caches[replica]!;
    const keys = tokens.blockKeys();
    const now = this.now();
    const hits = cache.read(keys, now, this.#config.ttlMs);
    cache.write(keys, now, this.#config.ttlMs);
    return hits * BLOCK_TOKENS;
  }

  stats(): SimStats {
    const replicas = this.#caches.map((cache, replica) => ({ replica, requests: 0, promptTokens: 0, cachedTokens: 0, blocks: cache.size }));
    const stats: SimStats = {
      requests: 0, ok: 0, errors: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0, replicas, reasoning: zeroCounts(), opaque: zeroOpaque(),
    };
    for (const r of this.records) {
      stats.requests++;
      if (r.status === 200) stats.ok++;
      else if (r.status >= 400) stats.errors++;
      addCounts(stats.reasoning, r.reasoning);
      addOpaque(stats.opaque, r.opaque);
      if (r.replica === null) continue;
      stats.promptTokens += r.promptTokens;
      stats.cachedTokens += r.cachedTokens;
      stats.completionTokens += r.completionTokens;
      const per = replicas[r.replica]!;
      per.requests++;
      per.promptTokens += r.promptTokens;
      per.cachedTokens += r.cachedTokens;
    }
    return stats;
  }

  /** This body's count of arrivals, this one included. */
  #count(bodyText: string): number {
    const key = sha256Hex(bodyText);
    const n = (this.#seen.get(key) ?? 0) + 1;
    this.#seen.set(key, n);
    return n;
  }

  /** Forgets records, caches, remembered replies, fail-times counts and the PRNG's position; the clock stays. */
  reset(): void {
    this.records.length = 0;
    this.#seen.clear();
    for (const cache of this.#caches) cache.clear();
    this.#memory.clear();
    for (const rules of this.#rules.values()) rules.clear();
    this.#router.reset();
  }

  #rulesOf(mode: ModeSpec): ModeRules | undefined {
    if (mode.rules === undefined) return undefined;
    let rules = this.#rules.get(mode.mode);
    if (rules === undefined) {
      rules = mode.rules();
      this.#rules.set(mode.mode, rules);
    }
    return rules;
  }
}

function sessionKey(bodyKey: string | null, header: HeaderLookup): { key: string; source: SessionKeySource } | null {
  if (bodyKey !== null) return { key: bodyKey, source: 'prompt_cache_key' };
  for (const name of SESSION_HEADERS) {
    const value = header(name);
    if (value !== undefined && value !== '') return { key: value, source: name };
  }
  return null;
}
