/**
 * "No reasoning block ever reaches another origin" (docs/architecture.md 4.3): one conversation, named by
 * `x-session-id`, moves between Anthropic (two models), Ollama, Responses and DeepSeek and back,
 * a tool round on each. A tap records every upstream request and reply. On each request:
 *
 * - Anthropic gets signed thinking blocks only of replies made by the same provider and model,
 *   as the simulator gave them, first in their own assistant turn; no one else's reasoning at all;
 * - Responses gets encrypted reasoning items only of its own replies, unchanged, before their calls;
 * - Ollama and DeepSeek get every reply's thinking as text, and no block of anyone.
 *
 * Nothing is elided here, so when the conversation comes back to a model its blocks come back,
 * where they were: the simulators, which check signatures over the prefix and encrypted content,
 * refuse nothing, and DeepSeek (requireReasoning) gets its own reasoning back. The conversation is
 * one tool loop, so a switch into Claude ends in a turn of another origin's, without a thinking
 * block: such a request asks for no thinking (Anthropic's final-thinking-block rule), and its reply
 * has none to come back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { EventOf } from '../../src/core/events.js';
import type { Origin } from '../../src/core/types.js';
import { replayAll, tag } from './harness.js';
import { type Answer, ask, keep, lines, TOOLS } from './wires-client.js';
import { anthropicThinking, asksThinking, breaksFinalThinkingRule, loopWithoutThinkingBlock, responsesReasoning, sessionWith, startWiresWorld, type WireExchange, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    sim: { requireReasoning: true },
    models: `
[models.claude]
provider = "an"
model = "claude-sim"
thinking = "enabled"

[models.claude2]
provider = "an"
model = "claude-sim-2"
thinking = "enabled"

[models.qwen]
provider = "ol"
model = "qwen-sim"

[models.gpt]
provider = "rs"
model = "gpt-sim"
keep_reasoning = true

[models.ds]
provider = "ds"
model = "deepseek-v4"
`,
  });
});
afterAll(async () => {
  await w?.close();
});

const ROUTE: Record<string, { wire: string; path: string }> = {
  claude: { wire: 'anthropic', path: '/anthropic/' },
  claude2: { wire: 'anthropic', path: '/anthropic/' },
  qwen: { wire: 'ollama', path: '/api/chat' },
  gpt: { wire: 'responses', path: '/v1/responses' },
  ds: { wire: 'chat', path: '/deepseek/' },
};
/** The conversation's wire requests, for the final-thinking-block check. */
let switched: WireExchange[] = [];
const PLAN = ['claude', 'qwen', 'gpt', 'claude', 'ds', 'claude2', 'claude', 'gpt', 'ds', 'qwen', 'claude'];

