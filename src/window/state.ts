/**
 * The window: a fold over a session's log events, and the builder of the next upstream request.
 *
 * Every decision is derived from the events (sticky elisions from `llm.req.elided`, folds from
 * `llm.req.folded`, a tool result's call from the batch before it, staleness
 * from the order of events), never from memory of earlier builds or a clock, so replaying the
 * log rebuilds each request to its recorded digest. The only memory kept between builds is a
 * cache of the previous build's rendered messages: a build whose state changed only by appends
 * extends it (O(new entries)); anything else walks every entry again, reusing each entry's
 * memoised rendering.
 */
import { canonicalJson, DigestChain, sha256Hex } from '../core/canonical.js';
import { ProxyError } from '../core/errors.js';
import { keptText } from '../core/kept-text.js';
import { estimateTextTokens } from '../core/estimate.js';
import type { EventOf, Fold, LogEvent, Recipe } from '../core/events.js';
import type { NeutralMessage, NeutralRequest, Origin, RequestParams, ToolSpec } from '../core/types.js';
import { CallPairing } from './call-pairing.js';
import { Entry, originKey, render, type Rendered, type WindowStats } from './entry.js';
import { selectFolds, standInsLeaving } from './folds.js';
import { checkRecipe, foldsUnder, rulesOf } from './recipe.js';
import { Summaries } from './summaries.js';
import { ResultCaps } from './tool-caps.js';
import { selectTrim } from './trim.js';
import { Rendering, walk, type Resume } from './walk.js';

/** The key of an empty tool list, which every new window starts from. */
const NO_TOOLS_KEY = sha256Hex('[]');

export interface WindowInput {
  /** Config model name the request came in on (recorded in llm.req; not part of the request). */
  route: string;
  /** Upstream model id. */
  model: string;
  /** Where the request goes: opaque blocks go back only to the origin that made them. */
  origin: Origin;
  params: RequestParams;
  /**
   * Trim only above this estimate instead of the recipe's high water (a side request: the window's
   * ceiling, so it keeps the prefix it came to read; docs/decisions.md, Side requests read the
   * conversation's prefix). Recorded in llm.req when set.
   */
  highWater?: number;
}

export interface WindowResult {
  request: NeutralRequest;
  /** canonicalDigest(request), computed incrementally. */
  digest: string;
  /** Seqs this request newly elides, ascending (to record in llm.req.elided). */
  elided: number[];
  /** Tool results this request newly folds, ascending (window-v3; to record in llm.req.folded). */
  folded: Fold[];
  /** Estimate of the request as sent. */
  estTokens: number;
  /** Estimate before this request's new elisions (equals estTokens when it elided nothing). */
  estBeforeTrim: number;
  /** This request crossed high water and elided something (and folded, if anything, only then). */
  trimmed: boolean;
}

interface Cache {
  gen: number;
  key: string;
  rendering: Rendering;
  resume: Resume;
  /** Set on a trimming build: valid once its llm.req, with these elisions, is applied. */
  pending: { elided: number[]; folded: Fold[]; baseGen: number } | undefined;
}

/**
 * The canonical JSON of a catalog, kept by its array: every request's digest holds the tools, 10 to
 * 60 KB of them for a coding agent, and they change only by a catalog event. Sessions that share a
 * head (session/heads.ts hands out one array per head) share one text.
 */
function toolsText(tools: readonly ToolSpec[]): string {
  return keptText(tools, 'canonical', () => canonicalJson(tools));
}

export class WindowState {
  #recipe: Recipe | undefined;
  #system: { content: string; rendered: Rendered | undefined } | undefined;
  #tools: ToolSpec[] = [];
  /** canonicalDigest of the tools: a catalog event that changes nothing is told apart without keeping their text. */
  #toolsKey = NO_TOOLS_KEY;
  #toolsEst = estimateTextTokens('[]');
  readonly #entries: Entry[] = [];
  /** Sticky elisions, from the log; made at the first (most sessions never trim). */
  #elided: Set<number> | undefined;
  /** Folded tool results (window-v3): seq -> the result that superseded it. Sticky, from the log. */
  #folded: Map<number, number> | undefined;
  /** Tool results the client cleared itself (window-v4): the next trim elides them first. */
  #cleared: Set<number> | undefined;
  #caps: ResultCaps | undefined;
  readonly #pairing = new CallPairing();
  readonly #summaries = new Summaries();
  /** Bumped by every event that changes an already rendered message (not by appends). */
  #gen = 0;
  #cache: Cache | undefined;
  readonly #chain = new DigestChain('messages');
  readonly stats: WindowStats = { walked: 0, rendered: 0 };

