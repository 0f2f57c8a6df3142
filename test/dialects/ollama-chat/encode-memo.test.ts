/**
 * The Ollama encoder with its memos: the bytes are always those of an encoding without any memo,
 * including a tool result whose call (which names its function) was trimmed out of the request.
 */
import { describe, expect, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../../src/core/route.js';
import type { NeutralMessage, NeutralRequest } from '../../../src/core/types.js';
import { encodeRequest } from '../../../src/dialects/ollama-chat/encode-request.js';
import type { EncodeOptions } from '../../../src/dialects/types.js';
import { BodyListMemo } from '../../../src/proxy/list-memo.js';
import { WireMemo } from '../../../src/proxy/wire-memo.js';
import { checkMemoEquivalence, resolveImage } from '../memo.case.js';

const route: DialectRoute = {
  wire: 'ollama-chat', preset: 'ollama', provider: 'ollama', model: 'qwen3', baseUrl: 'http://127.0.0.1:11434',
  reasoningOut: 'reasoning', reasoningOnToolTurns: false, headers: {}, numCtx: 32768,
};
const noHints: WireHints = { bodyKey: false, headers: {} };
const request = (messages: NeutralMessage[]): NeutralRequest => ({ model: 'qwen3', messages, params: {}, tools: [] });

describe('ollama-chat encodeRequest with memos', () => {
  it('a tool result goes without its function name once its call is trimmed out, memo or not', () => {
    const opts: EncodeOptions = { stream: true, resolveImage, memo: new WireMemo(1 << 20), lists: new BodyListMemo(1 << 20) };
    const call: NeutralMessage = Object.freeze({ role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'read_file', arguments: '{}' }] });
    const result: NeutralMessage = Object.freeze({ role: 'tool', tool_call_id: 'c1', content: 'x' });
    const filler = Array.from({ length: 70 }, (_, i): NeutralMessage => Object.freeze({ role: 'user', content: `u${i}` }));
    const plain = (req: NeutralRequest) => String(encodeRequest(req, route, noHints, { stream: true, resolveImage }).body);
    const whole = request([call, result, ...filler]);
    expect(String(encodeRequest(whole, route, noHints, opts).body)).toContain('"tool_name":"read_file"');
    const trimmed = request([result, ...filler]);
    const body = String(encodeRequest(trimmed, route, noHints, opts).body);
    expect(body).toBe(plain(trimmed));
    expect(body).not.toContain('tool_name');
  });

  it('any sequence of requests gives the bytes of a plain encoding', () => {
    checkMemoEquivalence(
      { encode: encodeRequest, routes: [route, { ...route, reasoningOut: 'none' }], hints: [noHints], params: [{}, { reasoning_effort: 'high', temperature: 0.5 }] },
      200,
    );
  });
});
