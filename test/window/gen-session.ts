/**
 * Generator of realistic session logs, deterministic for a seed (small seeded PRNG, no
 * fast-check), that drives the real loop: apply client events -> build -> log llm.req -> apply ->
 * log llm.resp -> apply. User turns, replies with thinking and opaque blocks from two origins,
 * batches of 1-3 parallel tool calls (ids sometimes reused across batches) with results (some
 * large, multi-line or one long line, over the cap), upstream errors and aborted replies,
 * occasional client rewrites (partial, or a whole-history compaction), summaries added and
 * revoked, system prompt and catalog changes, resumes, origin switches and params changes. The
 * default recipe is small, so high water is crossed every few turns.
 *
 * Reused by the window's property tests, the lead's benchmark and the CLI tests.
 */
import { canonicalDigest } from '../../src/core/canonical.js';
import type { EventBody, LogEvent, Recipe } from '../../src/core/events.js';
import type { NeutralMessage, OpaqueBlock, Origin, RequestParams, ToolCall, ToolSpec } from '../../src/core/types.js';
import { WindowState, type WindowInput, type WindowResult } from '../../src/window/index.js';
import { blocksFor, largeResult, longLine, mulberry32, sentence, type Rng } from './gen-text.js';

export const ORIGIN_A: Origin = { provider: 'anthropic', model: 'claude-test' };
export const ORIGIN_B: Origin = { provider: 'openrouter', model: 'muse-test' };
export const ROUTE = 'test-route';

export interface GenOptions {
  /** Overrides of the small default recipe (system policy: by seed unless given). */
  recipe?: Partial<Recipe>;
  rewrites?: boolean;
  summaries?: boolean;
  originSwitches?: boolean;
  /** Head system changes, catalog changes, resumes. */
  sessionChanges?: boolean;
  /** Upstream errors and aborted replies. */
  failures?: boolean;
}

export interface GeneratedRequest {
  seq: number;
  input: WindowInput;
  result: WindowResult;
  /**
   * Built with the last batch only partly answered (a client that sends results over several
   * requests): its unanswered calls are left out, and come back with their results, so the next
   * request need not extend this one.
   */
  partial: boolean;
}

export interface GeneratedSession {
  events: LogEvent[];
  /** Every request as the live loop built it, in order. */
  requests: GeneratedRequest[];
}

export function smallRecipe(overrides: Partial<Recipe> = {}): Recipe {
  return {
    version: 'window-v1', route: ROUTE, context: 8192, output_reserve: 512, high_water: 2400, low_water: 1200,
    max_result_tokens: 200, protected_entries: 4, estimator: 'bytes/3', system: 'follow', client_drops: 'follow', ...overrides,
  };
}

/** The events of a generated session of `size` requests. */
export function generateSession(seed: number, size: number, options: GenOptions = {}): LogEvent[] {
  return runSession(seed, size, options).events;
}

export function runSession(seed: number, size: number, options: GenOptions = {}): GeneratedSession {
  return new SessionGen(seed, options).run(size);
}

const TOOLS: ToolSpec[] = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
  { type: 'function', function: { name: 'run', description: 'Run a shell command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } } },
  { type: 'function', function: { name: 'grep', parameters: { type: 'object', properties: { pattern: { type: 'string' }, path: { type: 'string' } } } } },
];
const EXTRA_TOOL: ToolSpec = { type: 'function', function: { name: 'write_file', description: 'Write a file', parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } } } };

class SessionGen {
  readonly #rng: Rng;
  readonly #opts: Required<Omit<GenOptions, 'recipe'>>;
  readonly #state = new WindowState();
  readonly #events: LogEvent[] = [];
  readonly #requests: GeneratedRequest[] = [];
  #recipe: Recipe;
  #seq = 0;
  #live: { seq: number; role: NeutralMessage['role'] }[] = [];
  #pending: ToolCall[] = [];
  #partial = false;
  #origin = ORIGIN_A;
  #params: RequestParams = { temperature: 0.2 };
  #n = 0;
  #systemVersion = 0;
  #summaries: number[] = [];
  #extraTool = false;

  constructor(seed: number, options: GenOptions) {
    this.#rng = mulberry32(seed);
    this.#opts = { rewrites: true, summaries: true, originSwitches: true, sessionChanges: true, failures: true, ...options };
    this.#recipe = smallRecipe({ system: this.#rng() < 0.5 ? 'follow' : 'append', ...options.recipe });
  }

