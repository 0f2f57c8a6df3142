/**
 * Anthropic Messages through the proxy, with the official `openai` client: a tool session with
 * thinking in which the simulator (which signs each thinking block over its prefix and checks it
 * when it comes back) refuses nothing; the signed blocks go back from the log, unchanged and in
 * order, though the client dropped them; a top-level cache_control (a route that asks for it) makes the second request
 * read the cache and a route without it reads nothing; and after the window elides, the replies
 * made before the elision go back without their blocks (their signature no longer matches the
 * prefix) while later replies keep theirs. A request that ends inside a tool loop whose last reply
 * so lost its block asks for no thinking (the API's final-thinking-block rule); thinking comes
 * back when the user speaks again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { replayAll, tag } from './harness.js';
import { type Answer, ask, keep, lines, toolSession, TOOLS } from './wires-client.js';
import { anthropicThinking, asksThinking, breaksFinalThinkingRule, loopWithoutThinkingBlock, sessionWith, startWiresWorld, wire, type WireExchange, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    models: `
[models.claude]
provider = "an"
model = "claude-sim"
thinking = "enabled"

[models.claude-top]
provider = "an"
model = "claude-sim"
thinking = "enabled"
cache_control_at = "top-level"

[models.claude-nocache]
provider = "an"
model = "claude-sim"
thinking = "enabled"
cache_control = "off"

[models.claude-effort]
provider = "an"
model = "claude-sim"

[models.claude-small]
provider = "an"
model = "claude-sim"
thinking = "enabled"
context = 8000
output_reserve = 2000
max_result_tokens = 1000
`,
  });
});
afterAll(async () => {
  await w?.close();
});

interface WireBlock {
  type: string;
  thinking?: string;
  signature?: string;
  id?: string;
  text?: string;
  tool_use_id?: string;
}
interface WireTurn {
  role: 'user' | 'assistant';
  content: WireBlock[];
}

function turns(req: WireExchange, role: 'user' | 'assistant'): WireTurn[] {
  return (req.body.messages as WireTurn[]).filter((t) => t.role === role);
}

/** The signatures of the thinking blocks a request sends back, in order. */
function signaturesIn(req: WireExchange): string[] {
  return turns(req, 'assistant').flatMap((t) => t.content.filter((b) => b.type === 'thinking').map((b) => b.signature!));
}

describe('a tool session with thinking', () => {
  it('refuses nothing; the signed blocks come back unchanged, first in their turn, in order; thinking shown as reasoning_content', async () => {
    const t = tag('an-tools');
    const fromTap = w.tap.requests.length;
    const fromSim = w.sim.anthropicRequests.length;
    const answers = await toolSession(w, 'claude', t, { rounds: 6, resultTokens: 150, systemTokens: 1500 });

    const sim = w.sim.anthropicRequests.slice(fromSim);
    expect(sim.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    // Request k gives back one signed block per earlier reply, and the simulator checked each.
    expect(sim.map((r) => r.thinkingBlocksBack)).toEqual([0, 1, 2, 3, 4, 5]);

    const reqs = wire(w, '/anthropic/', fromTap);
    expect(reqs).toHaveLength(6);
    // The blocks as the simulator gave them, from its SSE replies.
    const given = reqs.map((r) => anthropicThinking(r.response));
    for (const [j, a] of answers.entries()) {
      expect(given[j]).toHaveLength(1);
      expect(a.reasoning).toMatch(/considered/);
      expect(a.reasoning).toBe(given[j]![0]!.thinking);
      expect(a.toolCalls.length).toBe(j > 0 && j % 3 === 0 ? 2 : 1);
    }
    for (const [k, req] of reqs.entries()) {
      expect(req.body.thinking).toMatchObject({ type: 'enabled' });
      expect(req.body.thinking.budget_tokens).toBeGreaterThanOrEqual(1024);
      expect(req.body.thinking.budget_tokens).toBeLessThan(req.body.max_tokens);
      const mine = turns(req, 'assistant');
      expect(mine).toHaveLength(k);
      mine.forEach((turn, j) => {
        // thinking first, then the calls, each the one the client holds.
        expect(turn.content[0]).toEqual(given[j]![0]);
        expect(turn.content.slice(1).map((b) => b.type)).toEqual(answers[j]!.toolCalls.map(() => 'tool_use'));
        expect(turn.content.slice(1).map((b) => b.id)).toEqual(answers[j]!.toolCalls.map((c) => c.id));
      });
    }
  });

  it('reasoning_effort on a route that sets no thinking asks for a budget from it', async () => {
    const t = tag('an-effort');
    const fromTap = w.tap.requests.length;
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: `${t} [[say fine]]` }];
    const low = await ask(w, 'claude-effort', messages, undefined, { body: { reasoning_effort: 'low' } });
    const none = await ask(w, 'claude-effort', [{ role: 'user', content: `${t} again [[say fine]]` }], undefined);
    const [withEffort, without] = wire(w, '/anthropic/', fromTap);
    expect(withEffort!.status).toBe(200);
    expect(withEffort!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(low.reasoning).toMatch(/considered/);
    expect(low.content).toBe('fine');
    expect(without!.body.thinking).toBeUndefined();
    expect(none.reasoning).toBe('');
  });
});

