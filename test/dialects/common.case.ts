/**
 * The shared dialect suite (hono's `common.case` style): every dialect runs it over its own recorded
 * fixtures in test/fixtures/dialects/<wire>/<case>/:
 *
 *   case.json            { about, route: {provider, model, preset}, status? }
 *   stream.sse|.ndjson   a raw stream body as the upstream sent it (LF line ends)
 *   reply.json           the same reply as a non-stream body, where one exists
 *   expected.json        the NeutralReply both must decode to
 *   expected-error.json  the UpstreamError of a mid-stream error event, or of error-body.txt
 *   error-body.txt       an HTTP error body (status in case.json)
 *
 * A stream is fed whole, one byte at a time, and in seeded random chunk sizes, each with LF, CRLF
 * and CR line ends. Every case named in REQUIRED_CASES must exist unless the dialect gives a
 * written reason to skip it.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DialectRoute } from '../../src/core/route.js';
import type { NeutralReply, OpaqueBlock, ToolCall, Usage } from '../../src/core/types.js';
import { createEventDecoder } from '../../src/dialects/stream-decoder.js';
import type { Dialect, StreamDelta, UpstreamError } from '../../src/dialects/types.js';
import { replayThroughOpenAISdk } from './sdk-client.js';
import { mulberry32 as seeded } from '../../src/core/prng.js';

export const REQUIRED_CASES = ['text', 'tool-call', 'parallel-tool-calls', 'thinking', 'upstream-error', 'midstream-error'] as const;
export type RequiredCase = (typeof REQUIRED_CASES)[number];

export interface DialectSuite {
  dialect: Dialect;
  fixtures: string;
  /** Fields every case's route shares; each case.json names provider, model and preset. */
  baseRoute: Omit<DialectRoute, 'provider' | 'model' | 'preset'>;
  /** Required case -> why this dialect has no such fixture. */
  skip?: Partial<Record<RequiredCase, string>>;
}

interface CaseMeta {
  about: string;
  route: { provider: string; model: string; preset: string };
  status?: number;
}

type LineEnd = 'LF' | 'CRLF' | 'CR';


export function chunkings(bytes: Uint8Array): { name: string; chunks: Uint8Array[] }[] {
  const out = [
    { name: 'whole', chunks: [bytes] },
    { name: '1-byte', chunks: Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)) },
  ];
  for (const seed of [1, 7, 42]) {
    const rnd = seeded(seed);
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; ) {
      const size = 1 + Math.floor(rnd() * 97);
      chunks.push(bytes.subarray(i, i + size));
      i += size;
    }
    out.push({ name: `random seed ${seed}`, chunks });
  }
  return out;
}

function withLineEnds(text: string, end: LineEnd): string {
  return end === 'LF' ? text : text.replace(/\n/g, end === 'CRLF' ? '\r\n' : '\r');
}

/** Feeds chunks through the byte decoder and the dialect's stream decoder. */
export function decodeStream(dialect: Dialect, route: DialectRoute, chunks: Uint8Array[]): { deltas: StreamDelta[]; reply: NeutralReply } {
  const decoder = dialect.createStreamDecoder(route);
  const events = createEventDecoder(decoder.framing);
  const deltas: StreamDelta[] = [];
  for (const chunk of chunks) for (const ev of events.push(chunk)) deltas.push(...decoder.onEvent(ev));
  for (const ev of events.flush()) deltas.push(...decoder.onEvent(ev));
  return { deltas, reply: decoder.finish() };
}

