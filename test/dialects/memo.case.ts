/**
 * The one property every encoder that reuses kept bytes must hold, run against each: whatever
 * sequence of requests came before (appends, rewrites of earlier messages, truncations, trims, forks,
 * conversations taking turns, other routes, models and cache hints, memos of any bound), a
 * request's body is the bytes the same encoder gives it without any memo.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { DialectRoute, EncodedRequest, WireHints } from '../../src/core/route.js';
import type { ContentPart, NeutralMessage, NeutralRequest, OpaqueBlock, RequestParams, ToolSpec } from '../../src/core/types.js';
import type { EncodeOptions, SerialisationMemo } from '../../src/dialects/types.js';
import { BodyListMemo } from '../../src/proxy/list-memo.js';
import { WireMemo } from '../../src/proxy/wire-memo.js';

export type Encode = (req: NeutralRequest, route: DialectRoute, hints: WireHints, opts: EncodeOptions) => EncodedRequest;

export interface MemoCase {
  encode: Encode;
  /** Routes a request may take (a step picks one). */
  routes: readonly DialectRoute[];
  hints: readonly WireHints[];
  params: readonly RequestParams[];
}

/** A per-message memo that counts what it was asked and what it was given. */
export class CountingMemo implements SerialisationMemo {
  readonly inner = new WireMemo(1 << 24);
  gets = 0;
  sets = 0;
  get(msg: object, variant: string): Buffer | undefined {
    this.gets++;
    return this.inner.get(msg, variant);
  }
  set(msg: object, variant: string, bytes: Buffer): void {
    this.sets++;
    this.inner.set(msg, variant, bytes);
  }
}

const origin = { provider: 'p', model: 'm' };
const tool: ToolSpec = { type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };
/**
 * Catalogs as the window hands them, the same array from request to request: each wire keeps a
 * catalog's text by its array (tools-json.ts), which must be the text a fresh copy gives under any
 * route and hints (a breakpoint on the last tool, or not).
 */
const CATALOGS: readonly ToolSpec[][] = [[], [tool], [tool, { type: 'function', function: { name: 'write', description: 'Writes a file.', strict: true } }]];
export const resolveImage = (sha: string) => ({ mime: 'image/png', base64: `iVBOR${sha}=` });

const text = fc.oneof(fc.constant(''), fc.string({ maxLength: 10 }), fc.string({ minLength: 1200, maxLength: 1600 }));
const block = fc.record({ kind: fc.constantFrom('anthropic.thinking', 'anthropic.redacted_thinking', 'responses.reasoning'), before: fc.nat(3), text: fc.string({ maxLength: 8 }) });
const spec = fc.oneof(
  fc.record({ role: fc.constant('user' as const), text, image: fc.boolean(), parts: fc.boolean() }),
  fc.record({ role: fc.constant('tool' as const), text, id: fc.nat(3) }),
  fc.record({ role: fc.constant('assistant' as const), text, calls: fc.nat(2), blocks: fc.array(block, { maxLength: 2 }), badArgs: fc.boolean() }),
  fc.record({ role: fc.constant('system' as const), text }),
);
type Spec = typeof spec extends fc.Arbitrary<infer T> ? T : never;

function opaque(b: { kind: string; before: number; text: string }): OpaqueBlock {
  const data =
    b.kind === 'anthropic.thinking' ? { type: 'thinking', thinking: b.text, signature: `sig${b.text}` }
    : b.kind === 'anthropic.redacted_thinking' ? { type: 'redacted_thinking', data: `r${b.text}` }
    : { type: 'reasoning', summary: [], encrypted_content: `enc${b.text}` };
  return Object.freeze({ kind: b.kind as OpaqueBlock['kind'], origin, data, before_call: b.before });
}

