/** Hand-built session logs for the stats tests: requests, replies with chosen usage, errors. */
import type { BreakCause, HintsRecord, LogEvent, Recipe } from '../../src/core/events.js';
import type { Usage } from '../../src/core/types.js';

export const RECIPE: Recipe = {
  version: 'window-v1', route: 'priced', context: 32768, output_reserve: 4096, high_water: 20000, low_water: 12000,
  max_result_tokens: 1000, protected_entries: 4, estimator: 'bytes/3', system: 'follow', client_drops: 'follow',
};

export class LogBuilder {
  readonly events: LogEvent[] = [];
  #seq = 0;
  #minute = 0;

  constructor(route = 'priced') {
    this.#push({ type: 'session.start', recipe: { ...RECIPE, route }, ids: [] });
  }

  /** A user message, a request and its reply with `usage` (undefined: the provider reported none). */
  turn(usage: Usage | undefined, opts: { route?: string; cause?: BreakCause; aborted?: boolean; hints?: HintsRecord; droppedBlocks?: number; key?: string } = {}): this {
    const req = this.request(opts);
    this.#push({
      type: 'llm.resp', req, origin: { provider: 'sim', model: 'sim-1' },
      reply: { content: 'ok', finish_reason: 'stop', ...(usage === undefined ? {} : { usage }), ...(opts.droppedBlocks === undefined ? {} : { dropped_blocks: opts.droppedBlocks }) },
      timings: { ttfb_ms: 12, total_ms: 40 },
      ...(opts.aborted === true ? { aborted: true as const } : {}),
    });
    return this;
  }

  /** A request the upstream refused. */
  failed(status: number, opts: { route?: string } = {}): this {
    const req = this.request(opts);
    this.#push({ type: 'llm.error', req, status, body: '{"error":{}}' });
    return this;
  }

  request(opts: { route?: string; cause?: BreakCause; hints?: HintsRecord; key?: string } = {}): number {
    this.#push({ type: 'client.msg', msg: { role: 'user', content: `question ${this.#seq}` } });
    return this.#push({
      type: 'llm.req', digest: 'd'.repeat(64), recipe_version: 'window-v1', route: opts.route ?? 'priced', model: 'sim-1',
      origin: { provider: 'sim', model: 'sim-1' }, params: {}, elided: [], est_tokens: 100,
      ...(opts.cause === undefined ? {} : { cause: opts.cause }), ...(opts.hints === undefined ? {} : { hints: opts.hints }),
      ...(opts.key === undefined ? {} : { key_name: opts.key }),
    });
  }

  /** The time the next event gets (events are a minute apart). */
  get nextTs(): number {
    return Date.UTC(2026, 9, 7, 12, this.#minute, 0);
  }

  #push(body: Record<string, unknown>): number {
    const seq = ++this.#seq;
    const ts = new Date(Date.UTC(2026, 9, 7, 12, this.#minute++, 0)).toISOString();
    this.events.push({ seq, ts, ...body } as LogEvent);
    return seq;
  }
}
