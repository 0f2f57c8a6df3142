/**
 * Request bodies for the input fuzzer (fuzz.test.ts): a conversation in the generator's own terms,
 * rendered into each inbound wire's body, then bent out of shape (wrong types, huge values, deep
 * nesting, numbers JSON.parse makes infinite, lone surrogates, bad images, broken tool pairs). A
 * body's text holds `@MARK@` where its last user text starts, for the runner to stamp.
 */
import fc from 'fast-check';

export type Wire = 'chat' | 'messages' | 'responses';
export const WIRES: readonly Wire[] = ['chat', 'messages', 'responses'];
export const PATH_OF: Record<Wire, string> = { chat: '/v1/chat/completions', messages: '/v1/messages', responses: '/v1/responses' };
/** One model per upstream wire (fuzz.test.ts configures them), so every inbound wire meets every encoder. */
export const MODELS = ['ds', 'an', 'rs', 'ol'] as const;
export const MARK = '@MARK@';

export interface Call { id: string; name: string; args: string }
export type Turn =
  | { kind: 'user'; text: string; image?: string }
  | { kind: 'assistant'; text: string; calls: Call[] }
  | { kind: 'result'; id: string; text: string };
export interface Conv { system: string | undefined; turns: Turn[] }

/** What one request sends: the body text (or bytes) and its content type. */
export interface Sent { body: string | Uint8Array; contentType: string | undefined; headers?: Record<string, string> }

// ---- values -------------------------------------------------------------------------------

/** Text that never holds a simulator directive (`[[...]]` would steer the reply: src/sim/directives.ts). */
const text = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\udc00\ud800', '\uffff\ufffe', '🙂'.repeat(3), '\r\n\t', '{"a":1}', '</s><|im_end|>') },
).map((s) => s.replaceAll('[[', '[ ['));

const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
/** A PNG header claiming any width and height (the token estimate reads them). */
const pngWithSize = fc.tuple(fc.nat(), fc.nat()).map(([w, h]) => {
  const b = Buffer.from(PNG_1x1, 'base64');
  b.writeUInt32BE(w >>> 0, 16);
  b.writeUInt32BE(h >>> 0, 20);
  return `data:image/png;base64,${b.toString('base64')}`;
});
const image = fc.oneof(
  fc.constant(`data:image/png;base64,${PNG_1x1}`),
  pngWithSize,
  fc.constantFrom(
    'data:image/png;base64,', 'data:image/png;base64,!!!!', 'data:image/png;base64,====', 'data:;base64,AAAA', 'data:image/png,rawbytes',
    'data:image/jpeg;base64,/9j/', 'data:image/gif;base64,R0lGODlh', 'data:image/webp;base64,UklGRgAAAABXRUJQVlA4WAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    'data:text/html;base64,PGgxPmhpPC9oMT4=', 'https://example.com/cat.png', 'file:///etc/passwd', 'data:image/png;base64,' + '\u0000'.repeat(8), 'x',
  ),
  fc.string({ unit: 'binary', maxLength: 30 }).map((s) => `data:image/png;base64,${s}`),
);

/** Ids: short, shared between calls often (duplicates and orphans), now and then huge. */
const id = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('call_1', 'call_2', 'toolu_1', 'c') },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(10_000, 60_000).map((n) => 'i'.repeat(n)) },
);
const args = fc.oneof(fc.constantFrom('{}', '{"path":"a.txt"}', '', 'not json', '[1,2]', 'null', '{"a":', '1e400', '"\\ud800"'), fc.json({ maxDepth: 3 }));

const turn: fc.Arbitrary<Turn> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('user' as const), text, image: fc.option(image, { nil: undefined, freq: 5 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('assistant' as const), text, calls: fc.array(fc.record({ id, name: fc.constantFrom('read', 'write', 'x'), args }), { maxLength: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('result' as const), id, text }) },
);

/** A conversation that ends on a user turn, usually well formed, often with tool calls, results and orphans. */
export const conv: fc.Arbitrary<Conv> = fc.record({
  system: fc.option(text, { nil: undefined }),
  turns: fc.array(turn, { maxLength: 8 }),
  last: text,
}).map(({ system, turns, last }) => ({ system, turns: [...turns, { kind: 'user', text: `${MARK} ${last}` }] }));

// ---- wires --------------------------------------------------------------------------------

