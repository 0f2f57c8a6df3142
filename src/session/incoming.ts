/**
 * The messages of an incoming request, compared in the log's own terms: the log holds every
 * message redacted (docs/how-it-works.md, The log), so an incoming message is compared as the log
 * would hold it, and a client that resends a credential the log removed is still sending the same
 * message. A request that extends its session is recognised by comparing its messages with the
 * session's view as they are (strings equal: the same message under any canonical rule); the
 * redacted form, canonical text, fingerprints and chain hashes are computed only where that cannot
 * decide. Pure.
 */
import type { ContentPart, NeutralMessage } from '../core/types.js';
import { redactDeep } from '../log/redact.js';
import { clearedAs } from './clearing.js';
import { argumentsKeyedAsText, messageKey, replyFingerprint } from './fingerprint.js';

/**
 * Keys of first messages by their content. Every request is keyed by its first message (the
 * locator finds the sessions that opened with it), and a coding agent's first message carries its
 * context files, 10 KB and more, which would otherwise be redacted, canonicalised and hashed again
 * on every request. A system or user message's key depends on its role and content only
 * (messageKey). Texts are the map keys as they are, no copy: the session's view holds the same
 * string. Content parts (the Responses and Anthropic wires send text as parts) go by their JSON,
 * part boundaries included, since redaction runs part by part.
 */
const KEPT: Record<'system' | 'user' | 'parts', Map<string, string>> = { system: new Map(), user: new Map(), parts: new Map() };
/** Characters of content kept, all maps together; past the bound they start again. */
const MAX_KEPT_CHARS = 2 * 2 ** 20;
let keptChars = 0;

function keptKeys(msg: NeutralMessage): { map: Map<string, string>; text: string } | undefined {
  if (msg.role === 'system') return { map: KEPT.system, text: msg.content };
  if (msg.role !== 'user') return undefined;
  return typeof msg.content === 'string' ? { map: KEPT.user, text: msg.content } : { map: KEPT.parts, text: JSON.stringify(msg.content) };
}

function keep(map: Map<string, string>, text: string, key: string): void {
  if (text.length > MAX_KEPT_CHARS) return;
  if (keptChars + text.length > MAX_KEPT_CHARS) {
    for (const m of Object.values(KEPT)) m.clear();
    keptChars = 0;
  }
  map.set(text, key);
  keptChars += text.length;
}

export class IncomingMessage {
  readonly msg: NeutralMessage;
  #logged: NeutralMessage | undefined;
  #key: string | undefined;
  #fp: string | null | undefined;

  constructor(msg: NeutralMessage) {
    this.msg = msg;
  }

  /** The message as the log would hold it (the same object when nothing needed redacting). */
  get logged(): NeutralMessage {
    this.#logged ??= redactDeep(this.msg).value;
    return this.#logged;
  }

  /** messageKey of the message as logged. */
  get key(): string {
    this.#key ??= messageKey(this.logged);
    return this.#key;
  }

