/**
 * The simulator's native Gemini API (Google's own wire, not its OpenAI endpoint, which is the
 * `gemini` chat mode). Written from ai.google.dev's API reference, owing nothing to src/dialects.
 *
 *   POST /v1beta/models/{model}:generateContent
 *   POST /v1beta/models/{model}:streamGenerateContent?alt=sse   SSE, `data: <GenerateContentResponse>`
 *        (without alt=sse: one JSON array of the same chunks)
 *   POST /v1beta/models/{model}:countTokens                     {contents} or {generateContentRequest}
 *   GET  /v1beta/models, /v1beta/models/{model}
 *   POST /v1beta/cachedContents; GET /v1beta/cachedContents; GET, PATCH (ttl | expireTime), DELETE
 *        /v1beta/cachedContents/{id}
 * The key, when the simulator has one: `x-goog-api-key` or
 * `?key=`. Errors: `{"error":{"code","message","status"}}`.
 *
 * What it enforces, as the API does: proto3 JSON (camelCase or snake_case names, an unknown name is
 * a 400), one data field per part, user/model roles, one function response per call of the turn
 * before, thinkingBudget and thinkingLevel not both; thought signatures (signatures.ts) that come
 * back unchanged and on the part that carried them; a request naming `cachedContent` may not set
 * systemInstruction, tools or toolConfig and must use the cache's model.
 *
 * Caching: an implicit prefix cache per replica (the chat modes' ReplicaCache: 128-token blocks,
 * 1024-token minimum, TTL), and explicit `cachedContents` (cached-contents.ts) whose prefix a
 * request reads whole. Usage: `usageMetadata` with promptTokenCount (cached included),
 * cachedContentTokenCount, candidatesTokenCount, thoughtsTokenCount, totalTokenCount; a zero
 * count is left out, as the API leaves it. Thinking is on unless `thinkingBudget: 0` (or when
 * `[[think ...]]` asks); its summary is a `thought: true` part only with `includeThoughts`.
 * Replies follow the directives (directives.ts) in the last content's text or function responses:
 * call, say, think, len, error, overflow, slow, stream-error, reset and reset-mid.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReplicaCache } from '../cache.js';
import { MODES } from '../modes.js';
import { planReply } from '../replies.js';
import { inJsonMode } from './json-mode.js';
import { Router } from '../routing.js';
import { BLOCK_TOKENS, TokenSeq } from '../tokens.js';
import type { SimOptions } from '../types.js';
import { CachedContents, resource, type CachedContentStats } from './cached-contents.js';
import { directedGoogleError, GoogleError, invalidArgument } from './errors.js';
import { renderPrompt, lastTurnText, type Prompt } from './render.js';
import { replyParts, responseBody, streamChunks, usageMetadata, type GeminiUsage, type ReplyMeta } from './reply.js';
import { modelId, parseGenerateRequest, parseJson, readContents, readGenerateRequest, isObject, type Json } from './request.js';
import { SignatureBook, type SignatureCounts } from './signatures.js';

export const GEMINI_NATIVE_ROUTE = /^\/v1beta\/(?:models|cachedContents)(?:\/|$)/;
const MODEL_ACTION = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;
const MODEL = /^\/v1beta\/models(?:\/([^/:]+))?$/;
const CACHE = /^\/v1beta\/cachedContents(?:\/([^/:]+))?$/;
/** Implicit caching's minimum (ai.google.dev caching page, 2.5 Flash). */
const MIN_IMPLICIT_TOKENS = 1024;

export type GeminiAction = 'generateContent' | 'streamGenerateContent' | 'countTokens';

export interface GeminiRecord {
  seq: number;
  path: string;
  action: GeminiAction;
  model: string | null;
  stream: boolean;
  status: number;
  error: string | null;
  promptTokens: number;
  cachedTokens: number;
  /** The `cachedContents` entry the request read, if any. */
  cachedContent: string | null;
  candidatesTokens: number;
  thoughtsTokens: number;
  signatures: SignatureCounts;
  receivedAt: number;
}

export interface GeminiNativeStats {
  /** generateContent and streamGenerateContent calls (countTokens is free). */
  requests: number;
  ok: number;
  errors: number;
  promptTokens: number;
  cachedTokens: number;
  cachedContents: CachedContentStats;
}

/** `[[reset]]`: drop the connection before any header; `[[reset-mid]]`: after half a stream. */
interface Drops {
  reset?: boolean;
  resetMid?: boolean;
}

