/**
 * Cost of the next request as a session grows: build and digest the request that follows a
 * session of 10, 100 and 1000 requests, the way the live loop does it (the window state carried
 * from the previous request). A cold rebuild from every event (what replay of one request does)
 * is measured beside it.
 */
import type { LogEvent } from '../src/core/events.js';
import { WindowState, type WindowInput } from '../src/window/index.js';
import { generateSession, smallRecipe } from '../test/window/gen-session.js';
import { median } from './stats.js';

export interface WindowCostRow {
  requests: number;
  samples: number;
  /** Median µs to apply the new client events and build + digest the next request. */
  nextUs: number;
  /** Median µs to fold every event from scratch and build the same request. */
  coldUs: number;
  /** Median bytes of the request's canonical messages. */
  requestKb: number;
  events: number;
  heapMb: number;
}

/** A 32K-token window, so long sessions sit at high water and trim now and then. */
const RECIPE = smallRecipe({ context: 32768, output_reserve: 4096, high_water: 22937, low_water: 14336, max_result_tokens: 478 });

export function measureWindowCost(sizes: readonly number[], seeds: number): WindowCostRow[] {
  const rows: WindowCostRow[] = [];
  for (const size of sizes) {
    const next: number[] = [];
    const cold: number[] = [];
    const kb: number[] = [];
    let events = 0;
    let heapMb = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      const log = generateSession(seed, size + 1, { recipe: RECIPE });
      events = log.length;
      const lastReq = log.findLastIndex((e) => e.type === 'llm.req');
      // The new client events of the last request: everything after the previous reply.
      let firstNew = lastReq;
      while (firstNew > 0 && log[firstNew - 1]!.type !== 'llm.resp' && log[firstNew - 1]!.type !== 'llm.req') firstNew--;
      const state = new WindowState();
      for (let i = 0; i < firstNew; i++) {
        const e = log[i]!;
        if (e.type === 'llm.req') state.build(inputOf(e));
        state.apply(e);
      }
      const target = log[lastReq] as Extract<LogEvent, { type: 'llm.req' }>;
      global.gc?.();
      const t0 = process.hrtime.bigint();
      for (let i = firstNew; i < lastReq; i++) state.apply(log[i]!);
      const built = state.build(inputOf(target));
      const t1 = process.hrtime.bigint();
      if (built.digest !== target.digest) throw new Error(`bench: seed ${seed} size ${size}: digest differs from the generated log`);
      next.push(Number(t1 - t0) / 1000);
      kb.push(JSON.stringify(built.request.messages).length / 1024);
      heapMb = process.memoryUsage().heapUsed / 2 ** 20;

      const t2 = process.hrtime.bigint();
      const fresh = new WindowState();
      for (let i = 0; i < lastReq; i++) fresh.apply(log[i]!);
      const again = fresh.build(inputOf(target));
      const t3 = process.hrtime.bigint();
      if (again.digest !== target.digest) throw new Error('bench: cold rebuild differs');
      cold.push(Number(t3 - t2) / 1000);
    }
    rows.push({ requests: size, samples: seeds, nextUs: median(next), coldUs: median(cold), requestKb: median(kb), events, heapMb });
  }
  return rows;
}

function inputOf(e: Extract<LogEvent, { type: 'llm.req' }>): WindowInput {
  return { route: e.route, model: e.model, origin: e.origin, params: e.params };
}
