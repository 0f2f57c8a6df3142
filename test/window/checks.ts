/**
 * The window's properties, checked over one generated session (see properties.test.ts). Each
 * check throws with the request's seq on the first violation and returns how many cases it
 * really tested, so a test can insist the property was not vacuous.
 */
import { canonicalJson } from '../../src/core/canonical.js';
import type { EventOf, LogEvent, Recipe } from '../../src/core/events.js';
import type { NeutralMessage, NeutralRequest } from '../../src/core/types.js';
import { buildAt } from '../../src/window/index.js';
import type { GeneratedSession } from './gen-session.js';
import { estimateMessageTokens, estimateTextTokens } from '../../src/core/estimate.js';

/** `[elided seq=N]`, or a merged run's `[elided seq=A-B]` (window-v2). */
const ELIDED = /^\[elided seq=\d+(?:-\d+)?\]$/;

function fail(seq: number, what: string): never {
  throw new Error(`request seq ${seq}: ${what}`);
}

/** Equal canonical JSON; the same (memoised, frozen) object is equal without serialising. */
function same(a: NeutralMessage | undefined, b: NeutralMessage | undefined): boolean {
  return a === b || canonicalJson(a) === canonicalJson(b);
}

function recipeAt(events: readonly LogEvent[], seq: number): Recipe {
  let recipe: Recipe | undefined;
  for (const e of events) {
    if (e.seq >= seq) break;
    if (e.type === 'session.start' || e.type === 'session.resume') recipe = e.recipe;
  }
  return recipe!;
}

function between(events: readonly LogEvent[], from: number, to: number): LogEvent[] {
  return events.filter((e) => e.seq > from && e.seq < to);
}

/** (a) and (e): append-only steps keep the prefix, to the byte; trims follow hysteresis. */
export function checkPrefixAndTrims(s: GeneratedSession): { prefixes: number; trims: number } {
  let prefixes = 0;
  let trims = 0;
  for (let k = 0; k < s.requests.length; k++) {
    const cur = s.requests[k]!;
    const recipe = recipeAt(s.events, cur.seq);
    const r = cur.result;
    if (r.trimmed !== (r.elided.length > 0 || r.folded.length > 0)) fail(cur.seq, 'trimmed disagrees with elided and folded');
    if (r.estBeforeTrim <= recipe.high_water && r.trimmed) fail(cur.seq, `trimmed at ${r.estBeforeTrim} <= high water`);
    if (r.trimmed) {
      trims++;
      checkProtected(cur.seq, r.request, recipe, r.elided);
      if (r.estTokens > r.estBeforeTrim) fail(cur.seq, 'a trim grew the request');
      if (r.estTokens > recipe.low_water) checkNothingEligible(cur.seq, r.request, recipe, cur.partial);
    }
    if (k === 0) continue;
    const prev = s.requests[k - 1]!;
    const gap = between(s.events, prev.seq, cur.seq);
    const appendsOnly = gap.every((e) =>
      e.type === 'llm.resp' || e.type === 'llm.error' || (e.type === 'client.msg' && (e.head !== true || recipe.system === 'append')));
    if (!appendsOnly || r.trimmed || prev.partial || prev.input.origin !== cur.input.origin) continue;
    const a = prev.result.request.messages;
    const b = cur.result.request.messages;
    if (a.length > b.length || a.some((m, i) => !same(m, b[i]))) fail(cur.seq, 'canonical messages of the previous request are not a prefix');
    const ja = JSON.stringify(a);
    if (!JSON.stringify(b).startsWith(ja.slice(0, -1))) fail(cur.seq, 'JSON bytes of the previous messages are not a prefix');
    prefixes++;
  }
  return { prefixes, trims };
}

/** The last `protected_entries` messages are never elided (they are the same before the trim). */
function checkProtected(seq: number, req: NeutralRequest, recipe: Recipe, elided: readonly number[]): void {
  const msgs = req.messages;
  for (let i = Math.max(0, msgs.length - recipe.protected_entries); i < msgs.length; i++) {
    // A run ends with the reply elided last: a protected one elided into a run names it there.
    const m = /^\[elided seq=(\d+)(?:-(\d+))?\]$/.exec(typeof msgs[i]!.content === 'string' ? (msgs[i]!.content as string) : '');
    if (m !== null && elided.includes(Number(m[2] ?? m[1]))) fail(seq, `protected message ${i} was elided`);
  }
}