  get recipe(): Recipe | undefined {
    return this.#recipe;
  }

  apply(event: LogEvent): void {
    if (this.#recipe === undefined && event.type !== 'session.start' && event.type !== 'session.resume') {
      throw new ProxyError('log_malformed', { file: '', line: '', detail: `seq ${event.seq}: a window starts with session.start, not ${event.type}` });
    }
    switch (event.type) {
      case 'session.start':
      case 'session.resume':
        return this.#setRecipe(event.recipe);
      case 'client.msg':
        return this.#clientMsg(event);
      case 'catalog':
        return this.#catalog(event.tools);
      case 'llm.req':
        return this.#request(event.elided, event.folded ?? []);
      case 'llm.resp': {
        // An aborted reply stays in the log but not in the window: the client never saw it and
        // asks again.
        if (event.aborted === true) return;
        const { content, thinking, tool_calls, blocks } = event.reply;
        const msg: NeutralMessage = { role: 'assistant', content };
        if (thinking !== undefined) msg.thinking = thinking;
        if (tool_calls !== undefined && tool_calls.length > 0) msg.tool_calls = tool_calls;
        if (blocks !== undefined && blocks.length > 0) msg.blocks = blocks;
        this.#push(new Entry(event.seq, msg));
        return;
      }
      case 'client.rewrite':
        return this.#rewrite(event.from_seq);
      case 'summary.add': {
        const changed = this.#summaries.add(event.seq, event.from, event.to, event.text, this.#entries);
        if (changed !== undefined) this.#prefixChanged(changed);
        return;
      }
      case 'summary.revoke': {
        const changed = this.#summaries.revoke(event.summary);
        if (changed !== undefined) this.#prefixChanged(changed);
        return;
      }
      case 'llm.error':
        return;
    }
  }

  /**
   * Whether the entry `seq` is elided or folded (sticky: every later request keeps it so). Either
   * way, a rewrite that resends it brings it back elided.
   */
  isElided(seq: number): boolean {
    return this.#elided?.has(seq) === true || this.#folded?.has(seq) === true;
  }

