/**
 * The simulator's Responses mode: `POST /v1/responses` (SSE or whole), prefix caches per replica as
 * the chat mode keeps them (128-token blocks, 1024 minimum, TTL, routing by session key: the body's
 * `prompt_cache_key`, else the `x-session-id`, `x-session-affinity` or Codex's `session-id` header),
 * and reasoning items whose encrypted content must come back unchanged.
 *
 * A reply reasons when the request asks for `reasoning` (a reasoning model always does) or the
 * last item says `[[think ...]]`. Its reasoning item carries a summary only when one was asked for,
 * and encrypted content only with `include: ["reasoning.encrypted_content"]`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { sha256Hex } from '../hash.js';
import { ReplicaCache } from '../cache.js';
import { directedError, SimError, streamFailure } from '../errors.js';
import { MODES } from '../modes.js';
import { checkOpenAIResponsesParams } from '../openai-params.js';
import { planReply, type ReplyPlan } from '../replies.js';
import { Router } from '../routing.js';
import { BLOCK_TOKENS, countTokens, TokenSeq } from '../tokens.js';
import type { SimOptions } from '../types.js';
import { openReasoning, sealReasoning } from './encrypted.js';
import { functionCallItem, messageItem, responseObject, streamEvents, type Item, type ResponseMeta } from './events.js';
import { renderResponsesPrompt, responsesBoundaries } from './render.js';
import { checkCacheFields, type PartsAt } from '../cache-fields.js';
import { readAndWrite as readAndWriteAt } from '../prompt-breakpoints.js';
import { checkCallPairs, itemText, parseResponsesRequest, type ResponsesRequest } from './request.js';

/** `/gpt56/v1/responses` plays GPT-5.6 and later (prompt-breakpoints.ts); the others, older models. */
export const RESPONSES_PATH = /^\/(?:(openai|gpt56)\/)?v1\/responses$/;
const SESSION_HEADERS = ['x-session-id', 'x-session-affinity', 'session-id'] as const;
const MIN_CACHED_PROMPT = 1024;
const ENCRYPTED = 'reasoning.encrypted_content';

export type ResponsesOutcome =
  | { kind: 'error'; error: SimError; slowMs: number }
  | { kind: 'reply'; stream: boolean; body: Record<string, unknown>; events: ReturnType<typeof streamEvents>; slowMs: number };

export class ResponsesSim {
  readonly #caches: ReplicaCache[];
  readonly #router: Router;
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #contextTokens: number;
  readonly #auth: string | null;
  /** `/v1/responses` plays GPT-5.6 when the simulator's mode is `gpt56`. */
  readonly #gpt56: boolean;

  /** The same defaults as the chat engine (server.ts), read from the same options. */
  constructor(opts: SimOptions, now: () => number) {
    const replicas = opts.replicas ?? 1;
    this.#caches = Array.from({ length: replicas }, () => new ReplicaCache(opts.maxBlocksPerReplica ?? 20_000));
    this.#router = new Router(replicas, opts.routing ?? 'prefix', opts.seed ?? 0);
    this.#now = now;
    this.#ttlMs = opts.ttlMs ?? 300_000;
    this.#contextTokens = opts.contextTokens ?? 131_072;
    this.#auth = opts.apiKey === undefined ? null : `Bearer ${opts.apiKey}`;
    this.#gpt56 = opts.mode === 'gpt56';
  }

  /** `gpt56`: as GPT-5.6 and later answer (absent: as the simulator's mode says). */
  answer(bodyText: string, header: (name: string) => string | undefined, gpt56 = this.#gpt56): ResponsesOutcome {
    try {
      return this.#answer(bodyText, header, gpt56);
    } catch (err) {
      if (err instanceof SimError) return { kind: 'error', error: err, slowMs: 0 };
      throw err;
    }
  }

  #answer(bodyText: string, header: (name: string) => string | undefined, gpt56: boolean): ResponsesOutcome {
    if (this.#auth !== null && header('authorization') !== this.#auth) {
      throw new SimError(401, 'invalid_api_key', 'Incorrect API key provided.', null, 'invalid_request_error');
    }
    const req = parseResponsesRequest(bodyText);
    checkOpenAIResponsesParams(req.body, req.model);
    checkEncrypted(req);
    checkCallPairs(req.input);
    const cacheMode = checkCacheFields(req.body, cacheContents(req), gpt56);
    const tokens = new TokenSeq(renderResponsesPrompt(req));
    const lastText = lastTurnText(req);
    // `tool_choice: "none"`: the API's model calls no function (a compaction ask offers the tools and this).
    const plan = planReply([{ role: 'user', content: lastText }], tokens.digest, MODES.openai, { tools: req.body.tool_choice !== 'none' });
    if (plan.failure?.kind === 'error') return { kind: 'error', error: directedError(plan.failure.status), slowMs: plan.slowMs };
    if (plan.failure?.kind === 'overflow' || tokens.count > this.#contextTokens) {
      throw new SimError(400, 'context_length_exceeded', 'Your input exceeds the context window of this model. Please adjust your input and try again.', 'input');
    }
    if (plan.streamError && !req.stream) return { kind: 'error', error: streamFailure(), slowMs: plan.slowMs };

