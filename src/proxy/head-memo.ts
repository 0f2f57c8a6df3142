/**
 * The head a client repeats on every request, parsed once. A coding agent sends the same system
 * prompt and tool catalogue, 30-60 KB of JSON, with every request of every conversation, around a
 * conversation of its own; bodies under the body memo's floor (src/proxy/body-memo.ts) were parsed
 * whole each time: ~14% of the main thread under the agent's-head load (docs/decisions/0016-a-clients-head-parsed-once.md).
 *
 * A head is what two bodies in a row had in common around their list: the bytes up to the list's
 * `[`, and its first element with them when that is an object the two share (a chat client's
 * system prompt, Codex's instructions), plus the bytes from the list's `]` to the end (Claude
 * Code's system and tools come after its list) or through the last member the two share (Codex
 * ends each body with a `client_metadata` of its own). It is kept by those bytes with what they
 * parsed to, frozen; a body that has a kept head's bytes parses only what lies between and after.
 * A few heads are kept, most recently used first: one per client build and setting busy at once,
 * not one per conversation (heads with one prefix are merged to the members they share), so the
 * memory is small and does not follow the live sessions.
 *
 * The result is JSON.parse's value for the whole body, key order included, or JSON.parse's own
 * error: the middle is parsed as `[null` + middle + `]`, which is JSON exactly when the middle
 * continues the list after a complete element (the `null` lets nothing extend a number the head
 * ended on), and anything else is parsed whole.
 */
import { deepFreeze } from '../core/deep-freeze.js';
import { OPEN_BRACE } from '../core/json-depth.js';
import { arrayLayout, listOpening, memberEnds, skipSpace, valueEnd, type ArrayLayout } from '../core/json-scan.js';
import { firstDifferingByte, isPlainObject, objectRest, sharedTailLength, unsafeKey } from './body-bytes.js';

/** A head smaller than this saves less than it costs to keep and compare; bodies smaller than it are parsed whole. */
const MIN_HEAD_BYTES = 8 * 1024;
/** Heads kept: the client builds busy at once. */
const MAX_HEADS = 8;
/** After a pair of bodies that looked alike and made no head, bodies not compared before trying again. */
const COOLDOWN = 32;
/**
 * Heads given up unused in a row before learning pauses: conversations whose prefix differs by a
 * field of their own (before the list, where heads are not merged), more of them at once than are
 * kept, would otherwise pay a scan for each body and never use what it made.
 */
const UNUSED_IN_A_ROW = 4;

interface KeptHead {
  key: string;
  /** The body's bytes up to just after the list's `[` or its first element. */
  prefix: Buffer;
  /** The list's elements inside `prefix` (none or one), parsed and frozen. */
  elements: readonly unknown[];
  /** The keys before the list with their values, frozen. */
  before: readonly (readonly [string, unknown])[];
  /** The body's bytes from the list's `]` through the last member after it that the two bodies shared. */
  suffix: Buffer;
  /**
   * Whether the suffix runs to the body's end. Where it does not, the members after it are each
   * body's own and parsed (Codex ends its body with `client_metadata`, new on every request).
   */
  whole: boolean;
  /** The members in the suffix, frozen. */
  after: readonly (readonly [string, unknown])[];
  /** Bodies that took it. */
  uses: number;
}

export class HeadMemo {
  #heads: KeptHead[] = [];
  /** The last body that matched no head, and its list's key: the next one is compared with it. */
  #last: { key: string; bytes: Buffer } | undefined;
  #cooldown = 0;
  #unused = 0;
  #learned = 0;

  /** JSON.parse of the body (throwing its error), a kept head's part of it not parsed again. */
  parse(body: Buffer, listKey: string | undefined): unknown {
    if (listKey === undefined || body.length < MIN_HEAD_BYTES) return JSON.parse(body.toString('utf8'));
    for (let i = 0; i < this.#heads.length; i++) {
      const head = this.#heads[i]!;
      if (head.key !== listKey) continue;
      const at = locate(head, body);
      if (at === undefined) continue;
      const value = assemble(head, body, at);
      if (value === undefined) break;
      head.uses++;
      if (i > 0) this.#heads = [head, ...this.#heads.filter((h) => h !== head)];
      return value;
    }
    const value = JSON.parse(body.toString('utf8')) as unknown;
    this.#learn(body, listKey, value);
    return value;
  }