/** A frozen message, as the window hands them. */
export function message(s: Spec): NeutralMessage {
  switch (s.role) {
    case 'user': {
      if (!s.parts) return Object.freeze({ role: 'user', content: s.text });
      const parts: ContentPart[] = [{ type: 'text', text: s.text }];
      if (s.image) parts.push({ type: 'image', sha256: `${s.text.length}`, mime: 'image/png', tokens: 85 });
      return Object.freeze({ role: 'user', content: parts });
    }
    case 'tool':
      return Object.freeze({ role: 'tool', tool_call_id: `c${s.id}`, content: s.text });
    case 'system':
      return Object.freeze({ role: 'system', content: s.text });
    case 'assistant': {
      const calls = Array.from({ length: s.calls }, (_, k) => ({ id: `c${k}`, name: 'read', arguments: s.badArgs ? 'not json' : `{"path":"${k}.ts"}` }));
      return Object.freeze({ role: 'assistant', content: s.text, thinking: `why ${s.text.length}`, blocks: s.blocks.map(opaque), tool_calls: calls });
    }
  }
}

/** Long enough from the start for the body to be kept (64 messages or more), after a leading system prompt. */
function opening(): NeutralMessage[] {
  const turns = Array.from({ length: 63 }, (_, i) =>
    i % 2 === 0 ? message({ role: 'user', text: `opening ${i}`, image: false, parts: false }) : message({ role: 'assistant', text: `ok ${i}`, calls: 0, blocks: [], badArgs: false }),
  );
  return [Object.freeze({ role: 'system', content: 'sys '.repeat(900) }), ...turns];
}

export function checkMemoEquivalence(c: MemoCase, numRuns: number): void {
  const step = fc.record({
    op: fc.constantFrom('append', 'append', 'append', 'rewrite', 'replace', 'truncate', 'drop', 'behead', 'fork', 'switch'),
    at: fc.nat(),
    fresh: fc.array(spec, { minLength: 1, maxLength: 3 }),
    route: fc.nat(c.routes.length - 1),
    hints: fc.nat(c.hints.length - 1),
    params: fc.nat(c.params.length - 1),
    model: fc.constantFrom('m', 'n'),
    tools: fc.nat(CATALOGS.length - 1),
  });
  const plain = (req: NeutralRequest, route: DialectRoute, hints: WireHints): Buffer =>
    Buffer.from(c.encode({ ...req, tools: structuredClone(req.tools) }, route, hints, { stream: true, resolveImage }).body);
  fc.assert(
    fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), fc.constantFrom(1 << 20, 5000, 300), (steps, bound) => {
      const opts: EncodeOptions = { stream: true, resolveImage, memo: new WireMemo(bound), lists: new BodyListMemo(bound) };
      const conversations: NeutralMessage[][] = [opening()];
      let current = 0;
      for (const s of steps) {
        let msgs = conversations[current]!;
        const fresh = s.fresh.map(message);
        const at = s.at % msgs.length;
        if (s.op === 'append') msgs = [...msgs, ...fresh];
        // The same message again as a new object, or another message in its place.
        else if (s.op === 'rewrite') msgs = msgs.map((m, i) => (i === at ? Object.freeze({ ...m }) : m));
        else if (s.op === 'replace') msgs = msgs.map((m, i) => (i === at ? fresh[0]! : m));
        else if (s.op === 'truncate') msgs = [...msgs.slice(0, 1 + at), ...fresh];
        // Messages after the first left out, as a window trims: the rest move up, a system message may come to lead.
        else if (s.op === 'drop') msgs = [msgs[0]!, ...msgs.slice(1 + at), ...fresh];
        // The first messages left out too: another message leads, the list memo has nothing for it.
        else if (s.op === 'behead') msgs = [...msgs.slice(at), ...fresh];
        else if (s.op === 'fork') {
          conversations.push([...msgs.slice(0, 1 + at), ...fresh]);
          current = conversations.length - 1;
          msgs = conversations[current]!;
        } else {
          current = s.at % conversations.length;
          msgs = [...conversations[current]!, ...fresh];
        }
        conversations[current] = msgs;
        const req: NeutralRequest = { model: s.model, messages: msgs, params: c.params[s.params]!, tools: CATALOGS[s.tools]! };
        const route = c.routes[s.route]!;
        const hints = c.hints[s.hints]!;
        const got = Buffer.from(c.encode(req, route, hints, opts).body);
        const want = plain(req, route, hints);
        if (!got.equals(want)) expect(got.toString()).toBe(want.toString());
        // And the plain bytes are one JSON document, as JSON.stringify writes it.
        expect(JSON.stringify(JSON.parse(want.toString()))).toBe(want.toString());
      }
    }),
    { numRuns },
  );
}
