/**
 * An upstream body whose middle is a list of messages, assembled from each item's UTF-8
 * serialisation: the items a request shares with the last body built for its conversation (the
 * same objects, going the same way) are copied from that body in one piece, the others are taken
 * from the per-message memo or serialised. A long conversation's request costs one copy of its
 * history, not a step per message (docs/decisions.md, Memory follows live sessions). The bytes are
 * those the same items give without any memo; each wire says how its items go and what joins them.
 */
import type { EncodeOptions, KeptList } from './types.js';

export interface ListItems {
  /** The route options that shape every item: what was kept under another variant is not reused. */
  readonly variant: string;
  /** The list's items (message objects); the first one names the conversation in the list memo. */
  readonly items: readonly object[];
  /**
   * How each item goes beyond the variant ('' as it is): an item's bytes depend on the item
   * object, the variant and its form only.
   */
  readonly forms: readonly string[];
  /** Item i's serialisation in its form; empty when it puts nothing on the wire. */
  serialise(i: number): Buffer;
  /**
   * What goes right before item i (a comma, the opening of a wire message), given `prev`, the last
   * item before it that was not empty (undefined: none). It may depend only on those two items.
   */
  lead(i: number, prev: number | undefined): Buffer;
  /** What closes the list after its last non-empty item (`prev`); nothing when absent. */
  close?(prev: number | undefined): Buffer;
}

/**
 * Shorter conversations are joined message by message, which costs little, and their bodies are
 * not kept: a kept body lives until it is evicted, long enough to reach V8's old generation, and a
 * thousand short sessions' bodies churning through the memo held tens of MiB of garbage
 * (docs/decisions.md, Memory follows live sessions).
 */
export const MIN_KEPT_LIST = 64;

export const EMPTY = Buffer.alloc(0);

/** `head`, the items with what joins them, what closes them, `end`, in one allocation. */
export function encodeList(head: Buffer, list: ListItems, end: Buffer, opts: EncodeOptions): Buffer {
  const { items, forms, variant } = list;
  const n = items.length;
  const first = items[0];
  const kept = first === undefined ? undefined : opts.lists?.get(first);
  const shared = kept === undefined || kept.variant !== variant ? 0 : sharedLength(kept, items, forms);
  const prefix = shared === 0 ? EMPTY : kept!.bytes.subarray(kept!.start, kept!.start + kept!.ends[shared - 1]!);

  // Each fresh item as its lead then its bytes; an empty item adds nothing, not even a lead.
  const fresh: Buffer[] = [];
  // Serialisations made here are kept once the body is assembled: what the memo handed back may be
  // a view of its store that keeping something new would overwrite (SerialisationMemo).
  const made: Made[] = [];
  let prev = shared === 0 ? undefined : lastFilled(kept!.ends, shared);
  let size = head.length + prefix.length + end.length;
  for (let i = shared; i < n; i++) {
    const bytes = itemBytes(list, i, made, opts);
    const lead = bytes.length === 0 ? EMPTY : list.lead(i, prev);
    if (bytes.length > 0) prev = i;
    fresh.push(lead, bytes);
    size += lead.length + bytes.length;
  }
  const close = list.close?.(prev) ?? EMPTY;
  size += close.length;

  const out = Buffer.allocUnsafe(size);
  out.set(head, 0);
  out.set(prefix, head.length);
  let at = head.length + prefix.length;
  const ends = shared === 0 ? [] : kept!.ends.slice(0, shared);
  for (let j = 0; j < fresh.length; j += 2) {
    out.set(fresh[j]!, at);
    at += fresh[j]!.length;
    out.set(fresh[j + 1]!, at);
    at += fresh[j + 1]!.length;
    ends.push(at - head.length);
  }
  out.set(close, at);
  out.set(end, at + close.length);
  for (const m of made) opts.memo?.set(m.item, m.key, m.bytes);
  if (first !== undefined && n >= MIN_KEPT_LIST) opts.lists?.set(first, { variant, items, forms, bytes: out, start: head.length, ends });
  return out;
}

/** How many leading items are the kept body's, the same objects in the same form. */
function sharedLength(kept: KeptList, items: readonly object[], forms: readonly string[]): number {
  const limit = Math.min(kept.items.length, items.length);
  let i = 0;
  while (i < limit && kept.items[i] === items[i] && kept.forms[i] === forms[i]) i++;
  return i;
}

/** The last of the first `count` kept items that put bytes in the body (an empty one's end is its predecessor's). */
function lastFilled(ends: readonly number[], count: number): number | undefined {
  for (let j = count - 1; j >= 0; j--) if (ends[j]! > (j === 0 ? 0 : ends[j - 1]!)) return j;
  return undefined;
}

interface Made {
  item: object;
  key: string;
  bytes: Buffer;
}

/** An item's bytes, from the caller's memo (per variant and form) or made and noted in `made`. */
function itemBytes(list: ListItems, i: number, made: Made[], opts: EncodeOptions): Buffer {
  const item = list.items[i]!;
  const form = list.forms[i]!;
  const key = form === '' ? list.variant : `${list.variant}\u0000${form}`;
  const kept = opts.memo?.get(item, key);
  if (kept !== undefined) return kept;
  const bytes = list.serialise(i);
  made.push({ item, key, bytes });
  return bytes;
}
