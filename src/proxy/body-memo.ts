/**
 * Client bodies parsed in O(new). An agent resends its whole conversation on every request, so a
 * body shares its bytes up to some message with an earlier body of the same conversation. Recent
 * large bodies are kept with where their list's elements end (src/core/json-scan.ts) and what
 * they parsed to; a body that starts with one of them byte for byte takes the parsed elements of
 * the shared part as they are and parses only the bytes after it (docs/decisions.md, Bodies parsed
 * once). Decoding and parsing a 1 MB body cost ~4.6 ms; comparing it with the last one ~0.1 ms.
 *
 * The result is the value JSON.parse gives for the whole body, or JSON.parse's own error: anything
 * the shortcut cannot vouch for (`__proto__`, integer keys, text it cannot follow, a piece that
 * does not parse) is parsed whole. Kept values are shared between requests,
 * so every parsed value is frozen: code that changed a client's body in place would throw rather
 * than change an earlier request's.
 */
import { arrayLayout, scanElements, type ArrayLayout } from '../core/json-scan.js';
import { deepFreeze } from '../core/deep-freeze.js';
import { recordShared } from '../core/list-lineage.js';
import { firstDifferingByte, isPlainObject, objectRest, unsafeKey } from './body-bytes.js';

/**
 * Smaller bodies are parsed whole, not kept and not frozen: they parse in under ~0.6 ms, and with
 * a 16 KB floor the peers bench's agent load and every wire's load in the wires section spent more
 * CPU per request than with this one (docs/decisions.md, Bodies parsed once). From here up a body's
 * repeated elements are taken as parsed, and the checks and conversions the wires keep for them
 * (src/core/list-lineage.ts) make the rest of the request O(new) too.
 */
export const MIN_BYTES = 256 * 1024;
/** Kept bodies, most recent first: enough for the conversations active at once. */
const MAX_ENTRIES = 16;

/** Where a kept body's list elements end and what they parsed to, frozen: made at its first reuse. */
interface Laid {
  layout: ArrayLayout;
  /** The values of the keys before the list (`layout.before`). */
  before: readonly unknown[];
  /** The list's parsed elements, the array frozen too. */
  elements: readonly unknown[];
  /**
   * What followed the list (`"k":v,...}` parsed as one object, its values frozen), when this body's
   * was parsed on its own: a later body whose bytes after its list are the same takes it as it is.
   * Clients write their tools after the messages (Claude Code's 30-60 KB of them), unchanged from
   * one request to the next.
   */
  after?: Readonly<Record<string, unknown>>;
}

interface Kept {
  key: string;
  /** The body's bytes: a view of the arena, valid while `at` and the ones after it are not written over. */
  bytes: Buffer;
  at: number;
  /**
   * The body as parsed (its members frozen), until `laid` is made from it; a body kept after a
   * whole parse is not scanned until a later one repeats at least half of it (a client that drops
   * its oldest messages never pays for that).
   */
  value: Record<string, unknown> | undefined;
  laid: Laid | undefined;
}

export class BodyMemo {
  readonly #maxBytes: number;
  #kept: Kept[] = [];
  #bytes = 0;
  /**
   * Kept bodies are copied into one buffer, written round: a client's body then dies young, where
   * holding it until the conversation's next request got every body promoted, and the old
   * generation held tens of MiB of them between mark-compacts (bench/RESULTS.md, Peers (d), as the
   * wire memo's ring did; docs/decisions.md). It is sized for the bodies it meets, room for
   * ARENA_BODIES of the largest up to the bound: written round, all of it is resident, and 8 MB
   * for 100 KB conversations was 6 MiB of the 1,000-session figure (d) for nothing.
   */
  #arena: Buffer | undefined;
  #cursor = 0;

  /** `maxBytes` bounds the kept bodies' bytes; the buffer is allocated at the first one kept. */
  constructor(maxBytes: number) {
    this.#maxBytes = Math.max(0, Math.floor(maxBytes));
  }