  build(input: WindowInput): WindowResult {
    const recipe = this.#recipe;
    if (recipe === undefined) throw new ProxyError('log_malformed', { file: '', line: '', detail: 'no session.start before the request' });
    const key = originKey(input.origin);
    let cache = this.#cache;
    const isElided = (s: number): boolean => this.#elided?.has(s) === true;
    const foldedBy = (s: number): number | undefined => this.#folded?.get(s);
    if (cache !== undefined && cache.gen === this.#gen && cache.key === key && cache.pending === undefined) {
      cache.rendering.truncate(cache.resume.item);
      cache.resume = walk(this.#context(input.origin, key, isElided, foldedBy, Infinity), cache.rendering, cache.resume.entry);
    } else {
      cache = this.#fresh(input.origin, key, isElided, foldedBy, Infinity);
    }

    const estBeforeTrim = cache.rendering.est + this.#toolsEst;
    let elided: number[] = [];
    let folded: Fold[] = [];
    if (estBeforeTrim > (input.highWater ?? recipe.high_water)) {
      const isFolded = (s: number): boolean => this.#folded?.has(s) === true;
      elided = selectTrim(cache.rendering.items, recipe, estBeforeTrim, isElided, this.stats, isFolded, (s) => this.#cleared?.has(s) === true);
      if (elided.length > 0 && this.#folded !== undefined && rulesOf(recipe.version).standInsFollow) {
        const trimmed = new Set(elided);
        const shown = new Set(cache.rendering.items.flatMap((it) => (it.kind === 'entry' ? [it.entry!.seq] : [])));
        elided = [...elided, ...standInsLeaving(this.#folded, (s) => isElided(s) || trimmed.has(s), shown)].sort((a, b) => a - b);
      }
      const fresh = new Set(elided);
      // Beyond the trim, and only where it breaks the prefix anyway: at or after its first elision (folds.ts).
      if (elided.length > 0 && foldsUnder(recipe)) {
        folded = selectFolds(cache.rendering.items, recipe, elided[0]!, (s) => isElided(s) || fresh.has(s) || isFolded(s), this.stats);
      }
      if (elided.length > 0) {
        const foldMap = new Map(folded.map((f) => [f.seq, f.by]));
        cache = this.#fresh(input.origin, key, (s) => isElided(s) || fresh.has(s), (s) => this.#folded?.get(s) ?? foldMap.get(s), elided[0]!);
        cache.pending = { elided, folded, baseGen: this.#gen };
      }
    }
    this.#cache = cache;

    const params = outputCapped(input.params, recipe);
    // Copies of stored arrays, not maps over the items: the common build stays O(new entries)
    // but for these two pointer copies (and DigestChain's own).
    const request: NeutralRequest = { messages: cache.rendering.msgs.slice(), model: input.model, params, tools: this.#tools };
    const digest = this.#chain.digest(cache.rendering.rendered, { model: input.model, params, tools: this.#tools }, { tools: toolsText(this.#tools) });
    return { request, digest, elided, folded, estTokens: cache.rendering.est + this.#toolsEst, estBeforeTrim, trimmed: elided.length > 0 };
  }

  #fresh(origin: Origin, key: string, isElided: (seq: number) => boolean, foldedBy: (seq: number) => number | undefined, staleAbove: number): Cache {
    const rendering = new Rendering();
    if (this.#system !== undefined) {
      this.#system.rendered ??= render({ role: 'system', content: this.#system.content }, this.stats);
      rendering.push({ kind: 'system', entry: undefined, summary: undefined, r: this.#system.rendered, batch: -1, results: undefined, open: false, last: -1 });
    }
    const resume = walk(this.#context(origin, key, isElided, foldedBy, staleAbove), rendering, 0);
    return { gen: this.#gen, key, rendering, resume, pending: undefined };
  }

  #context(origin: Origin, key: string, isElided: (seq: number) => boolean, foldedBy: (seq: number) => number | undefined, staleAbove: number) {
    const recipe = this.#recipe!;
    const caps = this.#caps!;
    return {
      entries: this.#entries, summaries: this.#summaries, origin, originKey: key, isElided, foldedBy, staleAbove,
      keepStale: recipe.stale_blocks === 'keep',
      capOf: (e: Entry) => caps.capOf(e), mergeElided: rulesOf(recipe.version).mergeElided, stats: this.stats,
    };
  }

  #setRecipe(recipe: Recipe): void {
    checkRecipe(recipe);
    const before = this.#recipe;
    this.#recipe = recipe;
    if (before !== undefined && rulesOf(before.version).mergeElided !== rulesOf(recipe.version).mergeElided) {
      // Placeholders render another way from the first elided entry on.
      let first = Infinity;
      for (const seq of this.#elided ?? []) first = Math.min(first, seq);
      if (first !== Infinity) this.#prefixChanged(first);
    }
    const caps = new ResultCaps(recipe);
    const old = this.#caps;
    this.#caps = caps;
    if (old === undefined) return;
    // A new cap re-renders every result the smaller cap cut: a prefix change from the first one.
    let first: number | undefined;
    for (const e of this.#entries) {
      if (e.source.role !== 'tool') continue;
      const of = { call: e.call };
      const a = old.capOf(of);
      const b = caps.capOf(of);
      if (a === b) continue;
      e.forgetCapped();
      if (first === undefined && estimateTextTokens(e.source.content) > Math.min(a, b)) first = e.seq;
    }
    if (first !== undefined) this.#prefixChanged(first);
  }

  #clientMsg(event: EventOf<'client.msg'>): void {
    const msg = event.msg;
    // Nothing renders differently until the next trim: no prefix changes here.
    if (event.cleared !== undefined && rulesOf(this.#recipe!.version).clientClears) {
      for (const c of event.cleared) for (const seq of c.seqs) (this.#cleared ??= new Set()).add(seq);
    }
    if (event.head !== true || msg.role !== 'system') {
      this.#push(new Entry(event.seq, msg));
      if (event.elided_as !== undefined && this.isElided(event.elided_as)) (this.#elided ??= new Set()).add(event.seq);
      return;
    }
    if (this.#recipe!.system === 'follow' || this.#system === undefined) {
      if (msg.content === this.#system?.content) return;
      this.#system = { content: msg.content, rendered: undefined };
      // The first message changed: a provider checking a signed block's prefix sees it too.
      this.#prefixChanged(-Infinity);
      return;
    }
    // `append`: the first prompt stays; a different one joins the conversation where it came.
    if (msg.content !== this.#latestSystemText()) this.#push(new Entry(event.seq, msg, true));
  }

  /** Append an entry, pairing a tool result with its call as the walk does (call-pairing.ts). */
  #push(e: Entry): void {
    this.#entries.push(e);
    this.#pairing.append(e);
  }

  #latestSystemText(): string | undefined {
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const e = this.#entries[i]!;
      if (e.headSystem && e.source.role === 'system') return e.source.content;
    }
    return this.#system?.content;
  }

  #catalog(tools: ToolSpec[]): void {
    const text = toolsText(tools);
    const key = sha256Hex(text);
    this.#tools = tools;
    if (key === this.#toolsKey) return;
    this.#toolsKey = key;
    this.#toolsEst = estimateTextTokens(text);
    // The tools come before every message: signed blocks made with the old ones are stale.
    this.#prefixChanged(-Infinity);
  }

  #request(elided: readonly number[], folded: readonly Fold[]): void {
    if (elided.length === 0 && folded.length === 0) return;
    const cache = this.#cache;
    const matches = cache?.pending !== undefined && cache.pending.baseGen === this.#gen && sameSet(cache.pending.elided, elided) && sameFolds(cache.pending.folded, folded);
    for (const seq of elided) (this.#elided ??= new Set()).add(seq);
    for (const f of folded) (this.#folded ??= new Map()).set(f.seq, f.by);
    this.#prefixChanged(Math.min(...elided, ...folded.map((f) => f.seq)));
    // The trimming build already rendered this state: keep it.
    if (matches) {
      cache!.gen = this.#gen;
      cache!.pending = undefined;
    }
  }

  #rewrite(fromSeq: number): void {
    // Entries are in seq order, so the ones leaving are a suffix. Nothing before a survivor
    // changes, so no survivor's blocks go stale.
    let n = this.#entries.length;
    while (n > 0 && this.#entries[n - 1]!.seq >= fromSeq) n--;
    if (n === this.#entries.length) return;
    this.#entries.length = n;
    this.#gen++;
    this.#pairing.truncated(this.#entries);
  }

  /** Something at or after `seq` changed: every reply made after it loses its opaque blocks. */
  #prefixChanged(seq: number): void {
    this.#gen++;
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const e = this.#entries[i]!;
      if (e.seq <= seq) break;
      if (e.blocks.length > 0) e.stale = true;
    }
  }
}

function sameFolds(a: readonly Fold[], b: readonly Fold[]): boolean {
  if (a.length !== b.length) return false;
  const by = new Map(a.map((f) => [f.seq, f.by]));
  return b.every((f) => by.get(f.seq) === f.by);
}

function sameSet(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((x) => set.has(x));
}

/** The request's parameters with the output limit the recipe gives it (Recipe.output_cap). */
function outputCapped(params: RequestParams, recipe: Recipe): RequestParams {
  if (recipe.output_cap === 'client') return params;
  return { ...params, max_tokens: Math.min(params.max_tokens ?? recipe.output_reserve, recipe.output_reserve) };
}
