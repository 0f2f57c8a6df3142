/**
 * What a live session holds beyond its conversation (docs/decisions.md, Memory follows live
 * sessions): sessions shaped like the bench's "Memory" section (a long user message, a batch of two
 * reads whose results are over the cap, a reply), each folded through a LiveSession as the proxy
 * does and built twice, measured on the heap after a full GC.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { EventBody, LogEvent } from '../../src/core/events.js';
import { LiveSession } from '../../src/session/live-session.js';
import { capToolResult } from '../../src/window/index.js';
import type { SessionWriter } from '../../src/store/types.js';
import { ORIGIN_A, smallRecipe } from '../window/gen-session.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const SESSIONS = 300;
const USER_CHARS = 20_000;
const RESULT_CHARS = 24_000;
/** Cut text of about 6 KB per result (3,000 bytes a side): 12 KB a session if it were kept. */
const CAP_TOKENS = 2_000;

/** About `chars` of one-byte text in lines, flat as a parsed body's strings are. */
function text(tag: string, chars: number): string {
  const lines: string[] = [];
  for (let i = 0, n = 0; n < chars; i++) {
    lines.push(`${tag} line ${i} ${'x'.repeat(40)}`);
    n += lines.at(-1)!.length + 1;
  }
  return lines.join('\n') + '\n';
}

/** One session, as the proxy folds it: each event applied in turn, each request built from the window before its llm.req. */
function session(n: number): { live: LiveSession; chars: number } {
  const writer = { size: 0 } as unknown as SessionWriter;
  const live = new LiveSession(`s${n}`, writer, 0);
  let seq = 0;
  let chars = 0;
  const fold = (body: EventBody) => live.fold({ ...body, seq: ++seq, ts: '2026-12-01T00:00:00.000Z' } as LogEvent, 0);
  const request = () => {
    const r = live.window.build({ route: 'r', model: ORIGIN_A.model, origin: ORIGIN_A, params: {} });
    fold({ type: 'llm.req', digest: r.digest, recipe_version: 'window-v1', route: 'r', model: ORIGIN_A.model, origin: ORIGIN_A, params: {}, elided: r.elided, est_tokens: r.estTokens });
    live.previousRequest = r.request;
  };
  const reply = (content: string, calls?: { id: string; name: string; arguments: string }[]) => {
    chars += content.length;
    fold({ type: 'llm.resp', req: seq, origin: ORIGIN_A, timings: { total_ms: 1 }, reply: { content, tool_calls: calls, finish_reason: calls ? 'tool_calls' : 'stop' } });
  };
  fold({ type: 'session.start', recipe: smallRecipe({ context: 1_000_000, high_water: 800_000, low_water: 500_000, max_result_tokens: CAP_TOKENS }), ids: [] });
  const user = text(`s${n} user`, USER_CHARS);
  chars += user.length;
  fold({ type: 'client.msg', msg: { role: 'user', content: user } });
  request();
  reply('', [0, 1].map((j) => ({ id: `call_${n}_${j}`, name: 'read', arguments: `{"path":"src/file${n}_${j}.ts"}` })));
  for (const j of [0, 1]) {
    const result = text(`s${n} result ${j}`, RESULT_CHARS);
    chars += result.length;
    fold({ type: 'client.msg', msg: { role: 'tool', tool_call_id: `call_${n}_${j}`, content: result } });
  }
  request();
  reply(`s${n}: found it, the port is read before the config is loaded.`);
  return { live, chars };
}

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('a live session holds its conversation once', () => {
  it('holds capped results as cuts of the logged ones, and little else beyond its messages', () => {
    // Warm: the code and the module state the first session makes are not the sessions' bytes.
    session(-1);
    const before = heapUsed();
    const held = Array.from({ length: SESSIONS }, (_, n) => session(n));
    const after = heapUsed();
    const conversation = held.reduce((sum, s) => sum + s.chars, 0);
    const beyond = (after - before - conversation) / SESSIONS;
    // Each result is over its cap: the request sends the cut, the same bytes as a cut string would
    // give, whatever reads it (a serialiser, a spread).
    const { live } = held[0]!;
    const logged = live.view.entries.map((e) => e.msg).filter((m) => m.role === 'tool');
    const sent = live.previousRequest!.messages.filter((m) => m.role === 'tool');
    expect(sent).toHaveLength(2);
    sent.forEach((m, j) => {
      const cut = { role: 'tool', tool_call_id: logged[j]!.tool_call_id, content: capToolResult(logged[j]!.content, CAP_TOKENS) };
      expect(cut.content.length).toBeLessThan(RESULT_CHARS / 2);
      expect(JSON.stringify(m)).toBe(JSON.stringify(cut));
      expect({ ...m }).toEqual(cut);
    });
    // Kept as text, the two cuts alone would be ~12 KB a session (~20 KB beyond the messages in
    // all); the window, the view and the digests of five entries take about 8 KB.
    expect(beyond).toBeLessThan(12_000);
    expect(held.length).toBe(SESSIONS);
  });
});
