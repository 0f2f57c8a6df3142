/**
 * OpenRouter end to end (official client -> proxy -> tap -> simulator's openrouter mode): each
 * reply's reasoning_details go back on their own assistant message, unchanged and alone (no
 * reasoning_content beside them); usage.cost reaches the log; Claude through OpenRouter caches
 * only with cache_control; the session key goes as x-session-id, hashed; after the window elides,
 * replies made before the elision go back without their details but with their thinking text.
 * The simulator answers 400 to any details that changed, moved, or outlived their prefix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../bench/agent.js';
import { sha256Hex } from '../../src/core/canonical.js';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { readSessions, replayAll, tag } from './harness.js';
import { assistantsOf, exchanges, sseData, startReasoningWorld, type Exchange, type ReasoningWorld, type WireAssistant } from './reasoning-world.js';

let w: ReasoningWorld;
beforeAll(async () => {
  // requireReasoning: a reply of ours whose reasoning did not come back (as details, or as its text) is a 400.
  w = await startReasoningWorld(`
[models.orm]
provider = "or"
model = "meta/muse-spark-1.3"

[models.claude-cc]
provider = "or"
model = "anthropic/claude-sonnet-4.6"
cache_control = "ephemeral"

[models.or-small]
provider = "or"
model = "meta/muse-spark-1.3"
context = 9000
output_reserve = 1000
max_result_tokens = 2000
`, { requireReasoning: true });
});
afterAll(async () => {
  await w?.close();
});

/** What the upstream streamed for one request: its reply's key, its details merged by index, its cost. */
interface Streamed {
  key: string;
  details: Record<string, unknown>[];
  cost: unknown;
}

/**
 * Merges the stream as OpenRouter documents it, independently of the proxy's own code: fragments
 * with the same `index` continue one item, text fields are concatenated, others take the latest
 * non-null value.
 */
function streamed(ex: Exchange): Streamed {
  const details: Record<string, unknown>[] = [];
  let content = '';
  let firstCall = '';
  let cost: unknown;
  for (const payload of sseData(ex.response)) {
    const usage = payload.usage as { cost?: unknown } | null | undefined;
    if (usage !== null && usage !== undefined) cost = usage.cost;
    const delta = (payload.choices as { delta?: Record<string, unknown> }[] | undefined)?.[0]?.delta;
    if (delta === undefined) continue;
    content += typeof delta.content === 'string' ? delta.content : '';
    firstCall ||= (delta.tool_calls as { id?: string }[] | undefined)?.[0]?.id ?? '';
    for (const frag of (delta.reasoning_details as Record<string, unknown>[] | undefined) ?? []) {
      const item = details.find((d) => d.index === frag.index);
      if (item === undefined) {
        details.push({ ...frag });
        continue;
      }
      for (const [k, v] of Object.entries(frag)) {
        if ((k === 'text' || k === 'data' || k === 'summary') && typeof v === 'string') item[k] = `${String(item[k] ?? '')}${v}`;
        else if (v !== null) item[k] = v;
      }
    }
  }
  return { key: firstCall !== '' ? firstCall : `text:${content}`, details, cost };
}

function keyOf(m: WireAssistant): string {
  return m.tool_calls?.[0]?.id ?? `text:${m.content ?? ''}`;
}

async function sessionWith(match: (events: LogEvent[]) => boolean): Promise<[string, LogEvent[]]> {
  for (const entry of await readSessions(w)) if (match(entry[1])) return entry;
  throw new Error('no such session');
}

const hasSystem = (text: string) => (events: LogEvent[]) =>
  events.some((e) => e.type === 'client.msg' && e.msg.role === 'system' && e.msg.content === text);

const responses = (events: LogEvent[]) => events.filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp');

