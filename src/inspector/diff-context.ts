/**
 * The first difference `firstDifference` names, shown in context: the differing field's value in
 * both requests as text, where the two texts first part, and a few lines around that point.
 */
import type { Difference } from '../window/index.js';
import type { NeutralRequest } from '../core/types.js';

export interface DiffView {
  /** `model`, `tools`, `params`, `messages` or `messages[i].<key>` (firstDifference's `field`). */
  path: string;
  cause: string;
  /**
   * The field's value in the predecessor and in this request, as text; null where it is absent or
   * null (an assistant message's content when it held only tool calls), which the page words.
   */
  before: string | null;
  after: string | null;
  context: {
    /** Character offset in `before`/`after` where they first differ. */
    at: number;
    /** 1-based line of that offset (in `before`; in `after` when `before` is null). */
    line: number;
    before: string[];
    after: string[];
  };
  /** Added: the message index (-1 for model, tools and params). */
  index: number;
  truncated: boolean;
}

/** Lines shown either side of the first differing line. */
const AROUND = 3;
/** The most of a value sent (a tool result can be megabytes). */
const MAX_CHARS = 200_000;

export function diffInContext(prev: NeutralRequest, next: NeutralRequest, d: Difference): DiffView {
  const before = textOf(valueAt(prev, d));
  const after = textOf(valueAt(next, d));
  const a = before ?? '';
  const b = after ?? '';
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  const line = (before ?? after ?? '').slice(0, at).split('\n').length;
  const truncated = a.length > MAX_CHARS || b.length > MAX_CHARS;
  return {
    path: d.field,
    cause: d.cause,
    before: before === null ? null : before.slice(0, MAX_CHARS),
    after: after === null ? null : after.slice(0, MAX_CHARS),
    context: { at, line, before: around(a, line), after: around(b, line) },
    index: d.index,
    truncated,
  };
}

function valueAt(r: NeutralRequest, d: Difference): unknown {
  if (d.field === 'model') return r.model;
  if (d.field === 'tools') return r.tools;
  if (d.field === 'params') return r.params;
  const message = r.messages[d.index];
  if (d.field === 'messages') return message;
  const key = /^messages\[\d+\]\.(.+)$/.exec(d.field)?.[1];
  return key === undefined || message === undefined ? undefined : (message as unknown as Record<string, unknown>)[key];
}

function textOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function around(text: string, line: number): string[] {
  const lines = text.split('\n');
  return lines.slice(Math.max(0, line - 1 - AROUND), line + AROUND);
}
