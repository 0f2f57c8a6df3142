/** The chat encoder held to the shared memo property (test/proxy/list-memo.test.ts has its own cases). */
import { describe, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../../src/core/route.js';
import { encodeRequest } from '../../../src/dialects/openai-chat/encode-request.js';
import { checkMemoEquivalence } from '../memo.case.js';

const route: DialectRoute = {
  wire: 'openai-chat', preset: 'generic', provider: 'p', model: 'm', baseUrl: 'https://upstream.invalid/v1',
  reasoningOut: 'reasoning_content', reasoningOnToolTurns: false, headers: {},
};
const noHints: WireHints = { bodyKey: false, headers: {} };

describe('openai-chat encodeRequest with memos', () => {
  it('any sequence of requests gives the bytes of a plain encoding', () => {
    checkMemoEquivalence(
      {
        encode: encodeRequest,
        routes: [route, { ...route, reasoningOut: 'none' }, { ...route, reasoningOnToolTurns: true }],
        hints: [noHints, { ...noHints, promptCache: 'explicit' }, { ...noHints, promptCache: 'implicit' }],
        params: [{ max_tokens: 8192 }, { max_tokens: 8192, reasoning_effort: 'high' }],
      },
      200,
    );
  });
});