  /** Heads kept (for tests and the bench). */
  get size(): number {
    return this.#heads.length;
  }

  /** Heads made since the start, kept or not: each cost a scan of its body. */
  get learned(): number {
    return this.#learned;
  }

  /** Keeps the head this body shares with the last one that matched none, when it is worth keeping. */
  #learn(body: Buffer, key: string, value: unknown): void {
    const last = this.#last;
    this.#last = { key, bytes: body };
    if (last === undefined || last.key !== key || !isPlainObject(value)) return;
    if (this.#cooldown > 0) {
      this.#cooldown--;
      return;
    }
    // The cheapest look first, memcmp over at most twice the bound: 8 KB in common at either end.
    const start = firstDifferingByte(body, last.bytes, Math.min(body.length, last.bytes.length, MIN_HEAD_BYTES));
    const need = MIN_HEAD_BYTES - start;
    if (need > 0 && (need > last.bytes.length || body.compare(last.bytes, last.bytes.length - need, last.bytes.length, body.length - need, body.length) !== 0)) return;
    // Then where the prefix can end: no later than the list's first element.
    const opening = listOpening(body, key);
    if (opening === undefined) return;
    const firstAt = skipSpace(body, opening.open);
    const firstEnd = body[firstAt] === OPEN_BRACE ? valueEnd(body, firstAt) : -1;
    const shared = firstDifferingByte(body, last.bytes, Math.min(Math.max(firstEnd, opening.open), last.bytes.length));
    if (shared < opening.open) return;
    const prefixEnd = firstEnd > 0 && shared >= firstEnd ? firstEnd : opening.open;
    const tail = sharedTailLength(body, last.bytes, body.length - prefixEnd);
    if (prefixEnd + tail < MIN_HEAD_BYTES) return;
    this.#learned++;
    const head = this.#headOf(body, last.bytes, key, value, prefixEnd, tail);
    if (head === undefined) {
      this.#cooldown = COOLDOWN;
      return;
    }
    this.#keep(head);
    this.#last = undefined;
  }

  /**
   * The head of a body parsed whole that its first `prefixEnd` bytes and `tail` last bytes share
   * with `last`; where the two part after their lists, its suffix stops at the last member they
   * share. Where a head with this prefix is kept for another conversation already (Codex's
   * `prompt_cache_key` after its tools), one with the members the two share, which serves both.
   */
  #headOf(body: Buffer, last: Buffer, key: string, value: Record<string, unknown>, prefixEnd: number, tail: number): KeptHead | undefined {
    const layout = arrayLayout(body, key);
    if (layout === undefined) return undefined;
    let head: KeptHead | undefined;
    if (body.length - layout.close <= tail) head = headOf(body, layout, key, value, prefixEnd, undefined);
    else {
      const lastClose = arrayLayout(last, key)?.close;
      if (lastClose !== undefined) head = headOf(body, layout, key, value, prefixEnd, last.subarray(lastClose));
    }
    if (head === undefined) return undefined;
    const kin = this.#heads.find((h) => h.key === key && h.prefix.equals(head.prefix) && !h.suffix.equals(head.suffix));
    const shared = kin === undefined ? undefined : headOf(body, layout, key, value, prefixEnd, kin.suffix);
    if (shared === undefined) return head;
    this.#heads = this.#heads.filter((h) => h !== kin);
    return shared;
  }

  /** Keeps the head first, in place of one with the same bytes; what falls off the end counts if unused. */
  #keep(head: KeptHead): void {
    const heads = [head, ...this.#heads.filter((h) => h.key !== head.key || !h.prefix.equals(head.prefix) || !h.suffix.equals(head.suffix))];
    for (const dropped of heads.splice(MAX_HEADS)) this.#unused = dropped.uses === 0 ? this.#unused + 1 : 0;
    if (this.#unused >= UNUSED_IN_A_ROW) {
      this.#unused = 0;
      this.#cooldown = COOLDOWN * MAX_HEADS;
    }
    this.#heads = heads;
  }
}

/**
 * The head of a body parsed whole: its first `prefixEnd` bytes, and from its list's `]` either to
 * its end or, given `other` (another body's bytes from its `]` on), through the last member the
 * two have the same; undefined when that is not one worth keeping.
 */
