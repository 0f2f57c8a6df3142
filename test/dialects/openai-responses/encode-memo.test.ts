/**
 * The Responses encoder with its memos: a request copies what it shares with the conversation's
 * last body and serialises only the rest, and the bytes are always those of an encoding without
 * any memo (instructions or a developer item, breakpoints that move, reasoning items).
 */
import { describe, expect, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../../src/core/route.js';
import type { NeutralMessage, NeutralRequest } from '../../../src/core/types.js';
import { encodeRequest } from '../../../src/dialects/openai-responses/encode-request.js';
import type { EncodeOptions } from '../../../src/dialects/types.js';
import { BodyListMemo } from '../../../src/proxy/list-memo.js';
import { checkMemoEquivalence, CountingMemo, resolveImage } from '../memo.case.js';

const route: DialectRoute = {
  wire: 'openai-responses', preset: 'openai', provider: 'openai', model: 'gpt-5', baseUrl: 'https://api.openai.com/v1',
  reasoningOut: 'none', reasoningOnToolTurns: false, headers: {},
};
const noHints: WireHints = { bodyKey: false, headers: {} };
const explicit: WireHints = { bodyKey: true, sessionKey: 'k', headers: {}, promptCache: 'explicit' };

const user = (content: string): NeutralMessage => Object.freeze({ role: 'user', content });
const reply = (content: string): NeutralMessage => Object.freeze({ role: 'assistant', content });
const request = (messages: NeutralMessage[]): NeutralRequest => ({ model: 'gpt-5', messages, params: { max_tokens: 8192 }, tools: [] });

describe('openai-responses encodeRequest with memos', () => {
  it('a request that appends asks the per-message memo only for what it added', () => {
    const memo = new CountingMemo();
    const opts: EncodeOptions = { stream: true, resolveImage, memo, lists: new BodyListMemo(1 << 20) };
    const msgs: NeutralMessage[] = [Object.freeze({ role: 'system', content: 'be brief' }), ...Array.from({ length: 69 }, (_, i) => (i % 2 === 0 ? user(`q ${i} "x"\n`) : reply(`a ${i} é`)))];
    encodeRequest(request([...msgs]), route, noHints, opts);
    for (let turn = 0; turn < 3; turn++) {
      msgs.push(user(`more ${turn}`), reply(`reply ${turn}`));
      memo.gets = 0;
      const req = request([...msgs]);
      expect(String(encodeRequest(req, route, noHints, opts).body)).toBe(String(encodeRequest(req, route, noHints, { stream: true, resolveImage }).body));
      expect(memo.gets).toBe(2);
    }
  });

  it('any sequence of requests gives the bytes of a plain encoding', () => {
    checkMemoEquivalence(
      {
        encode: encodeRequest,
        routes: [route, { ...route, keepReasoning: true }],
        hints: [noHints, explicit, { ...explicit, promptCache: 'implicit' }],
        params: [{ max_tokens: 8192 }, { max_tokens: 8192, reasoning_effort: 'high', temperature: 0.5 }],
      },
      250,
    );
  });
});