    const replica = this.#router.pick(sessionKey(req, header), tokens);
    const { cached, written } = gpt56
      ? readAndWriteAt(this.#caches[replica]!, tokens.bytes, responsesBoundaries(req), cacheMode, this.#now(), this.#ttlMs)
      : { cached: this.#readAndWrite(replica, tokens), written: 0 };
    const thinking = plan.thinking ?? (req.reasoning !== null && req.reasoning.effort !== 'none' ? `Considered prompt ${tokens.digest.slice(0, 16)}.` : null);
    const reasoningTokens = thinking === null ? 0 : countTokens(thinking);
    const output = outputItems(req, plan, thinking, tokens.digest);
    const completion = plan.completionTokens - plan.reasoningTokens + reasoningTokens;
    const usage = {
      input_tokens: tokens.count,
      // GPT-5.6+ reports writes beside reads (openai-node ResponseUsage.InputTokensDetails).
      input_tokens_details: gpt56 ? { cached_tokens: cached, cache_write_tokens: written } : { cached_tokens: cached },
      output_tokens: completion,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: tokens.count + completion,
    };
    const meta: ResponseMeta = { id: `resp_${tokens.digest.slice(0, 24)}`, createdAt: Math.floor(this.#now() / 1000), model: req.model };
    const cut = req.maxOutputTokens !== null && completion > req.maxOutputTokens;
    const body = responseObject(meta, cut ? 'incomplete' : 'completed', output, usage, cut ? { incomplete_details: { reason: 'max_output_tokens' } } : {});
    const events = req.stream ? streamEvents(meta, output, body, plan.streamError ? streamFailure() : null) : [];
    return { kind: 'reply', stream: req.stream, body, events, slowMs: plan.slowMs };
  }

  #readAndWrite(replica: number, tokens: TokenSeq): number {
    if (tokens.count < MIN_CACHED_PROMPT) return 0;
    const cache = this.#caches[replica] as ReplicaCache;
    const keys = tokens.blockKeys();
    const now = this.#now();
    const hits = cache.read(keys, now, this.#ttlMs);
    cache.write(keys, now, this.#ttlMs);
    return hits * BLOCK_TOKENS;
  }

  async serve(req: IncomingMessage, res: ServerResponse, bodyText: string, mode?: string): Promise<void> {
    const outcome = this.answer(bodyText, (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    }, mode === undefined ? this.#gpt56 : mode === 'gpt56');
    if (outcome.kind === 'error' || !outcome.stream) {
      if (outcome.slowMs > 0) await sleep(outcome.slowMs);
      const [status, value] = outcome.kind === 'error' ? [outcome.error.status, outcome.error.body()] : [200, outcome.body];
      const text = JSON.stringify(value);
      if (!res.destroyed) res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const ev of outcome.events) {
      if (outcome.slowMs > 0) await sleep(outcome.slowMs);
      if (res.destroyed) return;
      res.write(`event: ${ev.event}\ndata: ${JSON.stringify(ev.data)}\n\n`);
    }
    res.end();
  }

  /** Empties the caches and rewinds the router's PRNG. */
  reset(): void {
    for (const cache of this.#caches) cache.clear();
    this.#router.reset();
  }
}

/** Every reasoning item given back must be one this simulator sealed, unchanged. */
function checkEncrypted(req: ResponsesRequest): void {
  req.input.forEach((item, i) => {
    if (item.type !== 'reasoning' || typeof item.encrypted_content !== 'string') return;
    if (openReasoning(item.encrypted_content) === null) {
      throw new SimError(400, 'invalid_encrypted_content', `The encrypted content for item input[${i}] could not be verified.`, `input[${i}].encrypted_content`);
    }
  });
}

/** Every content that may hold parts, for the cache-field checks. */
function cacheContents(req: ResponsesRequest): PartsAt[] {
  return req.input.flatMap((item, i) => {
    if (item.type === 'message') return [{ content: item.content, where: `input.[${i}].content`, assistant: item.role === 'assistant' }];
    if (item.type === 'function_call_output') return [{ content: item.output, where: `input.[${i}].output`, assistant: false }];
    return [];
  });
}

function sessionKey(req: ResponsesRequest, header: (name: string) => string | undefined): string | null {
  if (req.promptCacheKey !== null) return req.promptCacheKey;
  for (const name of SESSION_HEADERS) {
    const value = header(name);
    if (value !== undefined && value !== '') return value;
  }
  return null;
}

function outputItems(req: ResponsesRequest, plan: ReplyPlan, thinking: string | null, digest: string): Item[] {
  const id = (prefix: string, n = 0): string => `${prefix}_${sha256Hex(`${digest}:${prefix}:${n}`).slice(0, 24)}`;
  const out: Item[] = [];
  if (thinking !== null) {
    const item: Item = { id: id('rs'), type: 'reasoning', summary: (req.reasoning?.summary ?? null) !== null ? [{ type: 'summary_text', text: thinking }] : [] };
    if (req.include.includes(ENCRYPTED)) item.encrypted_content = sealReasoning({ prompt: digest, text: thinking });
    out.push(item);
  }
  if (plan.content !== null) {
    out.push(messageItem(id('msg'), plan.content));
  }
  plan.toolCalls.forEach((call, n) => {
    out.push(functionCallItem(id('fc', n), call));
  });
  return out;
}

/**
 * The text the reply's directives are read from: the last item, past any system or developer
 * messages after it (an agent's inline reminders), as the chat wire reads its last turn.
 */
function lastTurnText(req: ResponsesRequest): string {
  let i = req.input.length - 1;
  while (i > 0 && req.input[i]!.type === 'message' && (req.input[i]!.role === 'system' || req.input[i]!.role === 'developer')) i--;
  const last = req.input[i];
  return last === undefined ? '' : itemText(last.type === 'function_call_output' ? last.output : last.content);
}
