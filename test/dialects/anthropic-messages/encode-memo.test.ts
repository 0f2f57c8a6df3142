/**
 * The Anthropic encoder with its memos: a request copies what it shares with the conversation's
 * last body and serialises only the rest, and the bytes are always those of an encoding without
 * any memo (breakpoints that move, tool results grouped into one turn, thinking blocks).
 */
import { describe, expect, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../../src/core/route.js';
import type { NeutralMessage, NeutralRequest } from '../../../src/core/types.js';
import { encodeRequest } from '../../../src/dialects/anthropic-messages/encode-request.js';
import type { EncodeOptions } from '../../../src/dialects/types.js';
import { BodyListMemo } from '../../../src/proxy/list-memo.js';
import { WireMemo } from '../../../src/proxy/wire-memo.js';
import { checkMemoEquivalence, CountingMemo, resolveImage } from '../memo.case.js';

const route: DialectRoute = {
  wire: 'anthropic-messages', preset: 'anthropic', provider: 'anthropic', model: 'claude-sonnet-4-6', baseUrl: 'https://api.anthropic.com/v1',
  reasoningOut: 'none', reasoningOnToolTurns: false, headers: {},
};
const noHints: WireHints = { bodyKey: false, headers: {} };
const breakpoints: WireHints = { bodyKey: false, headers: {}, cacheControl: 'ephemeral', cacheControlAt: 'breakpoints' };

const user = (content: string): NeutralMessage => Object.freeze({ role: 'user', content });
const reply = (content: string): NeutralMessage => Object.freeze({ role: 'assistant', content });
const calls = (...ids: string[]): NeutralMessage =>
  Object.freeze({
    role: 'assistant', content: null,
    blocks: [{ kind: 'anthropic.thinking' as const, origin: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, data: { type: 'thinking', thinking: 'hm', signature: 's' }, before_call: 0 }],
    tool_calls: ids.map((id) => ({ id, name: 'read', arguments: `{"path":"${id}"}` })),
  });
const result = (id: string): NeutralMessage => Object.freeze({ role: 'tool', tool_call_id: id, content: `contents of ${id}` });
const request = (messages: NeutralMessage[]): NeutralRequest => ({ model: 'claude-sonnet-4-6', messages, params: { max_tokens: 8192, reasoning_effort: 'high' }, tools: [] });
const plain = (req: NeutralRequest, hints = noHints): string => String(encodeRequest(req, route, hints, { stream: true, resolveImage }).body);

function history(n: number): NeutralMessage[] {
  return [Object.freeze({ role: 'system', content: 'be brief' }), ...Array.from({ length: n }, (_, i) => (i % 2 === 0 ? user(`question ${i} "q"\n`) : reply(`answer ${i} é`)))];
}

describe('anthropic-messages encodeRequest with memos', () => {
  it('a request that appends serialises what it added and the message whose breakpoint moved, and looks up nothing before that', () => {
    const memo = new CountingMemo();
    const opts: EncodeOptions = { stream: true, resolveImage, memo, lists: new BodyListMemo(1 << 20) };
    const msgs = history(69);
    encodeRequest(request([...msgs]), route, noHints, opts);
    for (const hints of [noHints, breakpoints]) {
      // Switching to breakpoints marks the opening (message 0) too: everything after it once.
      encodeRequest(request([...msgs]), route, hints, opts);
      for (let turn = 0; turn < 4; turn++) {
        msgs.push(user(`more ${turn}`), reply(`reply ${turn}`));
        memo.gets = 0;
        memo.sets = 0;
        const body = String(encodeRequest(request([...msgs]), route, hints, opts).body);
        expect(body).toBe(plain(request([...msgs]), hints));
        // With breakpoints the user message marked last time is unmarked now: it is serialised
        // again, and what follows it is looked up again.
        const moved = hints === breakpoints;
        expect(memo.gets).toBe(moved ? 4 : 2);
        expect(memo.sets).toBe(moved ? 3 : 2);
      }
    }
  });

  it('tool results appended one by one join the open user turn, a user message after them too, and the kept bytes are what is copied', () => {
    const lists = new BodyListMemo(1 << 20);
    const opts: EncodeOptions = { stream: true, resolveImage, lists, memo: new WireMemo(1 << 20) };
    const msgs = [...history(70), calls('a', 'b', 'c')];
    const steps = [[result('a')], [result('b')], [result('c'), user('now fix it')], [calls('d')], [result('d')]];
    for (const hints of [noHints, breakpoints]) {
      const convo = [...msgs];
      for (const added of steps) {
        convo.push(...added);
        const req = request([...convo]);
        expect(String(encodeRequest(req, route, hints, opts).body)).toBe(plain(req, hints));
      }
    }
    // Planted into the kept body, a changed question shows through: it was copied, not made again.
    const convo = [...msgs, result('a')];
    encodeRequest(request(convo), route, noHints, opts);
    const kept = lists.get(convo[0]!)!;
    lists.set(convo[0]!, { ...kept, bytes: Buffer.from(kept.bytes.toString().replace('question 2 ', 'QUESTION 2 ')) });
    const next = String(encodeRequest(request([...convo, result('b')]), route, noHints, opts).body);
    expect(next).toContain('QUESTION 2 ');
    expect(next.replace('QUESTION 2 ', 'question 2 ')).toBe(plain(request([...convo, result('b')])));
  });

  it('any sequence of requests gives the bytes of a plain encoding', () => {
    checkMemoEquivalence(
      {
        encode: encodeRequest,
        routes: [route, { ...route, thinking: 'enabled' }, { ...route, thinking: 'adaptive' }],
        hints: [noHints, breakpoints, { ...breakpoints, cacheControl: '1h' }, { ...noHints, cacheControl: '1h', cacheControlAt: 'top-level' }],
        params: [{ max_tokens: 8192 }, { max_tokens: 8192, reasoning_effort: 'high', temperature: 0.5 }],
      },
      250,
    );
  });
});
