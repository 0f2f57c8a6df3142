/**
 * The last body kept per conversation: a request that extends it copies what they share, and the
 * bytes are always those of an encoding without any memo, whatever came before.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DialectRoute, WireHints } from '../../src/core/route.js';
import type { NeutralMessage, NeutralRequest } from '../../src/core/types.js';
import { encodeRequest } from '../../src/dialects/openai-chat/encode-request.js';
import { BodyListMemo } from '../../src/proxy/list-memo.js';
import { WireMemo } from '../../src/proxy/wire-memo.js';
import { CountingMemo } from '../dialects/memo.case.js';

const route: DialectRoute = {
  wire: 'openai-chat', preset: 'generic', provider: 'p', model: 'm', baseUrl: 'https://upstream.invalid/v1',
  reasoningOut: 'reasoning_content', reasoningOnToolTurns: false, headers: {},
};
const noImages = () => {
  throw new Error('no images here');
};
const plainHints: WireHints = { bodyKey: false, headers: {} };

function request(messages: NeutralMessage[], model = 'm'): NeutralRequest {
  return { model, messages, params: {}, tools: [] };
}

function plain(req: NeutralRequest, hints: WireHints, r = route): Buffer {
  return Buffer.from(encodeRequest(req, r, hints, { stream: false, resolveImage: noImages }).body);
}

const user = (content: string): NeutralMessage => Object.freeze({ role: 'user', content });
const reply = (content: string): NeutralMessage => Object.freeze({ role: 'assistant', content });

describe('BodyListMemo', () => {
  it('a request that appends asks the per-message memo only for what it added', () => {
    const lists = new BodyListMemo(1 << 20);
    const memo = new CountingMemo();
    const history: NeutralMessage[] = [Object.freeze({ role: 'system', content: 'be brief' })];
    for (let turn = 0; turn < 60; turn++) {
      const before = history.length;
      history.push(user(`question ${turn} "quoted"\n`), reply(`answer ${turn} é`));
      const req = request([...history]);
      memo.gets = 0;
      const body = encodeRequest(req, route, plainHints, { stream: false, resolveImage: noImages, memo, lists }).body;
      expect(body).toStrictEqual(plain(req, plainHints));
      // Bodies of 64 messages or more are kept; a shorter conversation is joined message by message.
      expect(memo.gets).toBe(before >= 64 ? 2 : history.length);
    }
    expect(lists.size).toBeGreaterThan(0);
  });

  it('what it copies is what it kept: a planted body shows through, a changed message does not', () => {
    const lists = new BodyListMemo(1 << 20);
    const messages = [user('one'), reply('two'), ...Array.from({ length: 70 }, (_, i) => user(`filler ${i}`))];
    const opts = { stream: false, resolveImage: noImages, lists };
    expect(lists.get(messages[0]!)).toBeUndefined();
    encodeRequest(request(messages), route, plainHints, opts);
    const kept = lists.get(messages[0]!)!;
    const planted = Buffer.from(kept.bytes.toString().replace('"one"', '"ONE"'));
    lists.set(messages[0]!, { ...kept, bytes: planted });
    expect(encodeRequest(request([...messages, user('three')]), route, plainHints, opts).body.toString()).toContain('"ONE"');
    // A new object in the middle (a rewrite) is serialised again from there on; the first is still copied.
    const rewritten = [messages[0]!, reply('TWO'), ...messages.slice(2), user('three')];
    const body = encodeRequest(request(rewritten), route, plainHints, opts).body.toString();
    expect(body).toContain('"ONE"');
    expect(body).toContain('"TWO"');
    expect(body).not.toContain('"two"');
  });

  it('stays within its bound, and a zero bound keeps nothing', () => {
    const lists = new BodyListMemo(16_384);
    for (let s = 0; s < 20; s++) {
      encodeRequest(request([user(`${s} ${'x'.repeat(1000)}`), ...Array.from({ length: 70 }, () => reply('ok'))]), route, plainHints, { stream: false, resolveImage: noImages, lists });
      expect(lists.size).toBeGreaterThan(0);
      expect(lists.size).toBeLessThanOrEqual(16_384);
    }
    const none = new BodyListMemo(0);
    const messages = Array.from({ length: 70 }, (_, i) => user(`a${i}`));
    encodeRequest(request(messages), route, plainHints, { stream: false, resolveImage: noImages, lists: none });
    expect(none.get(messages[0]!)).toBeUndefined();
  });

  it('any sequence of requests (appends, rewrites, forks, other routes, models and breakpoints) gives the bytes of a plain encoding', () => {
    const step = fc.record({
      op: fc.constantFrom('append', 'append', 'rewrite', 'truncate', 'fork'),
      at: fc.nat(),
      texts: fc.array(fc.oneof(fc.string({ maxLength: 12 }), fc.string({ minLength: 2000, maxLength: 2600 })), { minLength: 1, maxLength: 3 }),
      reasoningOut: fc.constantFrom('reasoning_content', 'none'),
      model: fc.constantFrom('m', 'n'),
      promptCache: fc.constantFrom(undefined, 'implicit', 'explicit'),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), fc.constantFrom(1 << 20, 6000), (steps, bound) => {
        const lists = new BodyListMemo(bound);
        const memo = new WireMemo(bound);
        // Long enough from the start for the body to be kept (64 messages or more).
        const opening = Array.from({ length: 63 }, (_, i) => (i % 2 === 0 ? user(`opening ${i}`) : reply(`ok ${i}`)));
        const conversations: NeutralMessage[][] = [[Object.freeze({ role: 'system', content: 'sys '.repeat(900) }), ...opening]];
        let current = 0;
        for (const s of steps) {
          let msgs = conversations[current]!;
          const fresh = s.texts.map((t, i) => (i % 2 === 0 ? user(t) : Object.freeze({ role: 'assistant' as const, content: t, thinking: `why ${t.length}` })));
          if (s.op === 'append') msgs = [...msgs, ...fresh];
          else if (s.op === 'rewrite' && msgs.length > 1) msgs = msgs.map((m, i) => (i === 1 + (s.at % (msgs.length - 1)) ? Object.freeze({ ...m }) : m));
          else if (s.op === 'truncate') msgs = [...msgs.slice(0, 1 + (s.at % msgs.length)), ...fresh];
          else if (s.op === 'fork') {
            conversations.push([...msgs.slice(0, 1 + (s.at % msgs.length)), ...fresh]);
            current = conversations.length - 1;
            msgs = conversations[current]!;
          }
          conversations[current] = msgs;
          const r: DialectRoute = { ...route, reasoningOut: s.reasoningOut as DialectRoute['reasoningOut'] };
          const hints: WireHints = s.promptCache === undefined ? plainHints : { ...plainHints, promptCache: s.promptCache as 'implicit' | 'explicit' };
          const req = request(msgs, s.model);
          const got = Buffer.from(encodeRequest(req, r, hints, { stream: false, resolveImage: noImages, memo, lists }).body);
          expect(got.equals(plain(req, hints, r))).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });
});
