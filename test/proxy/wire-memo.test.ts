/** The wire serialisations kept between requests: reused while kept, bounded in bytes. */
import { describe, expect, it } from 'vitest';
import type { DialectRoute } from '../../src/core/route.js';
import type { NeutralRequest } from '../../src/core/types.js';
import { encodeRequest } from '../../src/dialects/openai-chat/encode-request.js';
import { WireMemo } from '../../src/proxy/wire-memo.js';

const route: DialectRoute = {
  wire: 'openai-chat', preset: 'generic', provider: 'p', model: 'm', baseUrl: 'https://upstream.invalid/v1',
  reasoningOut: 'reasoning_content', reasoningOnToolTurns: false, headers: {},
};
const noImages = () => {
  throw new Error('no images here');
};

function request(messages: NeutralRequest['messages']): NeutralRequest {
  return { model: 'm', messages, params: {}, tools: [] };
}

describe('WireMemo', () => {
  it('hands back a message\'s serialisation for the same object and variant only', () => {
    const memo = new WireMemo(1 << 20);
    const msg = Object.freeze({ role: 'user' as const, content: 'hello' });
    memo.set(msg, 'a', Buffer.from('{"x":1}'));
    expect(memo.get(msg, 'a')?.toString()).toBe('{"x":1}');
    expect(memo.get(msg, 'b')).toBeUndefined();
    expect(memo.get({ ...msg }, 'a')).toBeUndefined();
  });

  it('stays within its bound, the oldest out first', () => {
    const memo = new WireMemo(1000);
    const msgs = Array.from({ length: 10 }, (_, i) => ({ role: 'user' as const, content: String(i) }));
    for (const m of msgs) memo.set(m, 'v', Buffer.from('x'.repeat(300)));
    // Three of 300 bytes fit in 1,000: the newest three.
    expect(msgs.map((m) => memo.get(m, 'v') !== undefined)).toEqual([...Array(7).fill(false), true, true, true]);
  });

  it('keeps its bytes in one ring: an entry the cursor came round over is gone, the rest read back whole', () => {
    const memo = new WireMemo(1000);
    const msgs = Array.from({ length: 40 }, (_, i) => ({ role: 'user' as const, content: String(i) }));
    const bytesOf = (i: number) => Buffer.from(`{"n":${i},"pad":"${'x'.repeat(40 + ((i * 37) % 200))}"}`);
    for (let i = 0; i < msgs.length; i++) {
      memo.set(msgs[i]!, 'v', bytesOf(i));
      // Whatever is still handed back is exactly what was kept; what is not was overwritten.
      let held = 0;
      for (let j = 0; j <= i; j++) {
        const got = memo.get(msgs[j]!, 'v');
        if (got !== undefined) {
          expect(got.equals(bytesOf(j))).toBe(true);
          held += got.length;
        }
      }
      expect(held).toBeLessThanOrEqual(1000);
      expect(memo.get(msgs[i]!, 'v')).toBeDefined();
    }
    expect(memo.get(msgs[0]!, 'v')).toBeUndefined();
    // Too large for the ring, or with nothing in it: not kept.
    memo.set(msgs[0]!, 'v', Buffer.alloc(1001, 1));
    expect(memo.get(msgs[0]!, 'v')).toBeUndefined();
  });

  it('read only (a conversation\'s first request): hands back what is kept, keeps nothing new', () => {
    const memo = new WireMemo(1 << 20);
    const kept = Object.freeze({ role: 'user' as const, content: 'kept' });
    const fresh = Object.freeze({ role: 'user' as const, content: 'fresh' });
    memo.set(kept, 'v', Buffer.from('{"k":1}'));
    memo.readOnly.set(fresh, 'v', Buffer.from('{"f":1}'));
    expect(memo.readOnly.get(kept, 'v')?.toString()).toBe('{"k":1}');
    expect(memo.get(fresh, 'v')).toBeUndefined();
    // An encoder given the read-only memo serialises a fresh message and keeps nothing of it.
    const messages = [fresh];
    const plain = encodeRequest(request(messages), route, { bodyKey: false, headers: {} }, { stream: false, resolveImage: noImages });
    const readOnly = encodeRequest(request(messages), route, { bodyKey: false, headers: {} }, { stream: false, resolveImage: noImages, memo: memo.readOnly });
    expect(readOnly.body).toStrictEqual(plain.body);
    expect(memo.get(fresh, 'openai-chat\u0000reasoning_content\u0000false\u0000false')).toBeUndefined();
  });

  it('an encoder given the memo gives the same bytes, and reuses what it kept', () => {
    const memo = new WireMemo(1 << 20);
    const messages = [Object.freeze({ role: 'user' as const, content: 'line "one"\nline two' }), Object.freeze({ role: 'assistant' as const, content: 'ok' })];
    const plain = encodeRequest(request(messages), route, { bodyKey: false, headers: {} }, { stream: false, resolveImage: noImages });
    const first = encodeRequest(request(messages), route, { bodyKey: false, headers: {} }, { stream: false, resolveImage: noImages, memo });
    expect(first.body).toStrictEqual(plain.body);
    expect(memo.get(messages[0]!, 'openai-chat\u0000reasoning_content\u0000false\u0000false')).toBeDefined();
    // What the memo holds is what goes on the wire: a planted text shows it was read back.
    memo.set(messages[0]!, 'openai-chat\u0000reasoning_content\u0000false\u0000false', Buffer.from('{"role":"user","content":"planted"}'));
    const second = encodeRequest(request(messages), route, { bodyKey: false, headers: {} }, { stream: false, resolveImage: noImages, memo });
    expect(second.body.toString()).toContain('planted');
  });
});