function chatMessages(c: Conv): unknown[] {
  const out: unknown[] = c.system === undefined ? [] : [{ role: 'system', content: c.system }];
  for (const t of c.turns) {
    if (t.kind === 'user') out.push({ role: 'user', content: t.image === undefined ? t.text : [{ type: 'text', text: t.text }, { type: 'image_url', image_url: { url: t.image } }] });
    else if (t.kind === 'result') out.push({ role: 'tool', tool_call_id: t.id, content: t.text });
    else {
      const msg: Record<string, unknown> = { role: 'assistant', content: t.text === '' && t.calls.length > 0 ? null : t.text };
      if (t.calls.length > 0) msg.tool_calls = t.calls.map((k) => ({ id: k.id, type: 'function', function: { name: k.name, arguments: k.args } }));
      out.push(msg);
    }
  }
  return out;
}

function anthropicImage(url: string): unknown {
  const m = /^data:([^;,]*);base64,(.*)$/s.exec(url);
  return { type: 'image', source: m === null ? { type: 'url', url } : { type: 'base64', media_type: m[1], data: m[2] } };
}

function objectArgs(text: string): unknown {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { raw: text };
  }
}

function anthropicMessages(c: Conv): unknown[] {
  const out: { role: string; content: unknown[] }[] = [];
  const push = (role: string, block: unknown) => {
    const last = out.at(-1);
    if (last?.role === role) last.content.push(block);
    else out.push({ role, content: [block] });
  };
  for (const t of c.turns) {
    if (t.kind === 'user') {
      push('user', { type: 'text', text: t.text });
      if (t.image !== undefined) push('user', anthropicImage(t.image));
    } else if (t.kind === 'result') push('user', { type: 'tool_result', tool_use_id: t.id, content: t.text });
    else {
      if (t.text !== '' || t.calls.length === 0) push('assistant', { type: 'text', text: t.text });
      for (const k of t.calls) push('assistant', { type: 'tool_use', id: k.id, name: k.name, input: objectArgs(k.args) });
    }
  }
  return out;
}

function responsesInput(c: Conv): unknown[] {
  const out: unknown[] = [];
  for (const t of c.turns) {
    if (t.kind === 'user') {
      out.push({ type: 'message', role: 'user', content: t.image === undefined ? t.text : [{ type: 'input_text', text: t.text }, { type: 'input_image', image_url: t.image }] });
    } else if (t.kind === 'result') out.push({ type: 'function_call_output', call_id: t.id, output: t.text });
    else {
      if (t.text !== '') out.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: t.text }] });
      for (const k of t.calls) out.push({ type: 'function_call', call_id: k.id, name: k.name, arguments: k.args });
    }
  }
  return out;
}

const TOOL = { name: 'read', description: 'Read a file.', schema: { type: 'object', properties: { path: { type: 'string' } } } };

export interface BodyOptions { model: string; stream: boolean; tools: boolean }

/** The conversation as a body of `wire`, as that wire's official SDK would send it. */
export function render(wire: Wire, c: Conv, o: BodyOptions): Record<string, unknown> {
  if (wire === 'chat') {
    return {
      model: o.model, messages: chatMessages(c), stream: o.stream, max_tokens: 64,
      ...(o.tools ? { tools: [{ type: 'function', function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.schema } }] } : {}),
    };
  }
  if (wire === 'messages') {
    return {
      model: o.model, max_tokens: 64, messages: anthropicMessages(c), stream: o.stream,
      ...(c.system === undefined ? {} : { system: c.system }),
      ...(o.tools ? { tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.schema }] } : {}),
    };
  }
  return {
    model: o.model, input: responsesInput(c), stream: o.stream, max_output_tokens: 64,
    ...(c.system === undefined ? {} : { instructions: c.system }),
    ...(o.tools ? { tools: [{ type: 'function', name: TOOL.name, description: TOOL.description, parameters: TOOL.schema }] } : {}),
  };
}

export const bodyOptions: fc.Arbitrary<BodyOptions> = fc.record({
  model: fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...MODELS) }, { weight: 1, arbitrary: fc.constantFrom('', 'nope', 'ds/x', 'an/claude-sim', 'sim/sim', 'x'.repeat(5000)) }),
  stream: fc.boolean(),
  tools: fc.boolean(),
});
