/**
 * What the fuzzer (fuzz.test.ts) holds every answer to: no 5xx; a 4xx in the caller's own dialect
 * (Anthropic's `{"type":"error","error":{type,message}}` on /v1/messages, OpenAI's envelope
 * elsewhere) with a code from docs/errors.md's table; after a stream has started, an error frame
 * whose code is in the table and, if a 5xx one, an upstream's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Wire } from './fuzz-bodies.js';
import { sseData } from './wires-world.js';

/** code -> HTTP status, read from the table in docs/errors.md. */
export function documentedCodes(): Map<string, number> {
  const doc = readFileSync(join(process.cwd(), 'docs', 'errors.md'), 'utf8');
  const codes = new Map<string, number>();
  for (const m of doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)) codes.set(m[1]!, Number(m[2]));
  return codes;
}

/** Anthropic's `ErrorType` (anthropic-sdk-typescript `shared.ts`). */
const ANTHROPIC_TYPES = new Set([
  'invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error', 'request_too_large',
  'rate_limit_error', 'timeout_error', 'api_error', 'overloaded_error',
]);

export interface Answer {
  wire: Wire;
  status: number;
  contentType: string;
  text: string;
  /** The request's body reached the upstream: a 4xx may be the upstream's own, passed through. */
  upstream: boolean;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What is wrong with one answer; empty when nothing is. */
export function problemsOf(a: Answer, codes: ReadonlyMap<string, number>): string[] {
  if (a.status >= 500) return [`status ${a.status}`];
  if (a.status >= 400) return errorProblems(a, codes);
  if (a.status !== 200) return [`unexpected status ${a.status}`];
  if (a.contentType.startsWith('text/event-stream')) return streamProblems(a, codes);
  return replyProblems(a);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function errorProblems(a: Answer, codes: ReadonlyMap<string, number>): string[] {
  const body = parse(a.text);
  if (!isObject(body) || !isObject(body.error)) return [`a ${a.status} whose body is no error object`];
  const error = body.error;
  if (typeof error.message !== 'string' || error.message === '') return [`a ${a.status} with no message`];
  if (a.wire === 'messages') {
    if (body.type !== 'error') return [`a ${a.status} on /v1/messages not in Anthropic's shape`];
    if (typeof error.type !== 'string' || !ANTHROPIC_TYPES.has(error.type)) return [`a ${a.status} with Anthropic error type ${String(error.type)}`];
    return [];
  }
  if (Object.keys(body).join() !== 'error' || body.type !== undefined) return [`a ${a.status} on ${a.wire} not in OpenAI's shape`];
  if (!('code' in error) || !('param' in error) || typeof error.type !== 'string') return [`a ${a.status} without code, param or type`];
  // The upstream's own 4xx on the same wire is passed on as it was (docs/errors.md).
  if (a.upstream) return [];
  const code = String(error.code);
  const documented = codes.get(code);
  if (documented === undefined) return [`undocumented code ${code}`];
  if (documented !== a.status && code !== 'upstream_error') return [`code ${code} answered ${a.status}, documented ${documented}`];
  return [];
}

/** A stream error frame's code: only the codes of a failing upstream may be 5xx. */
function frameProblems(code: unknown, codes: ReadonlyMap<string, number>): string[] {
  const status = codes.get(String(code));
  if (status === undefined) return [`stream error frame with undocumented code ${String(code)}`];
  if (status >= 500 && !String(code).startsWith('upstream_')) return [`stream error frame ${String(code)}`];
  return [];
}

function streamProblems(a: Answer, codes: ReadonlyMap<string, number>): string[] {
  const out: string[] = [];
  for (const frame of sseData(a.text)) {
    if (a.wire === 'chat' && isObject(frame.error)) out.push(...frameProblems(frame.error.code, codes));
    if (a.wire === 'responses' && frame.type === 'error') out.push(...frameProblems(frame.code, codes));
    if (a.wire === 'responses' && frame.type === 'response.failed') {
      const response = frame.response as { error?: { code?: unknown } } | undefined;
      out.push(...frameProblems(response?.error?.code, codes));
    }
    // Anthropic's error events carry no code: the proxy's own failure reads "Internal error: ...".
    if (a.wire === 'messages' && frame.type === 'error' && isObject(frame.error)) {
      if (String(frame.error.message).startsWith('Internal error')) out.push(`stream error frame: ${String(frame.error.message).slice(0, 200)}`);
    }
  }
  return out;
}

function replyProblems(a: Answer): string[] {
  const body = parse(a.text);
  if (!isObject(body)) return ['a 200 that is not a JSON object'];
  if (a.wire === 'chat' && !Array.isArray(body.choices)) return ['a chat 200 with no choices'];
  if (a.wire === 'messages' && body.type !== 'message') return ['a messages 200 that is no message'];
  if (a.wire === 'responses' && body.object !== 'response') return ['a responses 200 that is no response'];
  return [];
}

/** The assistant's text in a non-streamed 200, as the client would send it back. */
export function replyText(wire: Wire, text: string): string {
  const body = JSON.parse(text) as Json;
  if (wire === 'chat') return ((body.choices as { message: { content: string | null } }[])[0]!.message.content) ?? '';
  if (wire === 'messages') return (body.content as { type: string; text?: string }[]).filter((b) => b.type === 'text').map((b) => b.text).join('');
  const items = body.output as { type: string; content?: { type: string; text?: string }[] }[];
  return items.filter((i) => i.type === 'message').flatMap((i) => i.content ?? []).filter((c) => c.type === 'output_text').map((c) => c.text).join('');
}
