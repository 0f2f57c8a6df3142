/**
 * The first difference between two requests of a session, and its cause: what `proxy diff`
 * prints and what cache-break attribution counts (docs/architecture.md 4.5, section 8).
 *
 * Compared in the order a provider reads a prompt: the model (a cache is per model), the tools,
 * the messages, then the parameters. `between` are the log events after the earlier request's
 * `llm.req` and before the later one's; they make a cause certain where the messages alone
 * cannot (a rewrite or summary looks like any other edit). Causes:
 * - none: the later request's messages start with all of the earlier one's;
 * - model_switch: another model, or the same messages with other opaque blocks (another origin);
 * - tools: another catalog;
 * - system: the leading system prompt changed (or a head system message arrived in between);
 * - summary / client_rewrite: such an event came in between;
 * - trim: a message became `[elided seq=N]` (or its results left with it), or a run's
 *   `[elided seq=A-B]` grew to name a later reply (window-v2), or a result became its fold's
 *   `[folded seq=N: ...]` (window-v3), or a stand-in became `[elided seq=N]` (window-v4);
 * - params: the messages extend, parameters a provider's cache depends on differ (all but the
 *   sampling ones, SAMPLING, unless the wire keys its cache on one: `opts.keyed`); a change of
 *   those alone is no break: `none`, with `params` as the field where the messages are the same.
 * An earlier message that changed for none of these reasons is attributed to client_rewrite.
 * Returns undefined when the two requests are equal.
 */
import { placeholderSpan } from '../core/placeholder.js';
import { canonicalJson } from '../core/canonical.js';
import type { BreakCause, LogEvent } from '../core/events.js';
import type { NeutralMessage, NeutralRequest, RequestParams } from '../core/types.js';

export interface Difference {
  /** Message index, or -1 for model, tools and params. */
  index: number;
  /** `model`, `tools`, `params`, `messages` (one list is shorter) or `messages[i].<key>`. */
  field: string;
  cause: BreakCause;
}

export interface DifferenceOptions {
  /**
   * Parameters the upstream's cache is keyed on although they only shape sampling elsewhere: the
   * dialect's `cacheKeyedParams` (Anthropic's `max_tokens`, which caps the thinking budget). Known
   * where the request is sent; a reader of the log takes the cause `llm.req` recorded.
   */
  keyed?: readonly (keyof RequestParams)[] | undefined;
}

export function firstDifference(prev: NeutralRequest, next: NeutralRequest, between: readonly LogEvent[] = [], opts: DifferenceOptions = {}): Difference | undefined {
  if (prev.model !== next.model) return { index: -1, field: 'model', cause: 'model_switch' };
  // A session's window hands out its frozen catalog itself while it holds: the same array, no
  // need to serialise 10-60 KB of an agent's tools twice per request.
  if (prev.tools !== next.tools && canonicalJson(prev.tools) !== canonicalJson(next.tools)) return { index: -1, field: 'tools', cause: 'tools' };

  const n = Math.min(prev.messages.length, next.messages.length);
  for (let i = 0; i < n; i++) {
    const a = prev.messages[i]!;
    const b = next.messages[i]!;
    if (a === b) continue;
    const key = differingKey(a, b);
    if (key === undefined) continue;
    return { index: i, field: `messages[${i}].${key}`, cause: messageCause(a, b, i, key, between) };
  }
  if (next.messages.length < prev.messages.length) {
    const dropped = prev.messages[n]!;
    const cause = eventCause(between) ?? (dropped.role === 'tool' ? 'trim' : 'client_rewrite');
    return { index: n, field: 'messages', cause };
  }
  if (canonicalJson(prev.params) !== canonicalJson(next.params)) {
    if (canonicalJson(cacheParams(prev.params, opts.keyed)) !== canonicalJson(cacheParams(next.params, opts.keyed))) return { index: -1, field: 'params', cause: 'params' };
    if (next.messages.length === prev.messages.length) return { index: -1, field: 'params', cause: 'none' };
  }
  if (next.messages.length > prev.messages.length) return { index: prev.messages.length, field: 'messages', cause: 'none' };
  return undefined;
}

