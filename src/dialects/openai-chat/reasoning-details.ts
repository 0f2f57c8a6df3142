/**
 * OpenRouter's `reasoning_details`: kept whole as one opaque block, read only for display text.
 *
 * In a stream the array arrives in fragments: each delta carries items that continue an earlier
 * item with the same `index` (and type). They are merged back into the array a non-stream reply
 * would hold: text-bearing fields (`text`, `summary`, `data`) are concatenated, any other field
 * takes its latest non-null value (a Claude signature arrives last, after `signature: null`), and
 * keys keep the order they first appeared in. Items without an `index` stay separate.
 */
import { asNumber, asObject, asString, type JsonObject } from '../wire-read.js';

const CONCATENATED = new Set(['text', 'summary', 'data']);

/** The readable text of one item: `reasoning.text` -> text, `reasoning.summary` -> summary. */
function itemText(item: JsonObject): string {
  if (item.type === 'reasoning.text') return asString(item.text) ?? '';
  if (item.type === 'reasoning.summary') return asString(item.summary) ?? '';
  return '';
}

/** Display thinking from an item list: readable items joined by a blank line; none -> undefined. */
export function thinkingFromDetails(items: readonly unknown[]): string | undefined {
  const parts: string[] = [];
  for (const raw of items) {
    const item = asObject(raw);
    if (item === undefined) continue;
    const text = itemText(item);
    if (text.length > 0) parts.push(text);
  }
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

export class ReasoningDetailsAccumulator {
  readonly items: unknown[] = [];
  private shown = false;

  /**
   * Merges one delta's fragments and returns the display text they add, such that the texts
   * returned so far add up to `thinkingFromDetails(items)` (when items do not interleave).
   */
  add(fragments: readonly unknown[]): string {
    let added = '';
    for (const raw of fragments) {
      const frag = asObject(raw);
      if (frag === undefined) {
        this.items.push(raw);
        continue;
      }
      const target = this.find(frag) ?? this.open();
      const before = itemText(target);
      for (const [key, value] of Object.entries(frag)) {
        const held = target[key];
        if (CONCATENATED.has(key) && typeof value === 'string' && typeof held === 'string') {
          target[key] = held + value;
        } else if ((value !== null && value !== undefined) || !(key in target)) {
          target[key] = value;
        }
      }
      const piece = itemText(target).slice(before.length);
      if (piece.length > 0) {
        if (before.length === 0 && this.shown) added += '\n\n';
        added += piece;
        this.shown = true;
      }
    }
    return added;
  }

  private find(frag: JsonObject): JsonObject | undefined {
    const index = asNumber(frag.index);
    if (index === undefined) return undefined;
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = asObject(this.items[i]);
      if (item !== undefined && item.index === index && (frag.type === undefined || item.type === frag.type)) return item;
    }
    return undefined;
  }

  private open(): JsonObject {
    const item: JsonObject = {};
    this.items.push(item);
    return item;
  }
}
