/**
 * How the fuzzer (fuzz.test.ts) bends a well-formed body: a value of the wrong type at any path,
 * a field removed or added, an element pushed into any list, raw JSON text spliced in (nesting
 * over and under the 128-level limit, numbers JSON.parse reads as infinite, escaped lone
 * surrogates and NULs), huge strings and lists (some past `body_limit`), a body that is no object
 * or no JSON at all, another content type, odd headers.
 */
import fc from 'fast-check';
import type { Sent } from './fuzz-bodies.js';

const RAW = '"@RAW@"';

export type Mutation =
  | { op: 'none' }
  | { op: 'set'; pick: number; value: unknown }
  | { op: 'delete'; pick: number }
  | { op: 'insert'; pick: number; value: unknown }
  | { op: 'add'; pick: number; key: string; value: unknown }
  | { op: 'raw'; pick: number; raw: string }
  | { op: 'huge'; pick: number; kind: 'string' | 'array'; size: number }
  | { op: 'body'; body: string | number[] }
  | { op: 'type'; contentType: string | undefined }
  | { op: 'headers'; headers: Record<string, string> };

type Path = (string | number)[];

const weird = fc.oneof(
  fc.constantFrom<unknown>(
    null, true, false, 0, -0, -1, 1, 0.5, 1e308, -1e308, 2 ** 53 + 1, 1e21, 5e-324, '', '0', 'null', [], {}, [[]], [null], [{}],
    'wizard', 'function', 'tool', 'system', 'developer', 'assistant', 'model', { role: 'wizard', content: 'x' }, { role: 'user' }, { role: null },
    { type: 'nope' }, { type: 'text' }, { type: 'image_url', image_url: { url: 5 } }, { type: 'input_audio', input_audio: {} }, { type: 'document', source: {} },
    { type: 'tool_result' }, { type: 'tool_use', id: 'x', name: 'y', input: [] }, { type: 'function_call_output', call_id: 'nobody', output: 'x' },
    { type: 'function_call', call_id: 'c', name: 'f', arguments: '{' }, { type: 'reasoning', encrypted_content: 5 }, { type: 'computer_call' },
  ),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.anything({ maxDepth: 2, maxKeys: 3, withObjectString: true }),
);

const nested = (n: number, open: string, close: string, inner = '') => open.repeat(n) + inner + close.repeat(n);
const raw = fc.oneof(
  fc.integer({ min: 118, max: 134 }).map((n) => nested(n, '[', ']')),
  fc.integer({ min: 118, max: 134 }).map((n) => nested(n, '{"a":', '}', '1')),
  fc.constantFrom(1_000, 30_000).map((n) => nested(n, '[', ']')),
  fc.constantFrom(
    '1e400', '-1e400', '-0', '-0.0', '1e308', '-1e308', '123456789012345678901234567890', '0e-400', '5e-324', '9007199254740993',
    '"\\ud800"', '"\\udfff\\ud800"', '"\\u0000"', '"a\\u0000b"', '"\\uDBFF"', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{}}}', '{"toString":1}',
  ),
);

const contentType = fc.constantFrom(
  undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16',
  'application/JSON', 'application/jsonx', 'application/json-patch+json', 'application/json;;', 'application/vnd.api+json', 'application/json; charset=latin1', '*/*',
);

const headerValue = fc.oneof(fc.constantFrom('', ' ', '1', '-1', 'abc', '1e400', 'null', 'x'.repeat(4_000)), fc.string({ maxLength: 20 }));
const headers = fc.dictionary(
  fc.constantFrom('x-session-id', 'session_id', 'x-claude-code-session-id', 'x-stainless-retry-count', 'idempotency-key', 'anthropic-version', 'anthropic-beta', 'authorization', 'x-api-key', 'openai-beta'),
  headerValue, { minKeys: 1, maxKeys: 3 },
);