function headOf(body: Buffer, layout: ArrayLayout, key: string, value: Record<string, unknown>, prefixEnd: number, other: Buffer | undefined): KeptHead | undefined {
  let end = body.length;
  if (other !== undefined) {
    const same = firstDifferingByte(body.subarray(layout.close), other, Math.min(body.length - layout.close, other.length));
    end = memberEnds(body, layout.close + 1, layout.close + same).at(-1) ?? layout.close + 1;
  }
  if (prefixEnd + end - layout.close < MIN_HEAD_BYTES) return undefined;
  const text = body.toString('utf8', layout.close + 1, end);
  // The members alone: to the end, the text closes the object too.
  const members = end === body.length ? text.slice(0, text.lastIndexOf('}')) : text;
  const comma = members.indexOf(',');
  // Only its keys: the values are the body's own (the last one written, as the head's will be).
  const afterKeys = comma < 0 ? [] : Object.keys(JSON.parse(`{${members.slice(comma + 1)}}`) as Record<string, unknown>);
  // A key an object literal would not copy as own data (the layout has refused a list written twice).
  if (layout.before.some(unsafeKey) || afterKeys.some(unsafeKey)) return undefined;
  const list = value[key] as unknown[];
  const elements = prefixEnd > layout.open ? [deepFreeze(list[0])] : [];
  return {
    key,
    prefix: Buffer.from(body.subarray(0, prefixEnd)),
    elements,
    before: layout.before.map((k) => [k, deepFreeze(value[k])] as const),
    suffix: Buffer.from(body.subarray(layout.close, end)),
    whole: end === body.length,
    after: afterKeys.map((k) => [k, deepFreeze(value[k])] as const),
    uses: 0,
  };
}

/** Bytes of a suffix looked for in a body whose suffix is not at its end: then compared whole. */
const PROBE_BYTES = 64;

/** Where the body's middle ends and what follows the head's suffix begins, when the body has the head's bytes. */
function locate(head: KeptHead, body: Buffer): { middleEnd: number; restStart: number } | undefined {
  const p = head.prefix.length;
  const s = head.suffix.length;
  if (body.length < p + s || body.compare(head.prefix, 0, p, 0, p) !== 0) return undefined;
  if (head.whole) {
    return body.compare(head.suffix, 0, s, body.length - s, body.length) === 0 ? { middleEnd: body.length - s, restStart: body.length } : undefined;
  }
  // The last place the suffix's first bytes appear: the list's `]` if anywhere; a wrong one fails the parse.
  const at = body.lastIndexOf(head.suffix.subarray(0, Math.min(PROBE_BYTES, s)));
  if (at < p || at + s > body.length || body.compare(head.suffix, 0, s, at, at + s) !== 0) return undefined;
  return { middleEnd: at, restStart: at + s };
}

/**
 * The body's value: the head's parts as kept, the middle (and any members after the suffix) parsed;
 * undefined when the middle is not a list's continuation or what follows is not an object's end.
 */
function assemble(head: KeptHead, body: Buffer, at: { middleEnd: number; restStart: number }): Record<string, unknown> | undefined {
  const middle = body.toString('utf8', head.prefix.length, at.middleEnd);
  let added: unknown[];
  let rest: Record<string, unknown> | undefined;
  try {
    added = JSON.parse(head.elements.length === 0 ? `[${middle}]` : `[null${middle}]`) as unknown[];
    if (!head.whole) {
      const text = objectRest(body, at.restStart);
      if (text === undefined) return undefined;
      rest = JSON.parse(`{${text}`) as Record<string, unknown>;
    }
  } catch {
    return undefined; // parsed whole, for JSON.parse's own error
  }
  const restKeys = rest === undefined ? [] : Object.keys(rest);
  if (restKeys.some(unsafeKey)) return undefined;
  const list = head.elements.length === 0 ? added : [...head.elements, ...added.slice(1)];
  const value: Record<string, unknown> = {};
  for (const [k, v] of head.before) value[k] = v;
  value[head.key] = list;
  // A key written again after the list keeps its first place and takes its last value, as in JSON.parse.
  for (const [k, v] of head.after) value[k] = v;
  for (const k of restKeys) value[k] = rest![k];
  return value;
}