  run(size: number): GeneratedSession {
    this.#emit({ type: 'session.start', recipe: this.#recipe, ids: [] });
    this.#emit({ type: 'catalog', tools: TOOLS });
    this.#emit({ type: 'client.msg', msg: { role: 'system', content: this.#systemText() }, head: true });
    this.#userMessage();
    let retry = false;
    while (this.#requests.length < size) {
      if (!retry) this.#clientStep();
      retry = this.#request();
    }
    return { events: this.#events, requests: this.#requests };
  }

  #emit(body: EventBody): LogEvent {
    this.#seq++;
    const event = { ...body, seq: this.#seq, ts: new Date(Date.UTC(2026, 9, 1) + this.#seq * 1000).toISOString() } as LogEvent;
    this.#events.push(event);
    this.#state.apply(event);
    if ((event.type === 'client.msg' && event.head !== true) || (event.type === 'llm.resp' && event.aborted !== true)) {
      this.#live.push({ seq: event.seq, role: event.type === 'llm.resp' ? 'assistant' : event.msg.role });
    }
    return event;
  }

  #chance(p: number): boolean {
    return this.#rng() < p;
  }

  #int(lo: number, hi: number): number {
    return lo + Math.floor(this.#rng() * (hi - lo + 1));
  }

  /** Returns true when the client will ask again without new messages. */
  #request(): boolean {
    const input: WindowInput = { route: ROUTE, model: this.#origin.model, origin: this.#origin, params: this.#params };
    const result = this.#state.build(input);
    const req = this.#emit({
      type: 'llm.req', digest: result.digest, recipe_version: this.#recipe.version, route: ROUTE, model: input.model, origin: input.origin,
      params: input.params, elided: result.elided, ...(result.folded.length === 0 ? {} : { folded: result.folded }), est_tokens: result.estTokens,
    });
    this.#requests.push({ seq: req.seq, input, result, partial: this.#partial });
    if (this.#opts.failures && this.#chance(0.04)) {
      this.#emit({ type: 'llm.error', req: req.seq, status: 529, body: 'overloaded' });
      return true;
    }
    if (this.#opts.failures && this.#chance(0.04)) {
      this.#emit({ type: 'llm.resp', req: req.seq, reply: { content: sentence(this.#rng, 3), finish_reason: null }, origin: this.#origin, timings: { total_ms: 40 }, aborted: true });
      return true;
    }
    if (this.#partial) {
      this.#emit({ type: 'llm.resp', req: req.seq, reply: { content: null, finish_reason: null }, origin: this.#origin, timings: { total_ms: 5 }, aborted: true });
      return false;
    }
    this.#reply(req.seq);
    return false;
  }

  #reply(reqSeq: number): void {
    const calls: ToolCall[] = [];
    if (this.#chance(0.6)) {
      const count = this.#int(1, 3);
      for (let i = 0; i < count; i++) {
        // Some providers number calls per reply: the same id comes back in a later batch.
        const reused = `call_r${i}`;
        const id = this.#chance(0.15) && !calls.some((c) => c.id === reused) ? reused : `call_${++this.#n}`;
        const tool = TOOLS[this.#int(0, TOOLS.length - 1)]!;
        calls.push({ id, name: tool.function.name, arguments: JSON.stringify({ path: `src/file${this.#int(1, 40)}.ts` }) });
      }
    }
    const thinking = this.#chance(0.8) ? sentence(this.#rng, this.#int(8, 50)) : undefined;
    const blocks: OpaqueBlock[] | undefined = thinking !== undefined && this.#chance(0.75) ? blocksFor(this.#origin, thinking, ++this.#n) : undefined;
    const content = calls.length > 0 ? (this.#chance(0.5) ? null : sentence(this.#rng, 6)) : sentence(this.#rng, this.#int(10, 80));
    this.#emit({
      type: 'llm.resp', req: reqSeq, origin: this.#origin, timings: { ttfb_ms: 10, total_ms: 90 },
      reply: { content, thinking, blocks, tool_calls: calls.length > 0 ? calls : undefined, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop', usage: { prompt_tokens: 100, completion_tokens: 20 } },
    });
    this.#pending = calls;
  }

  #clientStep(): void {
    this.#partial = false;
    if (this.#pending.length > 1 && this.#chance(0.04)) {
      // Answer some calls now and the rest with the next request (no reply in between).
      const now = this.#int(1, this.#pending.length - 1);
      for (const c of this.#pending.slice(0, now)) this.#toolResult(c);
      this.#pending = this.#pending.slice(now);
      this.#partial = true;
      return;
    }
    if (this.#pending.length > 0) {
      const calls = this.#pending;
      this.#pending = [];
      if (this.#chance(0.05)) {
        // The client moves on without answering every call.
        for (const c of calls.slice(0, this.#int(0, calls.length - 1))) this.#toolResult(c);
        this.#userMessage();
        return;
      }
      const order = this.#chance(0.2) ? [...calls].reverse() : calls;
      for (const c of order) this.#toolResult(c);
      return;
    }
    this.#sessionEvents();
    if (this.#chance(0.02)) this.#emit({ type: 'client.msg', msg: { role: 'system', content: `Note: ${sentence(this.#rng, 5)}` } });
    this.#userMessage();
  }

  #sessionEvents(): void {
    const o = this.#opts;
    if (o.rewrites && this.#live.length > 2 && this.#chance(0.05)) {
      const k = this.#int(1, this.#live.length - 1);
      this.#rewrite(this.#live[k]!.seq);
    } else if (o.rewrites && this.#live.length > 0 && this.#chance(0.03)) {
      // A client that compacted its whole history.
      this.#rewrite(this.#chance(0.5) ? this.#live[0]!.seq : 1);
      this.#emit({ type: 'client.msg', msg: { role: 'user', content: 'What did we do so far?' } });
      this.#emit({ type: 'client.msg', msg: { role: 'assistant', content: `Summary: ${sentence(this.#rng, 30)}` } });
    }
    if (o.summaries && this.#live.length > 6 && this.#chance(0.06)) {
      const a = this.#int(0, this.#live.length - 4);
      const b = this.#int(a, this.#live.length - 1);
      const from = this.#live[a]!.seq;
      const to = this.#live[b]!.seq;
      const ev = this.#emit({ type: 'summary.add', from, to, text: `[summary of ${from}-${to}] ${sentence(this.#rng, 20)}`, source_digest: canonicalDigest({ from, to }) });
      this.#summaries.push(ev.seq);
    }
    if (o.summaries && this.#summaries.length > 0 && this.#chance(0.04)) {
      const i = this.#int(0, this.#summaries.length - 1);
      this.#emit({ type: 'summary.revoke', summary: this.#summaries[i]! });
      this.#summaries.splice(i, 1);
    }
    if (o.sessionChanges && this.#chance(0.04)) {
      this.#systemVersion = this.#chance(0.3) ? 0 : this.#systemVersion + 1;
      this.#emit({ type: 'client.msg', msg: { role: 'system', content: this.#systemText() }, head: true });
    }
    if (o.sessionChanges && this.#chance(0.03)) {
      this.#extraTool = !this.#extraTool;
      this.#emit({ type: 'catalog', tools: this.#extraTool ? [...TOOLS, EXTRA_TOOL] : TOOLS });
    }
    if (o.sessionChanges && this.#chance(0.03)) {
      const cap = this.#chance(0.3) ? this.#pick([150, 200, 300]) : this.#recipe.max_result_tokens;
      this.#recipe = { ...this.#recipe, max_result_tokens: cap };
      this.#emit({ type: 'session.resume', recipe: this.#recipe });
    }
    if (o.originSwitches && this.#chance(0.08)) this.#origin = this.#origin === ORIGIN_A ? ORIGIN_B : ORIGIN_A;
    if (this.#chance(0.04)) this.#params = { temperature: this.#pick([0, 0.2, 0.7]), ...(this.#chance(0.5) ? { max_tokens: this.#int(100, 2000) } : {}) };
  }

  #pick<T>(xs: readonly T[]): T {
    return xs[this.#int(0, xs.length - 1)]!;
  }

  #rewrite(fromSeq: number): void {
    this.#emit({ type: 'client.rewrite', from_seq: fromSeq, reason: 'test' });
    this.#live = this.#live.filter((e) => e.seq < fromSeq);
  }

  #systemText(): string {
    return `You are a coding agent (prompt v${this.#systemVersion}). Be brief.`;
  }

  #userMessage(): void {
    const text = `User turn ${++this.#n}: ${sentence(this.#rng, this.#int(4, 40))}`;
    const content = this.#chance(0.05) ? [{ type: 'text' as const, text }] : text;
    this.#emit({ type: 'client.msg', msg: { role: 'user', content } });
  }

  #toolResult(call: ToolCall): void {
    const roll = this.#rng();
    const content = roll < 0.3 ? largeResult(this.#rng, this.#int(30, 140)) : roll < 0.35 ? longLine(this.#rng, this.#int(1500, 4000)) : sentence(this.#rng, this.#int(3, 30));
    this.#emit({ type: 'client.msg', msg: { role: 'tool', tool_call_id: call.id, content } });
  }
}
