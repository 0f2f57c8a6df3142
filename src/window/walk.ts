/**
 * The walk: live entries -> the request's conversation messages, in append order.
 *
 * It applies, in one pass, the summaries (a summarised span becomes one message), tool-call
 * pairing, sticky elision, result caps and the opaque blocks of the request's origin. A walk can
 * resume from where the previous build's walk stopped, so an append-only request renders only
 * what is new (plus the trailing batch, while some of its calls are still unanswered).
 *
 * Tool-call pairs (docs/decisions.md, Sticky elision and tool-call pairs): a tool result belongs to
 * the assistant batch right before it (only tool results in between), when that batch has a call
 * with its id; the first result per id counts. Any other tool entry is an orphan and is left out. A
 * batch sends only the calls answered in its run: providers (OpenAI, Cerebras) reject an assistant
 * tool call not followed by its result, so a client that moved on without answering has those calls
 * dropped (with the batch's blocks, which were made with the calls the model wrote). A reused call
 * id thereby refers to its latest batch. An elided batch is a placeholder without calls, and every
 * result in its run is left out.
 *
 * Under window-v2 (`mergeElided`) the elided replies that end up next to each other in the request
 * (nothing shown between them: their results and orphans are left out) are one assistant
 * placeholder naming the first and last of them, `[elided seq=A-B]`, where the first one stood. A
 * tool result elided in place keeps its own placeholder, since its call still needs it; user
 * messages, summaries and replies still shown end a run. Runs change only when the elided set
 * does: at a trim, or when a rewritten history resends an elided entry, which comes back elided
 * (docs/decisions.md, Placeholders that do not pile up).
 *
 * Under window-v3 a folded tool result is its one-line stand-in, in place (folds.ts), and each
 * result is cut at its tool's cap (tool-caps.ts).
 */
import type { NeutralMessage, Origin } from '../core/types.js';
import type { Entry, Rendered, WindowStats } from './entry.js';
import type { Summaries, Summary } from './summaries.js';

export interface ItemFields {
  /** `elided`: a merged run of elided replies (window-v2); `entry` is its first. */
  readonly kind: 'system' | 'entry' | 'summary' | 'elided';
  readonly entry: Entry | undefined;
  readonly summary: Summary | undefined;
  readonly r: Rendered;
  /** A tool result's calling batch (item index); -1 for anything else. */
  readonly batch: number;
  /** A batch's result items (indices), in the order they were logged. */
  readonly results: number[] | undefined;
  /** A trailing batch some of whose calls are not answered yet: not elided, re-rendered next build. */
  readonly open: boolean;
  /** Seq of the last reply a merged placeholder names; -1 for anything else. */
  readonly last: number;
}

export interface Item extends ItemFields {
  /** Estimate of the messages up to and including this one. */
  readonly cum: number;
}

/**
 * A request's messages as items, with their messages and texts kept in arrays of their own: a
 * build copies those (one slice each) instead of mapping over the items.
 */
export class Rendering {
  readonly items: Item[] = [];
  readonly msgs: NeutralMessage[] = [];
  /** What the digest hashes: each item's rendering, its text made when hashed. */
  readonly rendered: Rendered[] = [];

  get length(): number {
    return this.items.length;
  }

  get est(): number {
    return this.items.length === 0 ? 0 : this.items[this.items.length - 1]!.cum;
  }

  push(f: ItemFields): number {
    const cum = this.est + f.r.est;
    // One literal, always in this order: every item has the same shape.
    this.items.push({ kind: f.kind, entry: f.entry, summary: f.summary, r: f.r, batch: f.batch, results: f.results, open: f.open, last: f.last, cum });
    this.msgs.push(f.r.msg);
    this.rendered.push(f.r);
    return this.items.length - 1;
  }

  truncate(n: number): void {
    this.items.length = n;
    this.msgs.length = n;
    this.rendered.length = n;
  }
}

export interface WalkContext {
  readonly entries: readonly Entry[];
  readonly summaries: Summaries;
  readonly origin: Origin;
  readonly originKey: string;
  readonly isElided: (seq: number) => boolean;
  /** Entries with a seq above this are treated as stale (the elisions this request makes). */
  readonly staleAbove: number;
  /** Recipe.stale_blocks `keep`: no reply loses its blocks to staleness (the upstream drops what it finds invalid). */
  readonly keepStale: boolean;
  /** A tool result's cap (tool-caps.ts). */
  readonly capOf: (e: Entry) => number;
  /** The result that superseded a folded tool result (window-v3); undefined when it is not folded. */
  readonly foldedBy: (seq: number) => number | undefined;
  /** window-v2: adjacent elided replies are one placeholder. */
  readonly mergeElided: boolean;
  readonly stats: WindowStats;
}

/** Where the next walk over the same state resumes. */
export interface Resume {
  item: number;
  entry: number;
}