/**
 * The first difference as the proxy found it when it sent `next`: which parameters its upstream's
 * cache is keyed on is known only there, so a reader of the log (`proxy diff`, the inspector) takes
 * a `params` cause the `llm.req` recorded as the proxy's word.
 */
export function differenceAsLogged(prev: NeutralRequest, next: NeutralRequest, between: readonly LogEvent[], logged: BreakCause | undefined): Difference | undefined {
  return firstDifference(prev, next, between, logged === 'params' ? { keyed: SAMPLING } : {});
}

/**
 * Parameters that shape only how the reply is sampled, never the prompt a provider caches: a
 * prefix cache is keyed by the prompt's tokens, and these are not rendered into it (OpenAI's
 * prompt caching guide; Anthropic's "what invalidates the cache" lists tool_choice and thinking
 * settings, not these). A client that sets `max_tokens` to what its context has left (Cline with
 * a known context window) changes it every request without breaking anything. The others stay a
 * cause: `tool_choice` (Anthropic invalidates message blocks on it), `reasoning_effort` (rendered
 * into the system message of some models), `response_format`, fields the proxy does not read.
 */
const SAMPLING = ['max_tokens', 'temperature', 'top_p', 'stop', 'seed', 'presence_penalty', 'frequency_penalty'] as const satisfies readonly (keyof RequestParams)[];

function cacheParams(params: RequestParams, keyed: readonly (keyof RequestParams)[] = []): RequestParams {
  const rest = { ...params };
  for (const key of SAMPLING) if (!keyed.includes(key)) delete rest[key];
  return rest;
}

function messageCause(a: NeutralMessage, b: NeutralMessage, i: number, key: string, between: readonly LogEvent[]): BreakCause {
  if (i === 0 && (a.role === 'system' || b.role === 'system')) return 'system';
  // A placeholder appears only by elision, whatever else happened in between.
  const before = placeholderSpan(a);
  const after = placeholderSpan(b);
  if (after !== undefined && before === undefined) return 'trim';
  // window-v4: a fold's stand-in elided with its successor.
  if (after !== undefined && before !== undefined && isFoldElided(a, b)) return 'trim';
  const fromEvents = eventCause(between);
  if (fromEvents !== undefined) return fromEvents;
  // A run grows by a trim; after a rewrite it may also grow by resent entries that were elided.
  if (after !== undefined && before !== undefined && after.first <= before.first && after.last > before.last) return 'trim';
  // A batch elided in this request loses its calls: the next message is one of its results.
  if (a.role === 'tool' && b.role !== 'tool') return 'trim';
  if (key === 'blocks') return 'model_switch';
  if (between.some((e) => e.type === 'client.msg' && e.head === true)) return 'system';
  return 'client_rewrite';
}

function isFoldElided(a: NeutralMessage, b: NeutralMessage): boolean {
  return a.role === 'tool' && b.role === 'tool' && a.content.startsWith('[folded seq=') && b.content.startsWith('[elided seq=');
}

function eventCause(between: readonly LogEvent[]): BreakCause | undefined {
  if (between.some((e) => e.type === 'summary.add' || e.type === 'summary.revoke')) return 'summary';
  if (between.some((e) => e.type === 'client.rewrite')) return 'client_rewrite';
  return undefined;
}

/** Keys in the order a reader looks at a message; any other key after these, sorted. */
const KEY_ORDER = ['role', 'content', 'tool_call_id', 'tool_calls', 'thinking', 'blocks'];

/** The first key whose canonical value differs; undefined if the messages are equal. */
function differingKey(a: NeutralMessage, b: NeutralMessage): string | undefined {
  if (a.role !== b.role) return 'role';
  const ra = a as unknown as Record<string, unknown>;
  const rb = b as unknown as Record<string, unknown>;
  const others = [...new Set([...Object.keys(ra), ...Object.keys(rb)])].filter((k) => !KEY_ORDER.includes(k)).sort();
  const keys = [...KEY_ORDER, ...others];
  for (const key of keys) {
    if (canonicalJson(ra[key] ?? null) !== canonicalJson(rb[key] ?? null)) return key;
  }
  return undefined;
}