const wholeBody = fc.constantFrom<string | number[]>(
  '[]', '[1,2]', '"str"', 'null', '0', 'true', '', ' ', '{', '{"model":', 'nul', '{}', '{"model":"ds"}', '{"messages":[]}', '{"input":[]}',
  '\ufeff{}', '{"a":1}{"b":2}', '{"__proto__":{"x":1}}', '{"model":"ds","messages":[{"role":"user","content":"x"}],"max_tokens":1e400}',
  [0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d], [0xef, 0xbb, 0xbf, 0x7b, 0x7d], [0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d], [0x00],
);

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ op: 'none' as const }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('set' as const), pick: fc.nat(), value: weird }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('insert' as const), pick: fc.nat(), value: weird }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('add' as const), pick: fc.nat(), key: fc.constantFrom('__proto__', 'constructor', 'session_id', 'prompt_cache_key', 'extra', 'cache_control', 'metadata', 'previous_response_id', 'n', 'stop'), value: weird }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('raw' as const), pick: fc.nat(), raw }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('huge' as const), pick: fc.nat(), kind: fc.constantFrom('string' as const, 'array' as const), size: fc.constantFrom(2_000, 20_000, 150_000, 300_000) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('body' as const), body: wholeBody }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('type' as const), contentType }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('headers' as const), headers }) },
);

/** Every path in a JSON value, in document order (the value itself first). */
function pathsOf(value: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...at, i], out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out);
  return out;
}

function containers(value: unknown, kind: 'array' | 'object'): Path[] {
  const all = pathsOf(value);
  return all.filter((p) => {
    const v = get(value, p);
    return kind === 'array' ? Array.isArray(v) : v !== null && typeof v === 'object' && !Array.isArray(v);
  });
}

function get(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], value);
}

/** Sets `path` (not the root) to `v`; the body is a fresh copy, so it is changed in place. */
function set(body: unknown, path: Path, v: unknown): void {
  const parent = get(body, path.slice(0, -1)) as Record<string | number, unknown>;
  Object.defineProperty(parent, path.at(-1)!, { value: v, enumerable: true, writable: true, configurable: true });
}

/** About `size` bytes: a string of `x`, or a list of small messages. */
function huge(kind: 'string' | 'array', size: number): unknown {
  if (kind === 'string') return 'x'.repeat(size);
  return Array.from({ length: Math.max(1, Math.floor(size / 30)) }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: 'x' }));
}

const JSON_TYPE = 'application/json';

/** The request a body makes once `m` has bent it. */
export function mutate(body: Record<string, unknown>, m: Mutation): Sent {
  const copy = structuredClone(body);
  const inner = pathsOf(copy).slice(1);
  const pick = <T>(list: T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length]);
  switch (m.op) {
    case 'none':
      break;
    case 'set': {
      const path = pick(inner, m.pick);
      if (path !== undefined) set(copy, path, m.value);
      break;
    }
    case 'delete': {
      const path = pick(inner, m.pick);
      if (path === undefined) break;
      const parent = get(copy, path.slice(0, -1));
      if (Array.isArray(parent)) parent.splice(path.at(-1) as number, 1);
      else delete (parent as Record<string, unknown>)[path.at(-1) as string];
      break;
    }
    case 'insert': {
      const list = pick(containers(copy, 'array'), m.pick);
      if (list !== undefined) (get(copy, list) as unknown[]).splice(m.pick % ((get(copy, list) as unknown[]).length + 1), 0, m.value);
      break;
    }
    case 'add': {
      const obj = pick(containers(copy, 'object'), m.pick) ?? [];
      set(copy, [...obj, m.key], m.value);
      break;
    }
    case 'raw': {
      const path = pick(inner, m.pick);
      if (path === undefined) break;
      set(copy, path, '@RAW@');
      return { body: JSON.stringify(copy).replace(RAW, m.raw), contentType: JSON_TYPE };
    }
    case 'huge': {
      const path = pick(inner, m.pick);
      if (path !== undefined) set(copy, path, huge(m.kind, m.size));
      break;
    }
    case 'body':
      return { body: typeof m.body === 'string' ? m.body : Uint8Array.from(m.body), contentType: JSON_TYPE };
    case 'type':
      // A string body would make fetch say text/plain: bytes go with no type unless one is set.
      return { body: new TextEncoder().encode(JSON.stringify(copy)), contentType: m.contentType };
    case 'headers':
      return { body: JSON.stringify(copy), contentType: JSON_TYPE, headers: m.headers };
  }
  return { body: JSON.stringify(copy), contentType: JSON_TYPE };
}