/** Walk entries from index `from`, appending items; returns where the next walk resumes. */
export function walk(ctx: WalkContext, items: Rendering, from: number): Resume {
  const { entries, stats } = ctx;
  const n = entries.length;
  let resume: Resume | undefined;
  // The run of elided replies being merged: pushed once its extent is known.
  let run: { at: number; first: Entry; last: Entry } | undefined;
  const flush = (): void => {
    if (run === undefined) return;
    items.push({ kind: 'elided', entry: run.first, summary: undefined, r: run.first.elidedRun(run.last.seq, stats), batch: -1, results: undefined, open: false, last: run.last.seq });
    run = undefined;
  };
  let i = from;
  while (i < n) {
    const e = entries[i]!;
    stats.walked++;
    const s = covering(ctx.summaries, e.seq);
    if (s !== undefined) {
      flush();
      const last = items.items[items.length - 1];
      if (last?.summary !== s) items.push({ kind: 'summary', entry: undefined, summary: s, r: ctx.summaries.message(s, stats), batch: -1, results: undefined, open: false, last: -1 });
      i++;
    } else if (e.role === 'tool') {
      i++; // an orphan: no batch right before it has its call
    } else if (ctx.mergeElided && e.role === 'assistant' && ctx.isElided(e.seq)) {
      if (run === undefined) run = { at: i, first: e, last: e };
      else run.last = e;
      // An elided batch's results are left out; they and any orphans after it join the run.
      i = e.calls.length > 0 ? resultsEnd(ctx, i) : i + 1;
    } else if (e.role === 'assistant' && e.calls.length > 0) {
      flush();
      const next = batch(ctx, items, i);
      if (next.open) resume = { item: next.item, entry: i };
      i = next.end;
    } else {
      flush();
      items.push({ kind: 'entry', entry: e, summary: undefined, r: single(ctx, e), batch: -1, results: undefined, open: false, last: -1 });
      i++;
    }
  }
  if (run !== undefined) {
    // An entry appended later may be elided from the start (a resent entry that comes back
    // elided) and join this run: the next walk resumes at the run, not after it.
    const at = { item: items.length, entry: run.at };
    flush();
    return at;
  }
  return resume ?? { item: items.length, entry: n };
}

/** End (exclusive) of the tool entries after the batch at `i` that no summary covers. */
function resultsEnd(ctx: WalkContext, i: number): number {
  const { entries } = ctx;
  let end = i + 1;
  while (end < entries.length && entries[end]!.role === 'tool' && covering(ctx.summaries, entries[end]!.seq) === undefined) end++;
  ctx.stats.walked += end - i - 1;
  return end;
}

export function covering(summaries: Summaries, seq: number): Summary | undefined {
  const eff = summaries.effective;
  if (eff.length === 0) return undefined;
  const s = eff[summaries.firstFrom(seq)];
  return s !== undefined && s.from <= seq ? s : undefined;
}

/** A user, system or call-less assistant entry. */
function single(ctx: WalkContext, e: Entry): Rendered {
  if (e.role === 'assistant') {
    if (ctx.isElided(e.seq)) return e.elided(ctx.stats);
    const withBlocks = e.withBlocks(ctx.origin, ctx.originKey, ctx.stats, isStale(ctx, e));
    if (withBlocks !== undefined) return withBlocks;
  }
  return e.plain(ctx.capOf, ctx.stats);
}

function isStale(ctx: WalkContext, e: Entry): boolean {
  return !ctx.keepStale && (e.stale || e.seq > ctx.staleAbove);
}

/** An assistant batch and its run of results. */
function batch(ctx: WalkContext, items: Rendering, i: number): { end: number; open: boolean; item: number } {
  const { entries, stats } = ctx;
  const e = entries[i]!;
  const end = resultsEnd(ctx, i);
  const at = items.length;

  if (ctx.isElided(e.seq)) {
    items.push({ kind: 'entry', entry: e, summary: undefined, r: e.elided(stats), batch: -1, results: undefined, open: false, last: -1 });
    return { end, open: false, item: at };
  }

  const ids = new Set(e.calls.map((c) => c.id));
  const answeredBy = new Map<string, number>();
  for (let k = i + 1; k < end; k++) {
    const src = entries[k]!.source;
    if (src.role === 'tool' && ids.has(src.tool_call_id) && !answeredBy.has(src.tool_call_id)) answeredBy.set(src.tool_call_id, k);
  }
  const complete = answeredBy.size === ids.size;
  const open = !complete && end === entries.length;
  let r: Rendered;
  if (!complete) r = e.withCalls(new Set(answeredBy.keys()), stats);
  else r = e.withBlocks(ctx.origin, ctx.originKey, stats, isStale(ctx, e)) ?? e.plain(ctx.capOf, stats);
  const results: number[] = [];
  items.push({ kind: 'entry', entry: e, summary: undefined, r, batch: -1, results, open, last: -1 });

  for (let k = i + 1; k < end; k++) {
    const t = entries[k]!;
    const src = t.source;
    if (src.role !== 'tool' || answeredBy.get(src.tool_call_id) !== k) continue;
    const by = ctx.foldedBy(t.seq);
    const rendered = ctx.isElided(t.seq) ? t.elided(stats) : by !== undefined ? t.folded(by, stats) : t.plain(ctx.capOf, stats);
    results.push(items.push({ kind: 'entry', entry: t, summary: undefined, r: rendered, batch: at, results: undefined, open: false, last: -1 }));
  }
  return { end, open, item: at };
}
