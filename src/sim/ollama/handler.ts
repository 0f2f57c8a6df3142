/**
 * The simulator's Ollama mode: `POST /api/chat`, NDJSON by default, one KV slot (kv-slot.ts), the
 * `[[...]]` directives of the last message (directives.ts), and Ollama's own error shapes.
 *
 * prompt_eval_duration is reported, not waited for. A request that asks with the header
 * `x-sim-delay-scale: F` (0 < F <= 1) is also delayed by F x that duration (at most 10 s), so a
 * test can see a cold prefix take longer without a run taking minutes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { MODES } from '../modes.js';
import { planReply, type ReplyPlan } from '../replies.js';
import { TokenSeq } from '../tokens.js';
import { EVAL_NS_PER_TOKEN, KvSlot, LOAD_NS, PROMPT_EVAL_NS_PER_TOKEN, WARM_LOAD_NS } from './kv-slot.js';
import { ollamaStreamLines, ollamaWhole, type OllamaMetrics } from './reply.js';
import { renderOllamaPrompt, truncateToFit } from './render.js';
import { OllamaError, parseOllamaChat, type OllamaRequest } from './request.js';

export const OLLAMA_CHAT_PATH = '/api/chat';
export const DELAY_HEADER = 'x-sim-delay-scale';
const MAX_DELAY_MS = 10_000;

export interface OllamaSimOptions {
  /** The simulator's clock (ms). */
  now: () => number;
  /** num_ctx when a request sets none. */
  contextTokens: number;
}

export type OllamaOutcome =
  | { kind: 'error'; error: OllamaError; slowMs: number }
  | { kind: 'reply'; stream: boolean; lines: Record<string, unknown>[]; slowMs: number; delayMs: number };

export class OllamaSim {
  readonly #slot = new KvSlot();
  readonly #opts: OllamaSimOptions;

  constructor(opts: OllamaSimOptions) {
    this.#opts = opts;
  }

  /** One chat request, free of HTTP. */
  answer(bodyText: string, delayScale = 0): OllamaOutcome {
    let req: OllamaRequest;
    try {
      req = parseOllamaChat(bodyText);
    } catch (err) {
      if (err instanceof OllamaError) return { kind: 'error', error: err, slowMs: 0 };
      throw err;
    }
    const numCtx = req.numCtx ?? this.#opts.contextTokens;
    let tokens = new TokenSeq(renderOllamaPrompt(req.tools, req.messages));
    const last = req.messages.at(-1);
    const plan = planReply(last === undefined ? [] : [{ role: last.role, content: last.content }], tokens.digest, MODES.openai);
    if (plan.failure?.kind === 'error') {
      const status = plan.failure.status;
      const error = new OllamaError(status, `Simulated error ${status} (asked for by [[error ${status}]]).`, 'sim_directed_error');
      return { kind: 'error', error, slowMs: plan.slowMs };
    }
    if (plan.failure?.kind === 'overflow' || (tokens.count > numCtx && !req.truncate)) {
      return { kind: 'error', error: contextError(tokens.count, numCtx), slowMs: plan.slowMs };
    }
    if (tokens.count > numCtx) {
      const kept = truncateToFit(req.tools, req.messages, (prompt) => new TokenSeq(prompt).count <= numCtx);
      if (kept === null) return { kind: 'error', error: contextError(tokens.count, numCtx), slowMs: plan.slowMs };
      tokens = new TokenSeq(renderOllamaPrompt(req.tools, kept));
    }

    const now = this.#opts.now();
    const { loaded, cachedTokens } = this.#slot.admit(req.model, numCtx, tokens, now);
    this.#slot.release(req.keepAliveMs, now);
    const shown: ReplyPlan = req.think === false ? { ...plan, thinking: null } : plan;
    const metrics: OllamaMetrics = {
      promptEvalCount: tokens.count,
      promptEvalNs: (tokens.count - cachedTokens) * PROMPT_EVAL_NS_PER_TOKEN,
      evalCount: shown.completionTokens - (shown === plan ? 0 : plan.reasoningTokens),
      evalNs: 0,
      loadNs: loaded ? LOAD_NS : WARM_LOAD_NS,
    };
    metrics.evalNs = metrics.evalCount * EVAL_NS_PER_TOKEN;
    const meta = { model: req.model, createdAt: new Date(now).toISOString() };
    const delayMs = Math.min(MAX_DELAY_MS, (metrics.promptEvalNs / 1e6) * delayScale);
    if (plan.streamError && !req.stream) return { kind: 'error', error: streamError(500), slowMs: plan.slowMs };
    const lines = req.stream ? ollamaStreamLines(meta, shown, metrics, plan.streamError ? streamError(200) : null) : [ollamaWhole(meta, shown, metrics)];
    return { kind: 'reply', stream: req.stream, lines, slowMs: plan.slowMs, delayMs };
  }

  /** Answers over HTTP; the server has read the body already. */
  async serve(req: IncomingMessage, res: ServerResponse, bodyText: string): Promise<void> {
    const raw = Number(req.headers[DELAY_HEADER]);
    const outcome = this.answer(bodyText, Number.isFinite(raw) && raw > 0 ? Math.min(raw, 1) : 0);
    if (outcome.slowMs > 0) await sleep(outcome.slowMs);
    if (outcome.kind === 'error') return sendJson(res, outcome.error.status, outcome.error.body());
    if (outcome.delayMs > 0) await sleep(outcome.delayMs);
    if (!outcome.stream) return sendJson(res, 200, outcome.lines[0]);
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    for (const [i, line] of outcome.lines.entries()) {
      if (i > 0 && outcome.slowMs > 0) await sleep(outcome.slowMs);
      if (res.destroyed) return;
      res.write(`${JSON.stringify(line)}\n`);
    }
    res.end();
  }

  /** Unloads the model (an empty slot). */
  reset(): void {
    this.#slot.reset();
  }
}

/**
 * With `truncate: false`, Ollama answers an over-long prompt with llama-server's own JSON error as
 * the text of its `error` (as a real server was measured to answer).
 */
export function contextError(promptTokens: number, numCtx: number): OllamaError {
  const inner = {
    error: {
      code: 400,
      message: `request (${promptTokens} tokens) exceeds the available context size (${numCtx} tokens), try increasing it`,
      type: 'exceed_context_size_error',
      n_prompt_tokens: promptTokens,
      n_ctx: numCtx,
    },
  };
  return new OllamaError(400, JSON.stringify(inner), 'exceed_context_size_error');
}

function streamError(status: number): OllamaError {
  return new OllamaError(status, 'an error was encountered while running the model: unexpected EOF (asked for by [[stream-error]])', 'stream_error');
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (res.destroyed) return;
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text);
}