  /**
   * The key of a request's first message, which the locator asks of every request: kept by the
   * message's text for the next request of its conversation.
   */
  get openerKey(): string {
    if (this.#key === undefined) {
      const kept = keptKeys(this.msg);
      this.#key = kept?.map.get(kept.text);
      if (this.#key === undefined) {
        this.#key = messageKey(this.logged);
        if (kept !== undefined) keep(kept.map, kept.text, this.#key);
      }
    }
    return this.#key;
  }

  get fp(): string | undefined {
    if (this.#fp === undefined) this.#fp = replyFingerprint(this.logged) ?? null;
    return this.#fp ?? undefined;
  }
}

/** What a view entry offers for comparison: the message as logged, and the client's own copy once seen. */
export interface Comparable {
  msg: NeutralMessage;
  key: string;
  /** The client's unredacted copy, remembered after it matched once, so the next compare is a string compare. */
  sent?: NeutralMessage;
}

/** A view entry and an incoming message are the same message to the client. */
export function sameMessage(entry: Comparable, incoming: { msg?: NeutralMessage; key: string }): boolean {
  // The same object: a resent message the inbound wire converted once (src/core/list-lineage.ts).
  if (incoming.msg !== undefined && (entry.sent === incoming.msg || entry.msg === incoming.msg)) return true;
  if (incoming.msg !== undefined && (identical(entry.msg, incoming.msg) || (entry.sent !== undefined && identical(entry.sent, incoming.msg)))) return true;
  if (entry.key !== incoming.key && (incoming.msg === undefined || !repairedArguments(entry, incoming.msg))) return false;
  // The client's copy differs from the log's only by what the log removes (or by its
  // serialisation, or by arguments it repaired): remember it, so its next resend costs a string
  // compare, not a redaction.
  if (incoming.msg !== undefined) entry.sent = incoming.msg;
  return true;
}

/**
 * A reply whose tool call arguments the model wrote as text that is not JSON (`{path:"a"}`), sent
 * back with the same calls, ids and names, and the same text: a client that keeps a call's
 * arguments as a value (Cline, and others on the Vercel AI SDK) repaired them and serialised its
 * repair. Still the reply the log holds, and the log's arguments stay what goes upstream: what the
 * model wrote, which its cache holds (docs/how-it-works.md, Sessions). Only the calls whose logged
 * arguments the key holds as text are taken on their id and name; everything else must match as
 * any message.
 */
function repairedArguments(entry: Comparable, sent: NeutralMessage): boolean {
  const logged = entry.msg;
  if (logged.role !== 'assistant' || sent.role !== 'assistant') return false;
  const ours = logged.tool_calls ?? [];
  const theirs = sent.tool_calls ?? [];
  const asText = ours.map((c) => argumentsKeyedAsText(c.arguments));
  if (ours.length !== theirs.length || !asText.includes(true)) return false;
  for (let i = 0; i < ours.length; i++) if (ours[i]!.id !== theirs[i]!.id || ours[i]!.name !== theirs[i]!.name) return false;
  // The client's copy with the log's arguments in place of the repaired ones: the same message?
  const calls = theirs.map((c, i) => (asText[i] ? { ...c, arguments: ours[i]!.arguments } : c));
  return messageKey(redactDeep({ ...sent, tool_calls: calls }, false).value) === entry.key;
}

/** Equal as they stand (true means canonically equal too; false means "compare canonically"). */
function identical(a: NeutralMessage, b: NeutralMessage): boolean {
  switch (a.role) {
    case 'system':
      return b.role === 'system' && a.content === b.content;
    case 'user':
      return b.role === 'user' && sameContent(a.content, b.content);
    case 'tool':
      return b.role === 'tool' && a.tool_call_id === b.tool_call_id && a.content === b.content;
    case 'assistant': {
      if (b.role !== 'assistant' || (a.content ?? '') !== (b.content ?? '')) return false;
      const x = a.tool_calls ?? [];
      const y = b.tool_calls ?? [];
      return x.length === y.length && x.every((c, i) => c.id === y[i]!.id && c.name === y[i]!.name && c.arguments === y[i]!.arguments);
    }
  }
}

/**
 * Text or parts equal as they stand. The Responses and Anthropic wires send a user's text as parts:
 * compared part by part here, a resent history is told apart without keying every message.
 */
function sameContent(a: string | readonly ContentPart[], b: string | readonly ContentPart[]): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.type === 'text') {
      if (y.type !== 'text' || x.text !== y.text) return false;
    } else if (y.type !== 'image' || x.sha256 !== y.sha256 || x.mime !== y.mime || x.tokens !== y.tokens || x.detail !== y.detail) {
      return false;
    }
  }
  return true;
}

/**
 * How far a request's messages were already found to be a view's. A request is compared with its
 * session by the locator and again by the plan once its turn comes; the second pass starts where
 * the first stopped while the entries it compared are still the view's. A view loses entries only
 * by truncation and gains them as new objects (a clearing, which changes entries in place, makes
 * it a new array), so the last entry compared, still in its place, vouches for every one before it.
 */
const verified = new WeakMap<readonly object[], Verified>();

interface Verified {
  view: readonly Comparable[];
  upTo: number;
  last: Comparable;
  cleared: readonly ClearedAt[];
}

/** A view entry the request sent cleared by the client (clearing.ts): its index and the marker. */
export interface ClearedAt {
  index: number;
  text: string;
}

/** How many leading messages of the request are the view's. */
export function matchLength(view: readonly Comparable[], incoming: readonly { msg?: NeutralMessage; key: string }[]): number {
  return matchView(view, incoming).length;
}

/**
 * How many leading messages of the request are the view's, a tool result the client cleared
 * counting as its entry; and which entries among them it sent cleared.
 */
export function matchView(view: readonly Comparable[], incoming: readonly { msg?: NeutralMessage; key: string }[]): { length: number; cleared: readonly ClearedAt[] } {
  const common = Math.min(view.length, incoming.length);
  const known = knownPrefix(view, incoming);
  let k = known?.upTo ?? 0;
  const cleared = [...(known?.cleared ?? [])];
  for (; k < common; k++) {
    if (sameMessage(view[k]!, incoming[k]!)) continue;
    const text = clearedAs(view[k]!.msg, incoming[k]!.msg);
    if (text === undefined) break;
    cleared.push({ index: k, text });
  }
  if (k > 0) verified.set(incoming, { view, upTo: k, last: view[k - 1]!, cleared });
  return { length: k, cleared };
}

function knownPrefix(view: readonly Comparable[], incoming: readonly object[]): Verified | undefined {
  const known = verified.get(incoming);
  if (known === undefined || known.view !== view || view[known.upTo - 1] !== known.last) return undefined;
  return known;
}
