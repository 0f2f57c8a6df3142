/**
 * Hand-written session logs for unit tests: each event is applied to a live WindowState as it is
 * added, and `send` runs the proxy's loop step (build, then log llm.req with what it elided).
 */
import type { EventBody, LogEvent, Recipe } from '../../src/core/events.js';
import type { OpaqueBlock, Origin, RequestParams, ToolCall, ToolSpec } from '../../src/core/types.js';
import { WindowState, type WindowResult } from '../../src/window/index.js';
import { ORIGIN_A, smallRecipe } from './gen-session.js';

export interface ReplySpec {
  content?: string | null;
  thinking?: string;
  calls?: (string | ToolCall)[];
  blocks?: boolean | OpaqueBlock[];
  origin?: Origin;
  aborted?: boolean;
}

export const TOOL: ToolSpec = { type: 'function', function: { name: 'read', parameters: { type: 'object' } } };

export class LogBuilder {
  readonly events: LogEvent[] = [];
  readonly state = new WindowState();
  origin: Origin = ORIGIN_A;
  params: RequestParams = {};
  #seq = 0;

  constructor(recipe: Partial<Recipe> = {}, opts: { system?: string; tools?: ToolSpec[] } = {}) {
    this.add({ type: 'session.start', recipe: smallRecipe({ high_water: 100_000, low_water: 50_000, ...recipe }), ids: [] });
    if (opts.tools !== undefined) this.add({ type: 'catalog', tools: opts.tools });
    if (opts.system !== undefined) this.add({ type: 'client.msg', msg: { role: 'system', content: opts.system }, head: true });
  }

  add(body: EventBody): LogEvent {
    const event = { ...body, seq: ++this.#seq, ts: `2026-10-01T00:00:${String(this.#seq % 60).padStart(2, '0')}.000Z` } as LogEvent;
    this.events.push(event);
    this.state.apply(event);
    return event;
  }

  get lastSeq(): number {
    return this.#seq;
  }

  user(content: string): number {
    return this.add({ type: 'client.msg', msg: { role: 'user', content } }).seq;
  }

  tool(id: string, content: string): number {
    return this.add({ type: 'client.msg', msg: { role: 'tool', tool_call_id: id, content } }).seq;
  }

  system(content: string, head = true): number {
    return this.add({ type: 'client.msg', msg: { role: 'system', content }, ...(head ? { head: true as const } : {}) }).seq;
  }

  reply(spec: ReplySpec = {}): number {
    const origin = spec.origin ?? this.origin;
    const calls = (spec.calls ?? []).map((c) => (typeof c === 'string' ? { id: c, name: 'read', arguments: `{"id":"${c}"}` } : c));
    const n = this.#seq + 1;
    const thinking = spec.thinking ?? (spec.blocks === undefined ? undefined : `thinking ${n}`);
    const blocks = spec.blocks === true
      ? [{ kind: 'anthropic.thinking' as const, origin, data: { type: 'thinking', thinking, signature: `sig-${n}` }, before_call: 0 }]
      : spec.blocks === false ? undefined : spec.blocks;
    return this.add({
      type: 'llm.resp', req: 0, origin, timings: { total_ms: 1 }, ...(spec.aborted === true ? { aborted: true as const } : {}),
      reply: { content: spec.content === undefined ? `reply ${n}` : spec.content, thinking, blocks, tool_calls: calls.length > 0 ? calls : undefined, finish_reason: 'stop' },
    }).seq;
  }

  /** Build the next request and log it (llm.req with its digest and new elisions). */
  send(origin: Origin = this.origin, model = origin.model): WindowResult & { seq: number } {
    const r = this.state.build({ route: 'r', model, origin, params: this.params });
    const seq = this.add({ type: 'llm.req', digest: r.digest, recipe_version: this.state.recipe!.version, route: 'r', model, origin, params: this.params, elided: r.elided, ...(r.folded.length === 0 ? {} : { folded: r.folded }), est_tokens: r.estTokens }).seq;
    return { ...r, seq };
  }

  /** Build without logging (a request that is looked at, not sent). */
  peek(origin: Origin = this.origin, model = origin.model): WindowResult {
    return this.state.build({ route: 'r', model, origin, params: this.params });
  }
}

export function contents(r: WindowResult): (string | null)[] {
  return r.request.messages.map((m) => (typeof m.content === 'string' || m.content === null ? m.content : JSON.stringify(m.content)));
}

/** `n` lines of `width` ASCII characters each, numbered from 1. */
export function lines(n: number, width = 20): string {
  const out: string[] = [];
  for (let i = 1; i <= n; i++) out.push(`line ${i} `.padEnd(width, 'x'));
  return out.join('\n');
}