/** After a trim that stopped above low water, nothing unprotected was left to elide. */
function checkNothingEligible(seq: number, req: NeutralRequest, recipe: Recipe, partial: boolean): void {
  const msgs = req.messages;
  const n = msgs.length;
  const protectFrom = Math.max(msgs[0]?.role === 'system' ? 1 : 0, n - recipe.protected_entries);
  // An entry no larger than its placeholder is not worth eliding (the window keeps it).
  const placeholder = estimateTextTokens(`[elided seq=${seq}]`);
  for (let i = 0; i < protectFrom; i++) {
    const m = msgs[i]!;
    if (m.role === 'tool' && !ELIDED.test(m.content) && estimateMessageTokens(m) > placeholder) fail(seq, `tool message ${i} left unelided above low water`);
    if (m.role !== 'assistant' || ELIDED.test(m.content ?? '') || (m.content ?? '').startsWith('[summary of')) continue;
    let end = i + 1;
    while (end < n && msgs[end]!.role === 'tool') end++;
    const batchEst = msgs.slice(i, end).reduce((t, x) => t + estimateMessageTokens(x), 0);
    if (batchEst <= placeholder) continue;
    const protectedByResult = (m.tool_calls?.length ?? 0) > 0 && end - 1 >= protectFrom;
    // The batch still waiting for the rest of its results is not elided.
    const open = partial && end === n;
    if (!protectedByResult && !open) fail(seq, `assistant message ${i} left unelided above low water`);
  }
}

/** (b) every tool result answers the batch right before it; every call is answered. */
export function checkPairs(s: GeneratedSession): number {
  let batches = 0;
  for (const { seq, result } of s.requests) {
    let open = new Set<string>();
    for (const m of result.request.messages) {
      if (m.role === 'tool') {
        if (!open.delete(m.tool_call_id)) fail(seq, `orphaned tool result ${m.tool_call_id}`);
        continue;
      }
      if (open.size > 0) fail(seq, `unanswered tool calls ${[...open].join(',')}`);
      open = new Set(m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []);
      if (open.size > 0) batches++;
    }
    if (open.size > 0) fail(seq, `unanswered tool calls at the end ${[...open].join(',')}`);
  }
  return batches;
}

/** (c) every user message still in the window appears verbatim, in order; none is elided. */
export function checkUsers(s: GeneratedSession): number {
  let checked = 0;
  for (const { seq, result } of s.requests) {
    const before = s.events.filter((e) => e.seq < seq);
    const rewrites = before.filter((e): e is EventOf<'client.rewrite'> => e.type === 'client.rewrite');
    const revoked = new Set(before.flatMap((e) => (e.type === 'summary.revoke' ? [e.summary] : [])));
    const spans = before.filter((e): e is EventOf<'summary.add'> => e.type === 'summary.add' && !revoked.has(e.seq));
    const live = before.filter((e): e is EventOf<'client.msg'> =>
      e.type === 'client.msg' && e.msg.role === 'user' && !rewrites.some((r) => r.seq > e.seq && r.from_seq <= e.seq));
    const shown = result.request.messages.filter((m) => m.role === 'user');
    let j = 0;
    for (const m of shown) {
      const text = canonicalJson(m.content);
      if (typeof m.content === 'string' && ELIDED.test(m.content)) fail(seq, 'a user message was elided');
      while (j < live.length && canonicalJson(live[j]!.msg.content) !== text) {
        const skipped = live[j]!;
        if (!spans.some((sp) => sp.from <= skipped.seq && skipped.seq <= sp.to)) fail(seq, `user message seq ${skipped.seq} is missing`);
        j++;
      }
      if (j === live.length) fail(seq, 'a user message that is not in the log');
      j++;
      checked++;
    }
    for (; j < live.length; j++) {
      const rest = live[j]!;
      if (!spans.some((sp) => sp.from <= rest.seq && rest.seq <= sp.to)) fail(seq, `user message seq ${rest.seq} is missing at the end`);
    }
  }
  return checked;
}

