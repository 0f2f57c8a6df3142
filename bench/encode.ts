/**
 * Encoding one upstream request of a long conversation, per wire, with and without the memos
 * (docs/decisions.md, Memory follows live sessions): the conversation grows by a tool call and its
 * result per request, as an agent's does, and each request is encoded twice, once with memos
 * carried over from the requests before it (as the proxy does) and once without any; beside them,
 * one JSON.stringify of the whole body, which is how every wire but chat encoded before.
 */
import type { DialectRoute, WireFormat, WireHints } from '../src/core/route.js';
import type { NeutralMessage, NeutralRequest } from '../src/core/types.js';
import { dialectFor } from '../src/dialects/registry.js';
import type { EncodeOptions } from '../src/dialects/types.js';
import { BodyListMemo } from '../src/proxy/list-memo.js';
import { WireMemo } from '../src/proxy/wire-memo.js';
import { median } from './stats.js';

export interface EncodeRow {
  wire: string;
  messages: number;
  bodyKb: number;
  /** Median encode time per request, in ms: without memos, with them. */
  plainMs: number;
  memoMs: number;
  /** Median time of one JSON.stringify of the same body (parsed), to bytes: how the wires encoded before they kept anything, less building the objects. */
  wholeMs: number;
}

interface Case {
  name: string;
  wire: WireFormat;
  hints: WireHints;
}

const HINTS: WireHints = { bodyKey: false, headers: {} };
const CASES: Case[] = [
  { name: 'openai-chat', wire: 'openai-chat', hints: HINTS },
  { name: 'anthropic-messages (top-level cache_control)', wire: 'anthropic-messages', hints: { ...HINTS, cacheControl: 'ephemeral', cacheControlAt: 'top-level' } },
  { name: 'anthropic-messages (breakpoints)', wire: 'anthropic-messages', hints: { ...HINTS, cacheControl: 'ephemeral', cacheControlAt: 'breakpoints' } },
  { name: 'openai-responses', wire: 'openai-responses', hints: HINTS },
  { name: 'ollama-chat', wire: 'ollama-chat', hints: HINTS },
];

/** The proxy's default `[sessions] wire_cache_mb`, half for each memo (src/proxy/app.ts). */
const MEMO_BYTES = 4 * 2 ** 19;

function route(wire: WireFormat): DialectRoute {
  return { wire, preset: 'generic', provider: 'p', model: 'm', baseUrl: 'https://upstream.invalid/v1', reasoningOut: 'none', reasoningOnToolTurns: false, headers: {} };
}

/** Deterministic prose of about `n` characters, a little different per seed. */
function prose(seed: number, n: number): string {
  const words = ['the', 'window', 'keeps', 'prefix', 'bytes', 'stable', 'so', 'cache', 'hits', "it's", 'é', 'tool', '"quoted"', 'line\n'];
  let out = '';
  for (let i = 0; out.length < n; i++) out += words[(seed * 7 + i * 3) % words.length] + ' ';
  return out;
}

/** A frozen agent turn pair: a call and its result (about 500 bytes each on the wire). */
function turn(k: number): NeutralMessage[] {
  const id = `call_${k}`;
  return [
    Object.freeze({ role: 'assistant', content: prose(k, 120), tool_calls: [{ id, name: 'read_file', arguments: JSON.stringify({ path: `src/file${k}.ts` }) }] }),
    Object.freeze({ role: 'tool', tool_call_id: id, content: prose(k + 1, 700) }),
  ];
}

/**
 * `requests` requests ending at `messages` messages: each adds one turn pair. Medians per case,
 * the memos carried from one request to the next, the same requests encoded without them.
 */
export function measureEncode(messages = 2000, requests = 60): EncodeRow[] {
  const start: NeutralMessage[] = [Object.freeze({ role: 'system', content: prose(0, 4000) }), Object.freeze({ role: 'user', content: prose(1, 300) })];
  for (let k = 0; start.length < messages - 2 * requests; k++) start.push(...turn(k));
  const later = Array.from({ length: requests }, (_, r) => turn(100_000 + r));
  const resolveImage = () => {
    throw new Error('no images in this bench');
  };
  const rows: EncodeRow[] = [];
  for (const c of CASES) {
    const dialect = dialectFor(c.wire);
    const r = route(c.wire);
    const memoOpts: EncodeOptions = { stream: true, resolveImage, memo: new WireMemo(MEMO_BYTES), lists: new BodyListMemo(MEMO_BYTES) };
    const plainOpts: EncodeOptions = { stream: true, resolveImage };
    const history = [...start];
    const req = (): NeutralRequest => ({ model: 'm', messages: [...history], params: { max_tokens: 4096 }, tools: [] });
    // Warm up: the JIT, and the memos with the conversation so far (the proxy had served it before).
    for (let i = 0; i < 5; i++) {
      dialect.encodeRequest(req(), r, c.hints, memoOpts);
      dialect.encodeRequest(req(), r, c.hints, plainOpts);
    }
    const plain: number[] = [];
    const memo: number[] = [];
    const whole: number[] = [];
    let bytes = 0;
    for (const pair of later) {
      history.push(...pair);
      const q = req();
      // Timed to the bytes that go upstream: a body given as text is encoded on its way out.
      let t = process.hrtime.bigint();
      const withMemo = Buffer.from(dialect.encodeRequest(q, r, c.hints, memoOpts).body);
      memo.push(Number(process.hrtime.bigint() - t) / 1e6);
      t = process.hrtime.bigint();
      const without = Buffer.from(dialect.encodeRequest(q, r, c.hints, plainOpts).body);
      plain.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (!withMemo.equals(without)) throw new Error(`bench encode: ${c.name} gave other bytes with its memos`);
      bytes = without.length;
      const parsed = JSON.parse(without.toString()) as unknown;
      t = process.hrtime.bigint();
      Buffer.from(JSON.stringify(parsed));
      whole.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    rows.push({ wire: c.name, messages: history.length, bodyKb: bytes / 1024, plainMs: median(plain), memoMs: median(memo), wholeMs: median(whole) });
  }
  return rows;
}
