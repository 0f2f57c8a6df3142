/**
 * Reading one client request of a long conversation, per inbound wire: the body parsed, checked and
 * converted to neutral messages, as the proxy does before it looks for the session. The
 * conversation grows by a tool call and its result per request, as an agent's does, and each body
 * is read twice: through the body memo carried over from the requests before it (the proxy's path:
 * the repeated elements taken as parsed, their checks and conversions reused; docs/decisions.md,
 * Bodies parsed once), from scratch (JSON.parse of the whole body, every message checked and
 * converted: a body under 16 KB, or any body with the memo off), and with only the parse taken from
 * the memo (what a body of 256 KB and more cost before the checks and conversions were kept). The
 * memo's path must give the same request as a read from scratch.
 */
import type { InboundDialect } from '../src/dialects/types.js';
import { INBOUND_DIALECTS } from '../src/dialects/registry.js';
import { BodyMemo } from '../src/proxy/body-memo.js';
import { median } from './stats.js';

export interface InboundRow {
  wire: string;
  messages: number;
  bodyKb: number;
  /** Median time per request, in ms: from scratch, through the memo, and with only the parse taken from it. */
  wholeMs: number;
  memoMs: number;
  parseOnlyMs: number;
}

/** The proxy's own bound on the kept bodies (src/proxy/app.ts). */
const MEMO_BYTES = 8 * 2 ** 20;

/** Deterministic prose of about `n` characters, a little different per seed. */
function prose(seed: number, n: number): string {
  const words = ['the', 'window', 'keeps', 'prefix', 'bytes', 'stable', 'so', 'cache', 'hits', "it's", 'é', 'tool', '"quoted"', 'line\n'];
  let out = '';
  for (let i = 0; out.length < n; i++) out += words[(seed * 7 + i * 3) % words.length] + ' ';
  return out;
}

/** How a wire's body holds a system prompt, a first user message and tool rounds. */
interface Shape {
  name: string;
  head: (system: string) => Record<string, unknown>;
  listKey: string;
  first: (text: string) => unknown[];
  round: (k: number) => unknown[];
}

const SHAPES: Shape[] = [
  {
    name: 'openai-chat',
    head: (system) => ({ model: 'm', messages: [{ role: 'system', content: system }] }),
    listKey: 'messages',
    first: (text) => [{ role: 'user', content: text }],
    round: (k) => [
      { role: 'assistant', content: prose(k, 120), tool_calls: [{ id: `call_${k}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `src/file${k}.ts` }) } }] },
      { role: 'tool', tool_call_id: `call_${k}`, content: prose(k + 1, 700) },
    ],
  },
  {
    name: 'anthropic-messages',
    head: (system) => ({ model: 'm', max_tokens: 4096, system, messages: [] }),
    listKey: 'messages',
    first: (text) => [{ role: 'user', content: [{ type: 'text', text }] }],
    round: (k) => [
      { role: 'assistant', content: [{ type: 'text', text: prose(k, 120) }, { type: 'tool_use', id: `toolu_${k}`, name: 'read_file', input: { path: `src/file${k}.ts` } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${k}`, content: prose(k + 1, 700) }] },
    ],
  },
  {
    name: 'openai-responses',
    head: (system) => ({ model: 'm', instructions: system, input: [] }),
    listKey: 'input',
    first: (text) => [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }],
    round: (k) => [
      { type: 'function_call', call_id: `call_${k}`, name: 'read_file', arguments: JSON.stringify({ path: `src/file${k}.ts` }) },
      { type: 'function_call_output', call_id: `call_${k}`, output: prose(k + 1, 700) },
    ],
  },
];

function inboundOf(wire: string): InboundDialect {
  const found = INBOUND_DIALECTS.find((d) => d.wire === wire);
  if (found === undefined) throw new Error(`bench inbound: no inbound wire ${wire}`);
  return found;
}

const noImages = () => {
  throw new Error('no images in this bench');
};

/**
 * `requests` requests ending at about `messages` list elements: each adds one tool round. Medians
 * per wire; the memo is carried from one request to the next, as the proxy's is.
 */
export function measureInbound(messages = 2000, requests = 60): InboundRow[] {
  const rows: InboundRow[] = [];
  for (const shape of SHAPES) {
    const inbound = inboundOf(shape.name);
    const head = shape.head(prose(0, 4000));
    const list: unknown[] = [...(head[shape.listKey] as unknown[]), ...shape.first(prose(1, 300))];
    for (let k = 0; list.length < messages - 2 * requests; k++) list.push(...shape.round(k));
    const body = (): Buffer => Buffer.from(JSON.stringify({ ...head, [shape.listKey]: list }));
    const memo = new BodyMemo(MEMO_BYTES);
    const read = (bytes: Buffer, m: BodyMemo | undefined) => inbound.parse(m === undefined ? JSON.parse(bytes.toString('utf8')) : m.parse(bytes, inbound.bodyList), noImages);
    // The memo's parse, its list copied: no earlier list vouches for it, so every element is checked and converted.
    const parseOnly = (bytes: Buffer, m: BodyMemo) => {
      const value = m.parse(bytes, inbound.bodyList) as Record<string, unknown>;
      return inbound.parse({ ...value, [shape.listKey]: [...(value[shape.listKey] as unknown[])] }, noImages);
    };
    const other = new BodyMemo(MEMO_BYTES);
    // Warm up: the JIT, and the memo with the conversation so far (the proxy had served it before).
    for (let i = 0; i < 5; i++) {
      list.push(...shape.round(50_000 + i));
      const bytes = body();
      read(bytes, memo);
      read(bytes, undefined);
      parseOnly(bytes, other);
    }
    const whole: number[] = [];
    const viaMemo: number[] = [];
    const parsedOnly: number[] = [];
    let size = 0;
    for (let r = 0; r < requests; r++) {
      list.push(...shape.round(100_000 + r));
      const bytes = body();
      size = bytes.length;
      let t = process.hrtime.bigint();
      const a = read(bytes, memo);
      viaMemo.push(Number(process.hrtime.bigint() - t) / 1e6);
      t = process.hrtime.bigint();
      const b = read(bytes, undefined);
      whole.push(Number(process.hrtime.bigint() - t) / 1e6);
      t = process.hrtime.bigint();
      parseOnly(bytes, other);
      parsedOnly.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (JSON.stringify(a.messages) !== JSON.stringify(b.messages) || a.system !== b.system) throw new Error(`bench inbound: ${shape.name} read another request through the memo`);
    }
    rows.push({ wire: shape.name, messages: list.length, bodyKb: size / 1024, wholeMs: median(whole), memoMs: median(viaMemo), parseOnlyMs: median(parsedOnly) });
  }
  return rows;
}
