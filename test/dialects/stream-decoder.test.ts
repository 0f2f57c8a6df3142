import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLineDecoder, createNdjsonDecoder, createSseDecoder, type EventDecoder, type StreamEvent } from '../../src/dialects/stream-decoder.js';
import { sseEvent } from '../../src/dialects/sse-writer.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

function linesOf(chunks: Uint8Array[]): string[] {
  const d = createLineDecoder();
  const out: string[] = [];
  for (const c of chunks) out.push(...d.push(c));
  out.push(...d.flush());
  return out;
}

function eventsOf(decoder: EventDecoder, chunks: Uint8Array[]): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const c of chunks) out.push(...decoder.push(c));
  out.push(...decoder.flush());
  return out;
}

/** Every way to cut `bytes` in two, plus one byte at a time. */
function cuts(bytes: Uint8Array): Uint8Array[][] {
  const out: Uint8Array[][] = [Array.from(bytes, (_, i) => bytes.subarray(i, i + 1))];
  for (let i = 0; i <= bytes.length; i++) out.push([bytes.subarray(0, i), bytes.subarray(i)]);
  return out;
}

describe('line decoder (bytes -> lines)', () => {
  it.each([
    ['LF', 'a\nb\n\nc\n'],
    ['CRLF', 'a\r\nb\r\n\r\nc\r\n'],
    ['CR', 'a\rb\r\rc\r'],
    ['mixed', 'a\r\nb\n\rc\r'],
  ])('splits %s line ends into the same lines, wherever the chunks are cut', (_name, text) => {
    for (const chunks of cuts(enc(text))) expect(linesOf(chunks)).toStrictEqual(['a', 'b', '', 'c']);
  });

  it('treats a CRLF split across two chunks as one line end', () => {
    expect(linesOf([enc('x\r'), enc('\ny\r'), enc('\n')])).toStrictEqual(['x', 'y']);
  });

  it('hands out a line at its CR at once, without waiting for the next byte', () => {
    const d = createLineDecoder();
    expect(d.push(enc('first\r'))).toStrictEqual(['first']);
    expect(d.push(enc('\n'))).toStrictEqual([]);
    expect(d.push(enc('\r'))).toStrictEqual(['']);
  });

  it('keeps a CR followed by text in the next chunk as a line end', () => {
    expect(linesOf([enc('a\r'), enc('b\n')])).toStrictEqual(['a', 'b']);
  });

  it('joins multi-byte UTF-8 characters cut at any byte', () => {
    const text = 'é☕日本🎉\n𝔘x\n';
    for (const chunks of cuts(enc(text))) expect(linesOf(chunks)).toStrictEqual(['é☕日本🎉', '𝔘x']);
  });

  it('gives the last line without a line end on flush, and nothing twice', () => {
    const d = createLineDecoder();
    expect(d.push(enc('one\ntw'))).toStrictEqual(['one']);
    expect(d.push(enc('o'))).toStrictEqual([]);
    expect(d.flush()).toStrictEqual(['two']);
    expect(d.flush()).toStrictEqual([]);
  });

  it('drops a leading byte-order mark and replaces invalid bytes', () => {
    expect(linesOf([new Uint8Array([0xef, 0xbb, 0xbf]), enc('a\n')])).toStrictEqual(['a']);
    expect(linesOf([new Uint8Array([0x61, 0xff, 0x62, 0x0a])])).toStrictEqual(['a\uFFFDb']);
    // A character cut off by the end of the stream is flushed as a replacement, not lost silently.
    expect(linesOf([new Uint8Array([0x61, 0xe2, 0x98])])).toStrictEqual(['a\uFFFD']);
  });
});

describe('SSE decoder (lines -> events)', () => {
  const decode = (text: string): StreamEvent[] => eventsOf(createSseDecoder(), [enc(text)]);

  it('joins multi-line data with LF, with any line ends and any cut', () => {
    for (const end of ['\n', '\r\n', '\r']) {
      const text = ['event: note', 'data: line one', 'data:line two', 'data:  indented', '', ''].join(end);
      for (const chunks of cuts(enc(text))) {
        expect(eventsOf(createSseDecoder(), chunks)).toStrictEqual([{ event: 'note', data: 'line one\nline two\n indented', id: null }]);
      }
    }
  });

  it('ignores comments, unknown fields and retry, and dispatches only blocks with data', () => {
    expect(decode(': keep-alive\n\nretry: 100\nfoo: bar\n\nevent: ping\n\ndata: {}\n\n')).toStrictEqual([{ event: null, data: '{}', id: null }]);
  });

  it('reads a field without a colon as an empty value, and `data:` alone as an empty line', () => {
    expect(decode('data\n\ndata:\ndata:\n\n')).toStrictEqual([
      { event: null, data: '', id: null },
      { event: null, data: '\n', id: null },
    ]);
  });

  it('keeps the last event id across blocks and resets the event name per block', () => {
    expect(decode('id: 7\nevent: a\ndata: 1\n\ndata: 2\n\nid\ndata: 3\n\n')).toStrictEqual([
      { event: 'a', data: '1', id: '7' },
      { event: null, data: '2', id: '7' },
      { event: null, data: '3', id: '' },
    ]);
  });

  it('dispatches a block left without its blank line when the stream ends', () => {
    const d = createSseDecoder();
    expect(d.push(enc('data: {"usage":1}'))).toStrictEqual([]);
    expect(d.flush()).toStrictEqual([{ event: null, data: '{"usage":1}', id: null }]);
    expect(d.flush()).toStrictEqual([]);
  });

  it('dispatches an event as soon as its blank line arrives', () => {
    const d = createSseDecoder();
    expect(d.push(enc('data: a\n'))).toStrictEqual([]);
    expect(d.push(enc('\n'))).toStrictEqual([{ event: null, data: 'a', id: null }]);
  });

  it('decodes whatever the writer wrote, with any line ends and chunk sizes (property)', () => {
    const eventArb = fc.record({
      data: fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }).filter((s) => !/[\r\n]/.test(s)), { minLength: 1, maxLength: 3 }),
      event: fc.option(fc.stringMatching(/^[a-z_.]{1,10}$/), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 6 }), fc.constantFrom('\n', '\r\n', '\r'), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }), (events, end, sizes) => {
        const text = events.map((e) => sseEvent(e.data.join('\n'), e.event)).join('').replace(/\n/g, end);
        const bytes = enc(text);
        const chunks: Uint8Array[] = [];
        for (let i = 0, k = 0; i < bytes.length; k++) {
          const size = sizes[k % sizes.length] as number;
          chunks.push(bytes.subarray(i, i + size));
          i += size;
        }
        const got = eventsOf(createSseDecoder(), chunks);
        expect(got).toStrictEqual(events.map((e) => ({ event: e.event ?? null, data: e.data.join('\n'), id: null })));
      }),
      { numRuns: 150, seed: 20261015 },
    );
  });
});

describe('NDJSON decoder', () => {
  it('gives one event per non-blank line, across cuts and CRLF, and the last line on flush', () => {
    const text = '{"a":1}\r\n\n{"b":"é🎉"}\n{"c":3}';
    for (const chunks of cuts(enc(text))) {
      expect(eventsOf(createNdjsonDecoder(), chunks).map((e) => e.data)).toStrictEqual(['{"a":1}', '{"b":"é🎉"}', '{"c":3}']);
    }
  });

  it('carries no event name or id', () => {
    expect(eventsOf(createNdjsonDecoder(), [enc('{}\n')])).toStrictEqual([{ event: null, data: '{}', id: null }]);
  });
});