describe('the prompt cache', () => {
  it('top-level cache_control ("ephemeral"): cached tokens from the second request, each reading its predecessor', async () => {
    const t = tag('an-cache');
    const fromTap = w.tap.requests.length;
    const fromSim = w.sim.anthropicRequests.length;
    const answers = await toolSession(w, 'claude-top', t, { rounds: 4, resultTokens: 100, systemTokens: 1500 });
    for (const req of wire(w, '/anthropic/', fromTap)) expect(req.body.cache_control).toEqual({ type: 'ephemeral' });
    expect(w.sim.anthropicRequests.slice(fromSim).map((r) => r.cacheMarkers)).toEqual([1, 1, 1, 1]);

    const cached = answers.map((a) => a.usage!.prompt_tokens_details?.cached_tokens);
    const prompts = answers.map((a) => a.usage!.prompt_tokens);
    expect(cached[0]).toBe(0);
    expect(prompts[0]).toBeGreaterThan(1024);
    for (let k = 1; k < answers.length; k++) {
      // The breakpoint written by the request before, less its closing trailer (a few tokens).
      expect(cached[k]).toBeGreaterThan(prompts[k - 1]! - 4);
      expect(cached[k]).toBeLessThanOrEqual(prompts[k - 1]!);
    }
    const events = await sessionWith(w, t);
    const hints = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req').map((e) => e.hints);
    expect(hints).toEqual([{ cache_control: 'ephemeral' }, { cache_control: 'ephemeral' }, { cache_control: 'ephemeral' }, { cache_control: 'ephemeral' }]);
  });

  it('a route with cache_control = "off" sends no marker and reads nothing', async () => {
    const t = tag('an-nocache');
    const fromTap = w.tap.requests.length;
    const fromSim = w.sim.anthropicRequests.length;
    const answers = await toolSession(w, 'claude-nocache', t, { rounds: 3, resultTokens: 100, systemTokens: 1500 });
    for (const req of wire(w, '/anthropic/', fromTap)) expect(JSON.stringify(req.body)).not.toContain('cache_control');
    expect(w.sim.anthropicRequests.slice(fromSim).map((r) => [r.status, r.cacheMarkers, r.cachedTokens, r.cacheWriteTokens])).toEqual([
      [200, 0, 0, 0], [200, 0, 0, 0], [200, 0, 0, 0],
    ]);
    for (const a of answers) expect(a.usage!.prompt_tokens_details?.cached_tokens).toBe(0);
    expect(answers[2]!.usage!.prompt_tokens).toBeGreaterThan(1024);
  });
});

/** The trim test's wire requests and which of them trimmed, for the final-thinking-block check below. */
const trimmedSession: { requests: WireExchange[]; trims: number[] } = { requests: [], trims: [] };

/**
 * For each llm.req of a session, the replies whose blocks may go back: every reply logged before
 * it, less those elided and those made before a later elision of an earlier entry (docs/architecture.md 4.3).
 */
function expectedWithBlocks(events: readonly LogEvent[]): number[][] {
  const replies: number[] = [];
  const elided = new Set<number>();
  const stale = new Set<number>();
  const out: number[][] = [];
  for (const e of events) {
    // A reply made without thinking has no block to give back.
    if (e.type === 'llm.resp' && (e.reply.blocks?.length ?? 0) > 0) replies.push(e.seq);
    if (e.type !== 'llm.req') continue;
    if (e.elided.length > 0) {
      const first = Math.min(...e.elided);
      for (const r of replies) if (r > first) stale.add(r);
      for (const s of e.elided) elided.add(s);
    }
    out.push(replies.filter((r) => !stale.has(r) && !elided.has(r)));
  }
  return out;
}

/**
 * A tool session in which every third reply ends its tool loop: it answers in text, and the user
 * speaks again. So a loop that went without thinking (its last reply lost its block to a trim)
 * ends, and the next one thinks again. Streamed every other request, as `toolSession`.
 */
async function loopsSession(world: WiresWorld, model: string, t: string, resultTokens: number, rounds: number): Promise<Answer[]> {
  const call = (n: number): string => `[[call read_file {"path":"${t}/${n}.ts"}]]`;
  const history: Parameters<typeof ask>[2] = [
    { role: 'system', content: `${t} You are a careful agent.\n${lines(50, `${t}-sys`)}` },
    { role: 'user', content: `${t} find the loader ${call(0)}` },
  ];
  const answers: Answer[] = [];
  for (let i = 0; i < rounds; i++) {
    const a = await ask(world, model, history, TOOLS, { stream: i % 2 === 0, headers: { 'x-session-id': t } });
    answers.push(a);
    const n = i + 1;
    if (a.toolCalls.length > 0) {
      keep(history, a, (c) => `${c.function.arguments}\n${lines(resultTokens, `${t}-r${i}`)}`, n % 3 === 0 ? `[[say found ${n}]]` : call(n));
    } else {
      history.push({ role: 'assistant', content: a.content }, { role: 'user', content: `${t} now the next one ${call(n)}` });
    }
  }
  return answers;
}