describe('openrouter preset', () => {
  it('a tool session with reasoning: details back on their own messages, unchanged and alone; cost logged; x-session-id hashed', async () => {
    const from = w.tap.requests.length;
    const simFrom = w.sim.requests.length;
    const raw = tag('or-client-session');
    const run = await runAgent(w.client, 'orm', { requests: 12, stream: true, seed: 31, system: tag('or-agent'), headers: { 'x-session-id': raw } });
    expect(run.steps).toHaveLength(12);
    const wire = exchanges(w, 'openrouter', from);
    expect(wire).toHaveLength(12);
    expect(wire.every((x) => x.status === 200)).toBe(true);
    const sims = w.sim.requests.slice(simFrom);
    expect(sims.every((r) => r.mode === 'openrouter' && r.status === 200)).toBe(true);

    // Assistant message i of every request is reply i, with its details as the upstream streamed
    // them (the same JSON text), and no reasoning text beside them.
    const made = wire.map((x) => streamed(x));
    let carried = 0;
    wire.forEach((x, k) => {
      const ours = assistantsOf(x);
      expect(ours).toHaveLength(k);
      for (const [i, m] of ours.entries()) {
        const reply = made[i]!;
        expect(keyOf(m)).toBe(reply.key);
        expect(reply.details.map((d) => d.type)).toEqual(['reasoning.text', 'reasoning.encrypted']);
        expect(JSON.stringify(m.reasoning_details)).toBe(JSON.stringify(reply.details));
        expect(m.reasoning_content).toBeUndefined();
        expect(m.reasoning).toBeUndefined();
        carried++;
      }
    });
    expect(carried).toBe(11 * 12 / 2);
    const opaque = sims.reduce((sum, r) => ({ returned: sum.returned + r.opaque.returned, dropped: sum.dropped + r.opaque.dropped, withText: sum.withText + r.opaque.withText }), { returned: 0, dropped: 0, withText: 0 });
    expect(opaque).toEqual({ returned: carried, dropped: 0, withText: 0 });

    // The session key: sha256 of the proxy's session id, as x-session-id and prompt_cache_key; never the client's id.
    const [id, events] = await sessionWith((ev) => ev.some((e) => e.type === 'session.start' && e.ids.includes(raw)));
    const key = sha256Hex(id);
    for (const x of wire) {
      expect(x.headers['x-session-id']).toBe(key);
      expect(x.body.prompt_cache_key).toBe(key);
      expect(JSON.stringify(x.headers)).not.toContain(raw);
    }

    // usage.cost as the upstream reported it, in llm.resp usage.cost_usd.
    const costs = responses(events).map((e) => e.reply.usage?.cost_usd);
    expect(costs).toEqual(sims.map((r) => r.costUsd));
    expect(costs).toEqual(wire.map((x) => streamed(x).cost));
    expect(costs.every((c) => typeof c === 'number' && c > 0)).toBe(true);
    // Each reply is logged with its details as one block of its origin.
    for (const [i, e] of responses(events).entries()) {
      expect(e.reply.blocks).toEqual([{ kind: 'openrouter.reasoning_details', origin: { provider: 'or', model: 'meta/muse-spark-1.3' }, data: made[i]!.details }]);
    }
  });

  it('Claude through OpenRouter: top-level cache_control and cache hits when the route asks, none when it does not', async () => {
    const from = w.tap.requests.length;
    const simFrom = w.sim.requests.length;
    const system = tag('or-claude-cc');
    await runAgent(w.client, 'claude-cc', { requests: 4, seed: 32, system, resultBytes: 6000 });
    const asked = exchanges(w, 'openrouter', from);
    const askedSim = w.sim.requests.slice(simFrom);
    expect(asked).toHaveLength(4);
    for (const x of asked) {
      expect(x.body.model).toBe('anthropic/claude-sonnet-4.6');
      expect(x.body.cache_control).toEqual({ type: 'ephemeral' });
    }
    // Request 2 is the first over the 1024-token minimum: it writes; the later ones read.
    expect(askedSim.slice(2).every((r) => r.cachedTokens > 0)).toBe(true);
    const logged = responses((await sessionWith(hasSystem(system)))[1]).map((e) => e.reply.usage!);
    expect(logged[1]!.cache_write_tokens).toBeGreaterThan(0);
    expect(logged.slice(2).every((u) => (u.cached_tokens ?? 0) > 0)).toBe(true);

    const from2 = w.tap.requests.length;
    const simFrom2 = w.sim.requests.length;
    await runAgent(w.client, 'or/anthropic/claude-sonnet-4.6', { requests: 4, seed: 33, system: tag('or-claude-plain'), resultBytes: 6000 });
    const plain = exchanges(w, 'openrouter', from2);
    expect(plain).toHaveLength(4);
    for (const x of plain) expect(x.body.cache_control).toBeUndefined();
    const plainSim = w.sim.requests.slice(simFrom2);
    expect(plainSim.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    // Long enough to cache, had the request asked.
    expect(plainSim.slice(1).every((r) => r.promptTokens > 1024)).toBe(true);
    expect(plainSim.map((r) => r.cachedTokens)).toEqual([0, 0, 0, 0]);
  });

  it('after the window elides: nothing refused; replies made before an elision go back without details but with their thinking', async () => {
    const from = w.tap.requests.length;
    const simFrom = w.sim.requests.length;
    const system = tag('or-trim');
    await runAgent(w.client, 'or-small', { requests: 16, seed: 34, system, resultBytes: 3000 });
    const wire = exchanges(w, 'openrouter', from);
    expect(wire).toHaveLength(16);
    expect(w.sim.requests.slice(simFrom).every((r) => r.status === 200)).toBe(true);

    const events = (await sessionWith(hasSystem(system)))[1];
    const reqs = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
    const elisions = reqs.filter((r) => r.elided.length > 0).map((r) => ({ at: r.seq, from: Math.min(...r.elided) }));
    expect(elisions.length).toBeGreaterThanOrEqual(2);

    // Elided entries stay in place: the assistant messages of every request are the replies so far,
    // in order, a placeholder standing for the replies it names (one run of them, window-v2).
    const replies = responses(events);
    let stale = 0;
    let kept = 0;
    let runs = 0;
    wire.forEach((x, k) => {
      const sentAt = reqs[k]!.seq;
      let i = 0;
      for (const m of assistantsOf(x)) {
        const span = typeof m.content === 'string' ? /^\[elided seq=(\d+)(?:-(\d+))?\]$/.exec(m.content) : null;
        if (span !== null) {
          expect(replies[i]!.seq).toBe(Number(span[1]));
          if (span[2] !== undefined) runs++;
          while (i < k && replies[i]!.seq <= Number(span[2] ?? span[1])) i++;
          continue;
        }
        const reply = replies[i++]!;
        expect(keyOf(m)).toBe(keyOfReply(reply));
        // Stale: an entry before this reply was elided by a request made after it (and by this one's time).
        const isStale = elisions.some((el) => el.at <= sentAt && el.from < reply!.seq && reply!.seq < el.at);
        if (isStale) {
          expect(m.reasoning_details).toBeUndefined();
          expect(m.reasoning_content).toBe(reply!.reply.thinking);
          expect(m.reasoning_content!.length).toBeGreaterThan(0);
          stale++;
        } else {
          expect(JSON.stringify(m.reasoning_details)).toBe(JSON.stringify(reply!.reply.blocks![0]!.data));
          expect(m.reasoning_content).toBeUndefined();
          kept++;
        }
      }
      expect(i).toBe(k);
    });
    expect(runs).toBeGreaterThan(0);
    expect(stale).toBeGreaterThan(0);
    expect(kept).toBeGreaterThan(0);
    const sims = w.sim.requests.slice(simFrom);
    expect(sims.reduce((n, r) => n + r.opaque.returned, 0)).toBe(kept);
  });
});

function keyOfReply(e: EventOf<'llm.resp'>): string {
  return e.reply.tool_calls?.[0]?.id ?? `text:${e.reply.content ?? ''}`;
}

it('every logged request replays', async () => {
  const r = await replayAll(w);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
});