interface Reply {
  step: number;
  origin: Origin;
  thinking: string;
  /** The opaque reasoning the upstream gave (Anthropic thinking block, Responses item), if any. */
  opaque: Record<string, unknown> | undefined;
  /** A string that identifies the opaque reasoning anywhere in a body. */
  mark: string | undefined;
  calls: string[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** The assistant messages of a wire body, in order, whatever the wire. */
function assistantsOf(req: WireExchange): Json[] {
  if (req.path.startsWith('/v1/responses')) {
    // Items, grouped per reply: a reply is its reasoning items and calls up to the next output.
    const out: Json[][] = [];
    let open = false;
    for (const item of req.body.input as Json[]) {
      const mine = item.type === 'reasoning' || item.type === 'function_call' || (item.type === 'message' && item.role === 'assistant');
      if (!mine) {
        open = false;
        continue;
      }
      if (!open) out.push([]);
      open = true;
      out[out.length - 1]!.push(item);
    }
    return out;
  }
  return (req.body.messages as Json[]).filter((m) => m.role === 'assistant');
}

describe('one conversation across origins', () => {
  it('every wire request carries only its own origin\'s blocks, and they come back where they were', async () => {
    const t = tag('origins');
    const from = w.tap.requests.length;
    const headers = { 'x-session-id': t };
    const history: ChatCompletionMessageParam[] = [
      { role: 'system', content: `${t} system\n${lines(300, t)}` },
      { role: 'user', content: `${t} start [[call read_file {"path":"0.ts"}]] [[think thought 0 of ${t}]]` },
    ];
    const answers: Answer[] = [];
    for (const [i, model] of PLAN.entries()) {
      const a = await ask(w, model, history, TOOLS, { stream: i % 2 === 1, headers });
      answers.push(a);
      keep(history, a, (c) => `${c.function.arguments}\n${lines(60, `${t}-${i}`)}`, `[[call read_file {"path":"${i + 1}.ts"}]] [[think thought ${i + 1} of ${t}]]`);
    }

    const reqs = w.tap.requests.slice(from);
    switched = reqs;
    expect(reqs.map((r) => [r.path.startsWith(ROUTE[PLAN[reqs.indexOf(r)]!]!.path), r.status])).toEqual(PLAN.map(() => [true, 200]));
    expect(w.sim.requests.filter((r) => r.mode === 'deepseek').at(-1)!.reasoning).toMatchObject({ returned: 1, missing: 0 });

    // One session holds every request, each reply with the origin that made it.
    const events = await sessionWith(w, t);
    expect(events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req').map((e) => e.route)).toEqual(PLAN);
    const resps = events.filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp');
    // The whole conversation is one tool loop, so a switch into Claude finds the loop's last turn
    // made by another origin (or model), without a thinking block: that request asks for no
    // thinking (the API's rule, checked below) and its reply has none. Only reply 0 thinks there.
    const thought = (step: number): boolean => ROUTE[PLAN[step]!]!.wire !== 'anthropic' || asksThinking(reqs[step]!);
    expect(PLAN.map((_, step) => step).filter((step) => !thought(step))).toEqual([3, 5, 6, 10]);
    const replies: Reply[] = resps.map((r, step) => {
      const wireName = ROUTE[PLAN[step]!]!.wire;
      const opaque = wireName === 'anthropic' ? anthropicThinking(reqs[step]!.response)[0]
        : wireName === 'responses' ? responsesReasoning(reqs[step]!.response)[0] : undefined;
      const data = opaque as Record<string, unknown> | undefined;
      const mark = data === undefined ? undefined : String(data.signature ?? data.encrypted_content);
      return { step, origin: r.origin, thinking: answers[step]!.reasoning, opaque: data, mark, calls: answers[step]!.toolCalls.map((c) => c.id) };
    });
    replies.forEach((r, step) => {
      expect(r.thinking).toBe(thought(step) ? `thought ${step} of ${t}` : '');
      expect(r.opaque === undefined).toBe(!thought(step) || !['anthropic', 'responses'].includes(ROUTE[PLAN[step]!]!.wire));
    });
    expect(new Set(replies.map((r) => `${r.origin.provider}/${r.origin.model}`))).toEqual(new Set(['an/claude-sim', 'an/claude-sim-2', 'ol/qwen-sim', 'rs/gpt-sim', 'ds/deepseek-v4']));

    let cameBack = 0;
    for (const [k, req] of reqs.entries()) {
      const here = replies[k]!.origin;
      const wireName = ROUTE[PLAN[k]!]!.wire;
      const body = JSON.stringify(req.body);
      const mine = assistantsOf(req);
      expect(mine, `request ${k}`).toHaveLength(k);
      for (const r of replies.slice(0, k)) {
        const same = r.origin.provider === here.provider && r.origin.model === here.model;
        const msg = mine[r.step];
        const text = JSON.stringify(msg);
        // A block goes only to its origin; anywhere else, not a trace of it.
        if (r.mark !== undefined && !same) expect(body, `request ${k} (${PLAN[k]}) holds reply ${r.step}'s block`).not.toContain(r.mark);
        switch (wireName) {
          case 'anthropic': {
            const thinking = (msg.content as Json[]).filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
            if (same && r.opaque === undefined) {
              expect(thinking, `request ${k}, reply ${r.step} (made without thinking)`).toEqual([]);
            } else if (same) {
              expect(msg.content[0], `request ${k}, reply ${r.step}`).toEqual(r.opaque);
              expect(thinking).toHaveLength(1);
              if (k > r.step + 1) cameBack++;
            } else {
              expect(thinking).toEqual([]);
              if (r.thinking !== '') expect(text).not.toContain(r.thinking);
            }
            expect((msg.content as Json[]).filter((b) => b.type === 'tool_use').map((b) => b.id)).toEqual(r.calls);
            break;
          }
          case 'responses': {
            const items = (msg as Json[]).filter((x) => x.type === 'reasoning');
            if (same) {
              expect(items).toEqual([{ type: 'reasoning', summary: r.opaque!.summary, encrypted_content: r.opaque!.encrypted_content }]);
              expect((msg as Json[]).indexOf(items[0])).toBe(0);
              if (k > r.step + 1) cameBack++;
            } else {
              expect(items).toEqual([]);
              if (r.thinking !== '') expect(text).not.toContain(r.thinking);
            }
            expect((msg as Json[]).filter((x) => x.type === 'function_call').map((x) => x.call_id)).toEqual(r.calls);
            break;
          }
          case 'ollama':
            // A reply made without thinking has none to give.
            expect(msg.thinking, `request ${k}, reply ${r.step}`).toBe(r.thinking === '' ? undefined : r.thinking);
            expect(Object.keys(msg).sort()).toEqual(r.thinking === '' ? ['content', 'role', 'tool_calls'] : ['content', 'role', 'thinking', 'tool_calls']);
            break;
          case 'chat':
            expect(msg.reasoning_content, `request ${k}, reply ${r.step}`).toBe(r.thinking);
            expect(Object.keys(msg).sort()).toEqual(['content', 'reasoning_content', 'role', 'tool_calls']);
            break;
        }
      }
    }
    // After other origins' turns: claude's reply 0 at 3, 6 and 10 (the only claude reply that
    // thought); gpt's 2 at 7.
    expect(cameBack).toBe(4);
  });

  /*
   * A switch into a thinking Claude model inside a tool loop sends a last assistant turn made by
   * another origin, which has no thinking block to give: the real API refuses such a request when
   * it asks for thinking, so the dialect leaves thinking out of it (and out of only those).
   */
  it('no switch into Claude inside a tool loop breaks the final-thinking-block rule; only those go without thinking', () => {
    const reqs = switched;
    expect(reqs).toHaveLength(PLAN.length);
    const claude = reqs.map((r, i) => (r.path.startsWith('/anthropic/') ? i : -1)).filter((i) => i >= 0);
    expect(claude).toEqual([0, 3, 5, 6, 10]);
    expect(claude.filter((i) => breaksFinalThinkingRule(reqs[i]!))).toEqual([]);
    expect(claude.filter((i) => loopWithoutThinkingBlock(reqs[i]!))).toEqual([3, 5, 6, 10]);
    expect(claude.filter((i) => !asksThinking(reqs[i]!))).toEqual([3, 5, 6, 10]);
  });

  it('every logged request replays', async () => {
    const r = await replayAll(w);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
  });
});