describe('after the window elides', () => {
  it('no request is refused; replies made before an elision go back without their blocks, later ones with theirs', async () => {
    const t = tag('an-trim');
    const fromTap = w.tap.requests.length;
    const fromSim = w.sim.anthropicRequests.length;
    const answers = await loopsSession(w, 'claude-small', t, 700, 16);

    expect(w.sim.anthropicRequests.slice(fromSim).map((r) => r.status)).toEqual(answers.map(() => 200));
    const reqs = wire(w, '/anthropic/', fromTap);
    expect(reqs).toHaveLength(16);
    expect(answers.map((a) => a.toolCalls.length > 0)).toEqual(reqs.map((_, i) => i === 0 || i % 3 !== 0));
    const events = await sessionWith(w, t);
    const llmReqs = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
    const resps = events.filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp');
    const trims = llmReqs.map((e, i) => (e.elided.length > 0 ? i : -1)).filter((i) => i >= 0);
    expect(trims.length).toBeGreaterThanOrEqual(2);
    Object.assign(trimmedSession, { requests: reqs, trims });

    // Which reply each signature belongs to, from the log (checked against the wire just below). A
    // request that asked for no thinking got a reply without a block.
    const replyOf = new Map<string, number>();
    resps.forEach((r, j) => {
      const block = r.reply.blocks?.[0]?.data as { signature: string } | undefined;
      expect(block?.signature, `reply ${j}`).toBe(anthropicThinking(reqs[j]!.response)[0]?.signature);
      expect(block === undefined).toBe(!asksThinking(reqs[j]!));
      if (block !== undefined) replyOf.set(block.signature, r.seq);
    });
    const expected = expectedWithBlocks(events);
    let staleSeen = 0;
    reqs.forEach((req, i) => {
      const sent = signaturesIn(req).map((s) => replyOf.get(s));
      expect(sent, `request ${i}`).toEqual(expected[i]);
      // A reply that lost its blocks keeps its calls, and its thinking text is not sent at all.
      const text = JSON.stringify(req.body);
      const sentIds = new Set(turns(req, 'assistant').flatMap((turn) => turn.content.filter((b) => b.type === 'tool_use').map((b) => b.id)));
      resps.forEach((r, j) => {
        if (j >= i || expected[i]!.includes(r.seq)) return;
        if (answers[j]!.reasoning !== '') expect(text).not.toContain(answers[j]!.reasoning);
        if (llmReqs.slice(0, i + 1).some((q) => q.elided.includes(r.seq))) return;
        staleSeen++;
        for (const call of answers[j]!.toolCalls) expect(sentIds.has(call.id)).toBe(true);
      });
    });
    expect(staleSeen).toBeGreaterThan(0);
    // Replies made after the first trim, in a later loop, come back with their blocks.
    const afterTrim = resps.filter((r) => r.seq > llmReqs[trims[0]!]!.seq && (r.reply.blocks?.length ?? 0) > 0).map((r) => r.seq);
    const backOnce = reqs.slice(trims[0]! + 2).flatMap((req) => signaturesIn(req).map((s) => replyOf.get(s)));
    expect(afterTrim.some((s) => backOnce.includes(s))).toBe(true);
  });
});

/*
 * A trim inside a tool loop makes the loop's last reply stale, so the trimming request goes
 * without that reply's thinking block; the real API refuses such a request when it asks for
 * thinking (and so does the simulator, which refused nothing above). So it asks for none, and so
 * do the loop's later requests (their last reply, made without thinking, has no block either):
 * exactly the requests that end in a loop without a thinking block go without thinking.
 */
it('no request breaks the final-thinking-block rule; those that would go without thinking', () => {
  const reqs = trimmedSession.requests;
  expect(reqs).toHaveLength(16);
  expect(reqs.filter(breaksFinalThinkingRule)).toEqual([]);
  const without = reqs.map((r, i) => (asksThinking(r) ? -1 : i)).filter((i) => i >= 0);
  expect(without).toEqual(reqs.map((r, i) => (loopWithoutThinkingBlock(r) ? i : -1)).filter((i) => i >= 0));
  // The case happened: a trim inside a loop (the rest of that loop goes without thinking too),
  // and a later loop that thinks again.
  expect(trimmedSession.trims.filter((i) => without.includes(i)).length).toBeGreaterThanOrEqual(2);
  expect(without.some((i) => !trimmedSession.trims.includes(i))).toBe(true);
  expect(reqs.slice(without[0]! + 1).some(asksThinking)).toBe(true);
});

it('every logged request replays', async () => {
  const r = await replayAll(w);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
});