type Reply =
  | ({ kind: 'json'; status: number; body: unknown; slowMs: number } & Drops)
  | ({ kind: 'stream'; chunks: Json[]; sse: boolean; slowMs: number } & Drops);

export class GeminiNativeSim {
  readonly records: GeminiRecord[] = [];
  readonly #caches: ReplicaCache[];
  readonly #router: Router;
  readonly #store = new CachedContents();
  readonly #book = new SignatureBook();
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #contextTokens: number;
  readonly #apiKey: string | undefined;
  readonly #models: string[];

  constructor(opts: SimOptions, now: () => number) {
    const replicas = opts.replicas ?? 1;
    this.#caches = Array.from({ length: replicas }, () => new ReplicaCache(opts.maxBlocksPerReplica ?? 20_000));
    this.#router = new Router(replicas, opts.routing ?? 'prefix', opts.seed ?? 0);
    this.#now = now;
    this.#ttlMs = opts.ttlMs ?? 300_000;
    this.#contextTokens = opts.contextTokens ?? 131_072;
    this.#apiKey = opts.apiKey;
    this.#models = opts.models ?? ['sim'];
  }

  async serve(req: IncomingMessage, res: ServerResponse, url: URL, bodyText: string): Promise<void> {
    const reply = this.#reply(req, url, bodyText);
    if (reply.slowMs > 0) await sleep(reply.slowMs);
    if (res.destroyed) return;
    if (reply.reset === true) {
      res.socket?.destroy();
      return;
    }
    if (reply.kind === 'json') {
      const text = JSON.stringify(reply.body);
      res.writeHead(reply.status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) }).end(text);
      return;
    }
    if (!reply.sse) {
      const text = JSON.stringify(reply.chunks);
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) }).end(text);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [i, chunk] of reply.chunks.entries()) {
      if (res.destroyed) return;
      if (reply.resetMid === true && i >= Math.ceil(reply.chunks.length / 2)) {
        // What was written goes out first: the client sees content, then the connection drop.
        await new Promise<void>((resolve) => res.write('', () => resolve()));
        res.socket?.destroy();
        return;
      }
      res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
      if (reply.slowMs > 0) await sleep(reply.slowMs);
    }
    res.end();
  }

  #reply(req: IncomingMessage, url: URL, bodyText: string): Reply {
    const method = req.method ?? 'GET';
    const action = MODEL_ACTION.exec(url.pathname);
    const record = action === null ? null : this.#record(url.pathname, action[2] as GeminiAction, modelId(decodeURIComponent(action[1]!)));
    try {
      this.#authorise(req, url);
      if (action !== null) {
        if (method !== 'POST') throw new GoogleError(405, `Method ${method} not allowed.`, 'UNIMPLEMENTED');
        const [, model, verb] = action;
        if (verb === 'countTokens') return this.#json(200, this.#count(parseJson(bodyText)), record);
        return this.#generate(bodyText, modelId(decodeURIComponent(model!)), verb === 'streamGenerateContent', url.searchParams.get('alt') === 'sse', record!);
      }
      const cache = CACHE.exec(url.pathname);
      if (cache !== null) return this.#json(200, this.#cachedContents(method, cache[1] ?? null, url, bodyText), null);
      const model = MODEL.exec(url.pathname);
      if (model !== null && method === 'GET') return this.#json(200, this.#listModels(model[1] ?? null), null);
      throw new GoogleError(404, `Unknown request URL: ${method} ${url.pathname}.`);
    } catch (err) {
      if (!(err instanceof GoogleError)) throw err;
      if (record !== null) {
        record.status = err.code;
        record.error = err.status;
      }
      return { kind: 'json', status: err.code, body: err.body(), slowMs: 0 };
    }
  }

  #json(status: number, body: unknown, record: GeminiRecord | null): Reply {
    if (record !== null) record.status = status;
    return { kind: 'json', status, body, slowMs: 0 };
  }

  #authorise(req: IncomingMessage, url: URL): void {
    if (this.#apiKey === undefined) return;
    const header = req.headers['x-goog-api-key'];
    const key = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('key');
    if (key === null || key === undefined || key === '') {
      throw new GoogleError(403, 'Method doesn\'t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.');
    }
    if (key !== this.#apiKey) throw invalidArgument('API key not valid. Please pass a valid API key.');
  }

  #generate(bodyText: string, model: string, stream: boolean, sse: boolean, record: GeminiRecord): Reply {
    record.stream = stream;
    const req = parseGenerateRequest(bodyText);
    const now = this.#now();
    const prompt = this.#prompt(req, model, now);
    record.cachedContent = req.cachedContent;
    record.signatures = this.#book.check(prompt.contents, { everyCall: validatesEveryCall(model) });
    const tokens = new TokenSeq(renderPrompt(prompt));
    record.promptTokens = tokens.count;
    const directed = planReply([{ role: 'user', content: lastTurnText(req.contents) }], tokens.digest, { ...MODES.openai, alwaysThinks: req.thinking.on });
    const plan = req.json === null ? directed : inJsonMode(directed, req.json);
    if (plan.failure?.kind === 'error') return { ...this.#fail(directedGoogleError(plan.failure.status), record), slowMs: plan.slowMs };
    if (plan.failure?.kind === 'overflow' || tokens.count > this.#contextTokens) {
      throw invalidArgument(`The input token count (${tokens.count}) exceeds the maximum number of tokens allowed (${this.#contextTokens}).`);
    }
    const failure = plan.streamError ? new GoogleError(500, 'An internal error has occurred (asked for by [[stream-error]]).') : null;
    if (failure !== null && !stream) return { ...this.#fail(failure, record), slowMs: plan.slowMs };

    const explicit = req.cachedContent === null ? 0 : this.#store.get(req.cachedContent, now).tokens;
    const implicit = this.#readAndWrite(this.#router.pick(null, tokens), tokens, now);
    const thinking = plan.thinking;
    const parts = replyParts(plan, thinking, req.thinking.include);
    this.#book.remember(parts);
    const usage: GeminiUsage = {
      prompt: tokens.count,
      cached: Math.max(explicit, implicit),
      candidates: plan.completionTokens - plan.reasoningTokens,
      thoughts: plan.reasoningTokens,
    };
    Object.assign(record, { status: 200, cachedTokens: usage.cached, candidatesTokens: usage.candidates, thoughtsTokens: usage.thoughts });
    const finish = req.maxOutputTokens !== null && usage.candidates + usage.thoughts > req.maxOutputTokens ? 'MAX_TOKENS' : 'STOP';
    const meta: ReplyMeta = { responseId: `sim${tokens.digest.slice(0, 20)}`, modelVersion: model };
    const drops: Drops = { reset: plan.faults.reset, resetMid: plan.faults.resetMid };
    if (plan.faults.reset) record.error = 'reset';
    if (!stream) return { kind: 'json', status: 200, body: responseBody(meta, parts, finish, usageMetadata(usage)), slowMs: plan.slowMs, ...drops };
    if (failure !== null) record.error = failure.status;
    return { kind: 'stream', chunks: streamChunks(meta, parts, finish, usage, failure), sse, slowMs: plan.slowMs, ...drops };
  }

  /** The request's prompt: its own, or its cache's with its contents after the cache's. */
  #prompt(req: ReturnType<typeof parseGenerateRequest>, model: string, now: number): Prompt {
    if (req.cachedContent === null) return { tools: req.tools, systemInstruction: req.systemInstruction, contents: req.contents };
    const entry = this.#store.get(req.cachedContent, now);
    if (req.systemInstruction !== null || req.tools.length > 0 || req.toolConfig !== undefined) {
      throw invalidArgument('CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.\n\nProposed fix: move those values to CachedContent from GenerateContent request.');
    }
    if (entry.model !== model) {
      throw invalidArgument(`Model used by GenerateContent request (models/${model}) and CachedContent (models/${entry.model}) has to be the same.`);
    }
    return { tools: entry.tools, systemInstruction: entry.systemInstruction, contents: [...entry.contents, ...req.contents] };
  }

  #fail(err: GoogleError, record: GeminiRecord): Reply {
    record.status = err.code;
    record.error = err.status;
    return { kind: 'json', status: err.code, body: err.body(), slowMs: 0 };
  }

  #readAndWrite(replica: number, tokens: TokenSeq, now: number): number {
    if (tokens.count < MIN_IMPLICIT_TOKENS) return 0;
    const cache = this.#caches[replica]!;
    const keys = tokens.blockKeys();
    const hits = cache.read(keys, now, this.#ttlMs);
    cache.write(keys, now, this.#ttlMs);
    return hits * BLOCK_TOKENS;
  }

  /** countTokens: `{contents}` alone, or `{generateContentRequest}` (its cache counted as cached). */
  #count(body: Json): Json {
    if (body.contents !== undefined && (body.generateContentRequest ?? body.generate_content_request) !== undefined) {
      throw invalidArgument('contents and generate_content_request are mutually exclusive.');
    }
    const inner = body.generateContentRequest ?? body.generate_content_request;
    let prompt: Prompt;
    let cached = 0;
    if (inner !== undefined) {
      if (!isObject(inner)) throw invalidArgument("Invalid value at 'generate_content_request', expected an object.");
      const req = readGenerateRequest(inner, 'GenerateContentRequest');
      const model = typeof inner.model === 'string' ? modelId(inner.model) : '';
      if (req.cachedContent !== null) cached = this.#store.get(req.cachedContent, this.#now()).tokens;
      prompt = req.cachedContent === null ? { tools: req.tools, systemInstruction: req.systemInstruction, contents: req.contents } : this.#prompt(req, model === '' ? this.#store.get(req.cachedContent, this.#now()).model : model, this.#now());
    } else {
      prompt = { tools: [], systemInstruction: null, contents: readContents(body.contents, false, 'CountTokensRequest') };
    }
    const total = new TokenSeq(renderPrompt(prompt)).count;
    return { totalTokens: total, ...(cached > 0 ? { cachedContentTokenCount: cached } : {}), promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }] };
  }

  #cachedContents(method: string, id: string | null, url: URL, bodyText: string): unknown {
    const now = this.#now();
    const name = id === null ? null : `cachedContents/${id}`;
    if (name === null && method === 'POST') return resource(this.#store.create(parseJson(bodyText), now, (p) => new TokenSeq(renderPrompt(p)).count));
    if (name === null && method === 'GET') {
      const page = this.#store.list(now, Number(url.searchParams.get('pageSize') ?? 0), url.searchParams.get('pageToken'));
      return { cachedContents: page.entries.map(resource), ...(page.next === null ? {} : { nextPageToken: page.next }) };
    }
    if (name !== null && method === 'GET') return resource(this.#store.get(name, now));
    if (name !== null && method === 'PATCH') return resource(this.#store.patch(name, parseJson(bodyText), now));
    if (name !== null && method === 'DELETE') {
      this.#store.delete(name, now);
      return {};
    }
    throw new GoogleError(405, `Method ${method} not allowed on ${url.pathname}.`, 'UNIMPLEMENTED');
  }

  #listModels(id: string | null): unknown {
    const model = (name: string): Json => ({
      name: `models/${name}`, version: '001', displayName: name, inputTokenLimit: this.#contextTokens, outputTokenLimit: 65_536,
      supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent'], thinking: true,
    });
    if (id === null) return { models: this.#models.map(model) };
    return model(modelId(decodeURIComponent(id)));
  }

  #record(path: string, action: GeminiAction, model: string): GeminiRecord {
    const record: GeminiRecord = {
      seq: this.records.length + 1, path, action, model, stream: false, status: 0, error: null, promptTokens: 0, cachedTokens: 0, cachedContent: null,
      candidatesTokens: 0, thoughtsTokens: 0, signatures: { returned: 0, dropped: 0 }, receivedAt: this.#now(),
    };
    this.records.push(record);
    return record;
  }

  stats(): GeminiNativeStats {
    const out: GeminiNativeStats = { requests: 0, ok: 0, errors: 0, promptTokens: 0, cachedTokens: 0, cachedContents: this.#store.stats(this.#now()) };
    for (const r of this.records) {
      if (r.action === 'countTokens') continue;
      out.requests++;
      if (r.status === 200) out.ok++;
      else if (r.status >= 400) out.errors++;
      out.promptTokens += r.promptTokens;
      out.cachedTokens += r.cachedTokens;
    }
    return out;
  }

  reset(): void {
    this.records.length = 0;
    for (const cache of this.#caches) cache.clear();
    this.#router.reset();
    this.#store.clear();
    this.#book.clear();
  }
}

/**
 * Gemini 3 and later answer 400 for any call of the current turn without a signature
 * (ai.google.dev/gemini-api/docs/thought-signatures); 2.5 and before do not require them.
 */
export function validatesEveryCall(model: string): boolean {
  const major = /^gemini-(\d+)/.exec(model)?.[1];
  return major !== undefined && Number(major) >= 3;
}
