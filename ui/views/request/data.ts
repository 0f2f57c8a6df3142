/** One request as the log rebuilds it, and the first difference from its predecessor in words and spans. */
import { getJson } from '../../api.js';
import type { FirstDifference, RequestDetail } from '../../contract.js';

export function loadRequest(id: string, seq: number, signal: AbortSignal): Promise<RequestDetail> {
  return getJson<RequestDetail>(`sessions/${encodeURIComponent(id)}/requests/${seq}`, {}, signal);
}

/** The message the difference is in (`messages[3].content` -> 3); undefined for model, tools, params. */
export function diffIndex(diff: FirstDifference | null): number | undefined {
  if (diff === null) return undefined;
  if (typeof diff.index === 'number') return diff.index >= 0 ? diff.index : undefined;
  const m = /^messages\[(\d+)\]/.exec(diff.path);
  return m === null ? undefined : Number(m[1]);
}

export function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** How much context to keep either side of the changed span, in characters. */
const AROUND = 240;

export interface Spans {
  /** Shared text before the change (cut to AROUND, with `cut` true when cut). */
  head: string;
  headCut: boolean;
  before: string;
  after: string;
  /** Shared text after the change. */
  tail: string;
  tailCut: boolean;
}

/** Split two texts into the common head, what each has in place of the other, and the common tail. */
export function spans(beforeValue: unknown, afterValue: unknown): Spans {
  const a = asText(beforeValue);
  const b = asText(afterValue);
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  const head = a.slice(0, p);
  const tail = a.slice(a.length - s);
  return {
    head: head.length > AROUND ? head.slice(-AROUND) : head,
    headCut: head.length > AROUND,
    before: a.slice(p, a.length - s),
    after: b.slice(p, b.length - s),
    tail: tail.length > AROUND ? tail.slice(0, AROUND) : tail,
    tailCut: tail.length > AROUND,
  };
}
