import { describe, expect, it } from 'vitest';
import { SSE_DONE, sseComment, sseEvent, sseJson } from '../../src/dialects/sse-writer.js';
import { createSseDecoder } from '../../src/dialects/stream-decoder.js';

describe('SSE writer', () => {
  it('writes one data line for JSON, and the [DONE] marker', () => {
    expect(sseJson({ a: 'x\ny', b: [1] })).toBe('data: {"a":"x\\ny","b":[1]}\n\n');
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
  });

  it('names the event when asked', () => {
    expect(sseJson({ type: 'ping' }, 'ping')).toBe('event: ping\ndata: {"type":"ping"}\n\n');
  });

  it('writes text with line breaks as several data lines, read back joined with LF', () => {
    const frame = sseEvent('one\r\ntwo\rthree\nfour');
    expect(frame).toBe('data: one\ndata: two\ndata: three\ndata: four\n\n');
    expect(createSseDecoder().push(new TextEncoder().encode(frame))).toStrictEqual([{ event: null, data: 'one\ntwo\nthree\nfour', id: null }]);
  });

  it('refuses an event name that would break the frame', () => {
    expect(() => sseEvent('x', 'bad\nname')).toThrow(TypeError);
  });

  it('writes comments a reader skips', () => {
    const frame = sseComment('keep\nalive') + sseJson(1);
    expect(sseComment('keep\nalive')).toBe(': keep alive\n\n');
    expect(createSseDecoder().push(new TextEncoder().encode(frame))).toStrictEqual([{ event: null, data: '1', id: null }]);
  });
});