/** What a client would hold after reading only the deltas; must agree with finish(). */
function foldDeltas(deltas: StreamDelta[]) {
  let content = '';
  let thinking = '';
  const calls: ToolCall[] = [];
  let finish: string | null = null;
  let usage: Usage | undefined;
  const errors: UpstreamError[] = [];
  const blocks: OpaqueBlock[] = [];
  for (const d of deltas) {
    if (d.type === 'block') {
      blocks.push(d.block);
      continue;
    }
    if (d.type === 'content') content += d.text;
    else if (d.type === 'thinking') thinking += d.text;
    else if (d.type === 'tool_call_start') {
      expect(d.index).toBe(calls.length);
      calls.push({ id: d.id, name: d.name, arguments: '' });
    } else if (d.type === 'tool_call_args') {
      const call = calls[d.index];
      expect(call, `arguments before the start of call ${d.index}`).toBeDefined();
      if (call !== undefined) call.arguments += d.text;
    } else if (d.type === 'finish') {
      expect(finish, 'one finish delta').toBeNull();
      finish = d.reason;
    } else if (d.type === 'usage') usage = d.usage;
    else if (d.type === 'error') errors.push(d.error);
  }
  return { content, thinking, calls, finish, usage, errors, blocks };
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

export function runDialectSuite(suite: DialectSuite): void {
  const { dialect, fixtures } = suite;
  const cases = readdirSync(fixtures, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();

  describe(`dialect ${dialect.wire}: shared suite`, () => {
    for (const required of REQUIRED_CASES) {
      const reason = suite.skip?.[required];
      if (reason !== undefined) {
        it.skip(`${required}: skipped because ${reason}`, () => {});
        continue;
      }
      it(`has the required fixture "${required}"`, () => {
        expect(cases).toContain(required);
      });
    }

    for (const name of cases) {
      const dir = join(fixtures, name);
      const meta = readJson<CaseMeta>(join(dir, 'case.json'));
      const route: DialectRoute = { ...suite.baseRoute, ...meta.route };
      const file = (f: string): string | undefined => (existsSync(join(dir, f)) ? join(dir, f) : undefined);
      const streamFile = file('stream.sse') ?? file('stream.ndjson');
      const replyFile = file('reply.json');
      const expectedFile = file('expected.json');
      const errorFile = file('expected-error.json');
      const errorBody = file('error-body.txt');

      describe(`${name}: ${meta.about}`, () => {
        if (errorBody !== undefined) {
          it('decodeError reads the HTTP error body', () => {
            expect(errorFile, 'expected-error.json').toBeDefined();
            const got = dialect.decodeError(meta.status ?? 500, readFileSync(errorBody, 'utf8'));
            expect(got).toStrictEqual(readJson(errorFile as string));
          });
        }

        if (replyFile !== undefined) {
          it('decodeReply gives the expected reply', () => {
            const got = dialect.decodeReply(200, readJson(replyFile), route);
            expect(got).toStrictEqual(readJson(expectedFile as string));
          });
        }

        if (streamFile === undefined) return;
        it('uses the framing its file is named for', () => {
          expect(streamFile.endsWith(`.${dialect.createStreamDecoder(route).framing}`)).toBe(true);
        });
        const raw = readFileSync(streamFile, 'utf8');
        const expected = readJson<NeutralReply>(expectedFile as string);
        for (const end of ['LF', 'CRLF', 'CR'] as const) {
          it(`assembles the expected reply from any chunking, ${end} line ends`, () => {
            const bytes = new TextEncoder().encode(withLineEnds(raw, end));
            const whole = replyFile === undefined ? undefined : dialect.decodeReply(200, readJson(replyFile), route);
            for (const { name: how, chunks } of chunkings(bytes)) {
              const { deltas, reply } = decodeStream(dialect, route, chunks);
              expect(reply, how).toStrictEqual(expected);
              if (whole !== undefined) expect(reply, `${how}: equal to decodeReply`).toStrictEqual(whole);

              const folded = foldDeltas(deltas);
              expect(folded.content, how).toBe(reply.content ?? '');
              expect(folded.thinking, how).toBe(reply.thinking ?? '');
              expect(folded.calls, how).toStrictEqual(reply.tool_calls ?? []);
              expect(folded.usage, how).toStrictEqual(reply.usage);
              // A wire whose stream hands out its opaque blocks hands out each, whole and in order.
              if (folded.blocks.length > 0) expect(folded.blocks, how).toStrictEqual(reply.blocks);
              if (folded.errors.length === 0) expect(folded.finish, how).toBe(reply.finish_reason);
              if (errorFile !== undefined) expect(folded.errors, how).toStrictEqual([readJson(errorFile)]);
              else expect(folded.errors, how).toStrictEqual([]);
            }
          });
        }

        if (errorFile === undefined) {
          it('reaches an openai SDK client as the same reply (stream and non-stream)', async () => {
            const { deltas, reply } = decodeStream(dialect, route, [new TextEncoder().encode(raw)]);
            const seen = await replayThroughOpenAISdk(deltas, reply);
            expect(seen.streamed.content).toBe(reply.content);
            expect(seen.whole.content).toBe(reply.content);
            for (const msg of [seen.streamed, seen.whole]) {
              expect(msg.reasoning_content).toBe(reply.thinking);
              expect(msg.tool_calls).toStrictEqual(reply.tool_calls);
              expect(msg.usage.prompt_tokens).toBe(reply.usage?.prompt_tokens ?? 0);
              expect(msg.usage.cached_tokens).toBe(reply.usage?.cached_tokens);
              expect(msg.usage.reasoning_tokens).toBe(reply.usage?.reasoning_tokens);
            }
            const calls = reply.tool_calls ?? [];
            expect(seen.streamed.finish_reason).toBe(reply.finish_reason ?? (calls.length > 0 ? 'tool_calls' : 'stop'));
          });
        }
      });
    }
  });
}
