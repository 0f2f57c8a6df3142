/**
 * A long agent task through the real loop: one user message, then thousands of tool rounds (a
 * reply with one to three calls, then their generated results), with a user message now and then.
 * The shape in which elided replies pile up as placeholders (docs/decisions.md, Placeholders that
 * do not pile up). Deterministic for a seed. Used by the window's tests and by the benchmark.
 */
import type { EventBody, LogEvent, Recipe } from '../../src/core/events.js';
import type { ToolCall } from '../../src/core/types.js';
import { WindowState, type WindowInput } from '../../src/window/index.js';
import { ORIGIN_A, ROUTE, smallRecipe } from './gen-session.js';
import { largeResult, mulberry32, sentence } from './gen-text.js';

export interface LongSessionOptions {
  rounds: number;
  recipe: Partial<Recipe>;
  /** A user message after every this many rounds (the task's first one always). */
  userEvery?: number;
  seed?: number;
}

export interface LongSessionRequest {
  seq: number;
  estTokens: number;
  estBeforeTrim: number;
  trimmed: boolean;
  messages: number;
  /** Wall time of `build`, µs. */
  buildUs: number;
}

export interface LongSession {
  recipe: Recipe;
  events: LogEvent[];
  requests: LongSessionRequest[];
}

const TOOLS = [{ type: 'function' as const, function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

export function runLongSession(opts: LongSessionOptions): LongSession {
  const rng = mulberry32(opts.seed ?? 1);
  const recipe = smallRecipe(opts.recipe);
  const state = new WindowState();
  const events: LogEvent[] = [];
  const requests: LongSessionRequest[] = [];
  const input: WindowInput = { route: ROUTE, model: ORIGIN_A.model, origin: ORIGIN_A, params: {} };
  let seq = 0;
  let calls = 0;
  const emit = (body: EventBody): LogEvent => {
    const event = { ...body, seq: ++seq, ts: new Date(Date.UTC(2026, 9, 1) + seq * 1000).toISOString() } as LogEvent;
    events.push(event);
    state.apply(event);
    return event;
  };
  const user = (): void => {
    emit({ type: 'client.msg', msg: { role: 'user', content: `Task step: ${sentence(rng, 12)}` } });
  };

  emit({ type: 'session.start', recipe, ids: [] });
  emit({ type: 'catalog', tools: TOOLS });
  emit({ type: 'client.msg', msg: { role: 'system', content: 'You are a coding agent. Be brief.' }, head: true });
  user();
  for (let round = 0; round < opts.rounds; round++) {
    if (round > 0 && opts.userEvery !== undefined && round % opts.userEvery === 0) user();
    const t0 = performance.now();
    const r = state.build(input);
    const buildUs = (performance.now() - t0) * 1000;
    const req = emit({
      type: 'llm.req', digest: r.digest, recipe_version: recipe.version, route: ROUTE, model: input.model, origin: input.origin,
      params: input.params, elided: r.elided, ...(r.folded.length === 0 ? {} : { folded: r.folded }), est_tokens: r.estTokens,
    });
    requests.push({ seq: req.seq, estTokens: r.estTokens, estBeforeTrim: r.estBeforeTrim, trimmed: r.trimmed, messages: r.request.messages.length, buildUs });
    const batch: ToolCall[] = [];
    const n = 1 + Math.floor(rng() * 3);
    for (let i = 0; i < n; i++) batch.push({ id: `call_${++calls}`, name: 'read_file', arguments: `{"path":"src/file${Math.floor(rng() * 90)}.ts"}` });
    emit({
      type: 'llm.resp', req: req.seq, origin: ORIGIN_A, timings: { total_ms: 50 },
      reply: { content: rng() < 0.5 ? null : sentence(rng, 8), thinking: sentence(rng, 10 + Math.floor(rng() * 30)), tool_calls: batch, finish_reason: 'tool_calls' },
    });
    for (const c of batch) {
      const content = rng() < 0.6 ? largeResult(rng, 5 + Math.floor(rng() * 60)) : sentence(rng, 3 + Math.floor(rng() * 20));
      emit({ type: 'client.msg', msg: { role: 'tool', tool_call_id: c.id, content } });
    }
  }
  return { recipe, events, requests };
}