/** (d) every request replays, from JSON-round-tripped events, to its digest and elided set. */
export function checkReplay(s: GeneratedSession, only?: (index: number) => boolean): number {
  const events = s.events.map((e) => JSON.parse(JSON.stringify(e)) as LogEvent);
  let n = 0;
  s.requests.forEach((req, i) => {
    if (only !== undefined && !only(i)) return;
    const again = buildAt(events, req.seq);
    const logged = events.find((e) => e.seq === req.seq) as EventOf<'llm.req'>;
    if (again.digest !== logged.digest) fail(req.seq, `replayed digest ${again.digest} != ${logged.digest}`);
    if (again.elided.join(',') !== logged.elided.join(',')) fail(req.seq, `replayed elided [${again.elided.join(',')}] != [${logged.elided.join(',')}]`);
    if (JSON.stringify(again.folded) !== JSON.stringify(logged.folded ?? [])) fail(req.seq, `replayed folded ${JSON.stringify(again.folded)} != ${JSON.stringify(logged.folded ?? [])}`);
    n++;
  });
  return n;
}

/**
 * (f) an opaque block goes back only to its origin, and only after exactly the messages (and
 * tools) of the request its reply answered: what a provider signing blocks over their prefix checks.
 */
export function checkBlockPrefixes(s: GeneratedSession): number {
  const replyOf = new Map<string, EventOf<'llm.resp'>>();
  for (const e of s.events) {
    if (e.type === 'llm.resp' && e.aborted !== true) for (const b of e.reply.blocks ?? []) replyOf.set(canonicalJson(b.data), e);
  }
  const bySeq = new Map(s.requests.map((r) => [r.seq, r]));
  let checked = 0;
  for (const { seq, input, result } of s.requests) {
    result.request.messages.forEach((m: NeutralMessage, j) => {
      if (m.role !== 'assistant' || m.blocks === undefined) return;
      for (const b of m.blocks) {
        if (b.origin.provider !== input.origin.provider || b.origin.model !== input.origin.model) fail(seq, 'a block went to another origin');
      }
      const reply = replyOf.get(canonicalJson(m.blocks[0]!.data))!;
      const maker = bySeq.get(reply.req)!.result.request;
      if (maker.messages.length !== j) fail(seq, `block of reply ${reply.seq} after ${j} messages, made after ${maker.messages.length}`);
      for (let i = 0; i < j; i++) {
        if (!same(maker.messages[i], result.request.messages[i])) fail(seq, `block of reply ${reply.seq}: message ${i} changed since it was made`);
      }
      if (canonicalJson(maker.tools) !== canonicalJson(result.request.tools)) fail(seq, `block of reply ${reply.seq}: tools changed since it was made`);
      checked++;
    });
  }
  return checked;
}

/** The assistant placeholder of one elided reply or a merged run of them. */
function isReplyPlaceholder(m: NeutralMessage | undefined): boolean {
  return m?.role === 'assistant' && m.tool_calls === undefined && ELIDED.test(m.content ?? '');
}

/**
 * (g) window-v2: no two reply placeholders stand side by side (a run is one message); returns how
 * many merged placeholders, naming two or more replies, the requests showed.
 */
export function checkRunsMerged(s: GeneratedSession): number {
  let merged = 0;
  for (const { seq, result } of s.requests) {
    const msgs = result.request.messages;
    msgs.forEach((m, i) => {
      if (!isReplyPlaceholder(m)) return;
      if (isReplyPlaceholder(msgs[i - 1])) fail(seq, `reply placeholders ${i - 1} and ${i} side by side`);
      if ((m.content as string).includes('-')) merged++;
    });
  }
  return merged;
}

/**
 * (h) window-v3: a request folds only when it trims, and only at or after its first elision (where
 * its prefix breaks anyway); a fold's stand-in never changes; returns how many folds were made.
 */
export function checkFolds(s: GeneratedSession): number {
  let folds = 0;
  const standIn = new Map<string, string>();
  for (const { seq, result } of s.requests) {
    if (result.folded.length > 0) {
      if (!result.trimmed || result.elided.length === 0) fail(seq, 'folded without trimming');
      if (result.folded[0]!.seq < result.elided[0]!) fail(seq, `fold of ${result.folded[0]!.seq} before the first elision ${result.elided[0]}`);
      folds += result.folded.length;
    }
    for (const m of result.request.messages) {
      const folded = m.role === 'tool' ? /^\[folded seq=(\d+): /.exec(m.content) : null;
      if (folded === null) continue;
      const before = standIn.get(folded[1]!);
      if (before !== undefined && before !== m.content) fail(seq, `stand-in of seq ${folded[1]} changed`);
      standIn.set(folded[1]!, m.content as string);
    }
  }
  return folds;
}
