/**
 * How the proxy recognises a conversation the client sends again: each message reduced to what
 * every client keeps (role, text, tool calls with JSON-equal arguments, tool_call_id), with what
 * clients drop or reshape left out (reasoning fields, null vs empty content, key order).
 * Pure: no I/O, no clock.
 */
import { canonicalJson, sha256Hex } from '../core/canonical.js';
import { keptText } from '../core/kept-text.js';
import { hasNonFinite } from '../core/json-numbers.js';
import type { ContentPart, NeutralMessage, ToolSpec } from '../core/types.js';

/** The canonical text of one message as the client holds it. */
export function canonicalMessage(msg: NeutralMessage): string {
  switch (msg.role) {
    case 'system':
      return canonicalJson({ r: 's', t: msg.content });
    case 'user':
      return canonicalJson({ r: 'u', t: contentText(msg.content) });
    case 'tool':
      return canonicalJson({ r: 't', id: msg.tool_call_id, t: msg.content });
    case 'assistant':
      return canonicalJson({
        r: 'a',
        t: msg.content ?? '',
        c: (msg.tool_calls ?? []).map((call) => ({ id: call.id, n: call.name, a: canonicalArguments(call.arguments) })),
      });
  }
}

/**
 * The SHA-256 of a message's canonical text: what the view keeps and chain hashes are made of,
 * so a session holds 64 characters per message instead of a second copy of its text. Keys and
 * fingerprints are kept by the message object (core/kept-text.ts): a new message is keyed to be
 * located, then again when its event reaches the client view, which holds the same object (the
 * log's redaction hands back what the first redaction made, redact.ts); a reply is fingerprinted
 * when folded, when the next request looks for the latest and when the session's sidecar is written.
 */
export function messageKey(msg: NeutralMessage): string {
  return keptText(msg, 'message-key', () => sha256Hex(canonicalMessage(msg)));
}

/** A reply's fingerprint without its tool call ids (some clients rewrite ids). */
export function replyFingerprint(msg: NeutralMessage): string | undefined {
  if (msg.role !== 'assistant') return undefined;
  // '' for a reply with nothing to fingerprint: kept too, so it is not looked at again.
  const fp = keptText(msg, 'reply-fingerprint', () => {
    const calls = (msg.tool_calls ?? []).map((call) => ({ n: call.name, a: canonicalArguments(call.arguments) }));
    return (msg.content ?? '') === '' && calls.length === 0 ? '' : sha256Hex(canonicalJson({ t: msg.content ?? '', c: calls }));
  });
  return fp === '' ? undefined : fp;
}

function contentText(content: string | ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : `[image:${part.sha256}]`)).join('');
}

/** The key holds a call's arguments as their text: they are not JSON it can hold as a value. */
export function argumentsKeyedAsText(args: string): boolean {
  return canonicalArguments(args) === args;
}

/** Arguments as JSON when they parse to a value canonical JSON can hold (`1e400` reads as Infinity); else the text. */
function canonicalArguments(args: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(args) as unknown;
  } catch {
    return args;
  }
  return hasNonFinite(value) ? args : value;
}

/** h0: the system prompt and the tool set, sorted by name, in canonical form. */
export function chainStart(system: string | undefined, tools: readonly ToolSpec[]): string {
  const sorted = [...tools].sort((a, b) => (a.function.name < b.function.name ? -1 : a.function.name > b.function.name ? 1 : 0));
  return sha256Hex(canonicalJson({ s: system ?? null, t: sorted }));
}

export function chainNext(previous: string, key: string): string {
  return sha256Hex(previous + '\n' + key);
}

/** `[h1, ..., hn]` for a list of messages (their keys) after h0. */
export function chainHashes(h0: string, keys: readonly string[]): string[] {
  const out: string[] = [];
  let h = h0;
  for (const c of keys) {
    h = chainNext(h, c);
    out.push(h);
  }
  return out;
}

/** catalogKey([]): what a new session holds until its first catalog. */
export const NO_CATALOG_KEY = sha256Hex(canonicalJson([]));

/**
 * The tool set's key: the SHA-256 of its canonical form, equal for the same tools in any order or
 * key order. A live session keeps this, not the canonical text (10-60 KB for coding agents).
 */
export function catalogKey(tools: readonly ToolSpec[]): string {
  const sorted = [...tools].sort((a, b) => (a.function.name < b.function.name ? -1 : a.function.name > b.function.name ? 1 : 0));
  return sha256Hex(canonicalJson(sorted));
}