  /**
   * JSON.parse of the body (throwing its error), the list under `listKey` parsed only past the
   * part it shares with a kept body.
   */
  parse(body: Buffer, listKey: string | undefined): unknown {
    if (listKey === undefined || body.length < MIN_BYTES || this.#maxBytes < MIN_BYTES) return JSON.parse(body.toString('utf8'));
    const reused = this.#reuse(body, listKey);
    if (reused !== undefined) return reused;
    const value = freezeMembers(JSON.parse(body.toString('utf8')) as unknown);
    if (isPlainObject(value)) this.#keepWhole(body, listKey, value);
    return value;
  }

  /** Bytes of the bodies kept. */
  get size(): number {
    return this.#bytes;
  }

  #keepWhole(bytes: Buffer, key: string, value: Record<string, unknown>): void {
    const list = value[key];
    if (!Array.isArray(list) || list.length === 0 || Object.keys(value).some(unsafeKey)) return;
    // The caller's object is its own (its members are frozen): what it sets or deletes there is not the body's.
    this.#keep({ key, bytes, value: { ...value }, laid: undefined });
  }

  /** The kept body's layout, made (scanned) the first time it is asked for. */
  #laid(k: Kept): Laid | undefined {
    if (k.laid !== undefined || k.value === undefined) return k.laid;
    const value = k.value;
    k.value = undefined;
    const layout = arrayLayout(k.bytes, k.key);
    const elements = value[k.key];
    if (layout === undefined || layout.ends.length === 0 || !Array.isArray(elements) || elements.length !== layout.ends.length) {
      this.#drop(k);
      return undefined;
    }
    k.laid = { layout, before: layout.before.map((name) => value[name]), elements };
    return k.laid;
  }

  /** The kept body sharing the most elements with this one, and how many. */
  #best(body: Buffer, key: string): { kept: Kept; laid: Laid; shared: number } | undefined {
    let best: { kept: Kept; laid: Laid; shared: number } | undefined;
    for (const k of [...this.#kept]) {
      if (k.key !== key) continue;
      let laid = k.laid;
      if (laid !== undefined) {
        // Another conversation under the same system prompt and tools differs from this body by its
        // first messages: a short look there spares comparing the long head they share.
        if (!sameBytesBefore(body, k, laid.layout, laid.layout.ends[Math.min(PROBE_ELEMENT, laid.layout.ends.length - 1)]!)) continue;
      } else {
        // Not laid out yet: worth it only for a body that repeats at least half of this one.
        if (firstDifferingByte(body, k.bytes, Math.min(body.length, k.bytes.length)) * 2 < body.length) continue;
        laid = this.#laid(k);
        if (laid === undefined) continue;
      }
      const n = sharedElements(body, k.bytes, laid.layout);
      if (n > (best?.shared ?? 0)) {
        best = { kept: k, laid, shared: n };
        if (n === laid.layout.ends.length) break;
      }
    }
    return best;
  }

  #reuse(body: Buffer, key: string): Record<string, unknown> | undefined {
    const found = this.#best(body, key);
    // Sharing less than half the body (a client that drops its oldest messages, another conversation
    // under the same prompt), the pieces would cost more than one parse of the whole.
    if (found === undefined || found.laid.layout.ends[found.shared - 1]! * 2 < body.length) return undefined;
    const { kept, laid, shared } = found;
    const from = laid.layout.ends[shared - 1]!;
    const tail = scanElements(body, from, false);
    if (tail === undefined) return undefined;
    const sameAfter = laid.after !== undefined && sameBytesAfter(body, tail.close, kept.bytes, laid.layout.close);
    const rest = sameAfter ? '' : objectRest(body, tail.close + 1);
    if (rest === undefined) return undefined;
    let added: unknown[];
    let after: unknown;
    try {
      added = JSON.parse(`[${listText(body, from, tail.close)}]`) as unknown[];
      after = sameAfter ? laid.after : JSON.parse(`{${rest}`) as unknown;
    } catch {
      return undefined; // parsed whole, for JSON.parse's own error
    }
    if (added.length !== tail.ends.length || !isPlainObject(after)) return undefined;
    const afterKeys = Object.keys(after);
    if (afterKeys.some(unsafeKey)) return undefined;
    if (!sameAfter) for (const k of afterKeys) deepFreeze(after[k]);
    const elements = laid.elements.slice(0, shared);
    for (const e of added) elements.push(deepFreeze(e));
    Object.freeze(elements);
    // The wires reuse what they made of the shared elements for the earlier list (src/core/list-lineage.ts).
    recordShared(elements, laid.elements, shared);
    const value: Record<string, unknown> = {};
    laid.layout.before.forEach((k, i) => (value[k] = laid.before[i]));
    value[key] = elements;
    // A key written again after the list keeps its first place and takes its last value, as in JSON.parse.
    for (const k of afterKeys) value[k] = after[k];
    const layout: ArrayLayout = { before: laid.layout.before, open: laid.layout.open, ends: [...laid.layout.ends.slice(0, shared), ...tail.ends], close: tail.close };
    // A body that repeats all of a kept one extends it: the conversation's newer body stands for
    // it from now on. One that shares less may be another conversation under the same prompt,
    // whose own next body still needs its entry.
    if (shared === laid.layout.ends.length) this.#drop(kept);
    this.#keep({ key, bytes: body, value: undefined, laid: { layout, before: laid.before, elements, after } });
    return value;
  }

  #drop(entry: Kept): void {
    const at = this.#kept.indexOf(entry);
    if (at < 0) return;
    this.#kept.splice(at, 1);
    this.#bytes -= entry.bytes.length;
  }

  /** Copies the body into the arena at its cursor; what it writes over is no longer kept. */
  #keep(entry: Omit<Kept, 'at'>): void {
    const n = entry.bytes.length;
    if (n > this.#maxBytes) return;
    const size = Math.min(this.#maxBytes, Math.max(FIRST_ARENA_BYTES, 2 ** Math.ceil(Math.log2(n * ARENA_BODIES))));
    if (this.#arena === undefined || this.#arena.length < size) {
      // What the old buffer held goes with it: a conversation's next body parses whole, once.
      this.#arena = Buffer.allocUnsafeSlow(size);
      this.#kept = [];
      this.#bytes = 0;
      this.#cursor = 0;
    }
    if (this.#cursor + n > this.#arena.length) this.#cursor = 0;
    const at = this.#cursor;
    for (const k of [...this.#kept]) if (k.at < at + n && at < k.at + k.bytes.length) this.#drop(k);
    entry.bytes.copy(this.#arena, at);
    this.#cursor = at + n;
    this.#kept.unshift({ ...entry, bytes: this.#arena.subarray(at, at + n), at });
    this.#bytes += n;
    while (this.#kept.length > MAX_ENTRIES) this.#bytes -= this.#kept.pop()!.bytes.length;
  }
}

/** The arena's first size, and how many bodies of the largest size met it keeps room for. */
const FIRST_ARENA_BYTES = 2 * 2 ** 20;
const ARENA_BODIES = 8;

/** The element whose last bytes tell conversations apart: after the system prompt and the first user message. */
const PROBE_ELEMENT = 2;
const PROBE_BYTES = 256;

/** Whether the body has the kept body's bytes just before `end` (a cheap "maybe the same conversation"). */
function sameBytesBefore(body: Buffer, kept: Kept, layout: ArrayLayout, end: number): boolean {
  if (end > body.length) return false;
  const from = Math.max(layout.open, end - PROBE_BYTES);
  return body.compare(kept.bytes, from, end, from, end) === 0;
}

/** Whether the bytes after the list's `]` (at `close` in each) are the same in both bodies. */
function sameBytesAfter(body: Buffer, close: number, kept: Buffer, keptClose: number): boolean {
  return body.length - close === kept.length - keptClose && body.compare(kept, keptClose, kept.length, close, body.length) === 0;
}

/** How many of the kept body's elements the body repeats byte for byte, with everything before them. */
function sharedElements(body: Buffer, bytes: Buffer, layout: ArrayLayout): number {
  const ends = layout.ends;
  if (ends.length === 0) return 0;
  const limit = Math.min(body.length, ends[ends.length - 1]!);
  if (limit <= layout.open) return 0;
  const differs = firstDifferingByte(body, bytes, limit);
  // Elements whose last byte comes before the first difference.
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid]! <= differs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The elements after `from` (just after an element) up to the list's `]`, without the separating comma. */
function listText(b: Buffer, from: number, close: number): string {
  const text = b.toString('utf8', from, close);
  const comma = text.indexOf(',');
  return comma < 0 ? '' : text.slice(comma + 1);
}

/**
 * The members of a body the memo may keep are frozen, the top-level object left to its request:
 * they are shared with later requests (a smaller body's are not frozen, list-lineage keeps
 * nothing for them, and the wires treat them as before).
 */
function freezeMembers<T>(v: T): T {
  if (isPlainObject(v)) for (const name of Object.keys(v)) deepFreeze(v[name]);
  return v;
}
