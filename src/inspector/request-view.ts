/**
 * `GET /api/sessions/:id/requests/:seq`: the request rebuilt from the log as `proxy replay` builds
 * it (the window folded over the events before it, under the recipe the log recorded), its digest
 * checked against the one logged, the hints the `llm.req` recorded, the reasoning given back and
 * how many of its blocks the upstream dropped, and the first difference from the request before it
 * as `proxy diff` names it (firstDifference); and what it cost: its row of `proxy stats SESSION`,
 * priced as the session page prices it.
 */
import { ProxyError } from '../core/errors.js';
import type { EventOf, HintsRecord, LogEvent } from '../core/events.js';
import type { NeutralRequest } from '../core/types.js';
import { differenceAsLogged, WindowState, windowInputOf } from '../window/index.js';
import type { PriceBook } from '../stats/prices.js';
import { sessionStats } from '../stats/session-totals.js';
import type { Store } from '../store/types.js';
import { diffInContext, type DiffView } from './diff-context.js';
import { pricedRows, type PricedRow } from './figures.js';

export interface RequestView {
  seq: number;
  route: string;
  model: string;
  /** The upstream wire of the route as configured now; null when the config no longer names it. */
  wire: string | null;
  digest: { logged: string; rebuilt: string; verified: boolean; problem?: string };
  upstream: NeutralRequest;
  hints: HintsRecord & { cache_key_sent: boolean; affinity_headers: string[] };
  reasoning_back: { index: number; thinking_chars: number; blocks: { kind: string; origin: string }[] }[];
  /**
   * Of the signed thinking blocks given back, how many the upstream dropped as bound to a prefix
   * that changed (its reply's `dropped_blocks`, docs/decisions/0009); null until there is a reply.
   */
  dropped_blocks: number | null;
  /** null for a session's first request, or when the request extends its predecessor unchanged. */
  diff: DiffView | null;
  /** Added: the cause as `proxy diff` prints it (`first`, `none`, `trim`, ...), and the predecessor's seq. */
  cause: string;
  previous: number | null;
  /** Its tokens, cost and savings as the session page's row for it (sessionStats, pricedRows). */
  figures: PricedRow;
  /** Where the call failed (its `llm.error`): the upstream's status and what its body says, or the transport's error; null otherwise. */
  failure: Failure | null;
}

export interface Failure {
  status: number | null;
  /** The upstream's own words: the row's `error_message` (stats/upstream-message.ts). */
  message: string | null;
  /** The transport's error where there was no answer (refused, reset, a timeout). */
  error: string | null;
  attempts: number | null;
}

export async function requestView(store: Pick<Store, 'file' | 'exists' | 'read'>, id: string, seq: number, wireOf: (route: string) => string | null, prices: PriceBook): Promise<RequestView> {
  const file = store.file(id);
  if (!(await store.exists(id))) throw new ProxyError('session_not_found', { session: id, file });
  const { events } = await store.read(id);
  const target = events.find((e): e is EventOf<'llm.req'> => e.type === 'llm.req' && e.seq === seq);
  if (target === undefined) throw new ProxyError('request_not_found', { session: id, seq });
  const previous = events.findLast((e): e is EventOf<'llm.req'> => e.type === 'llm.req' && e.seq < seq);
  const built = rebuild(events, previous?.seq, seq, file);
  const next = built.get(seq)!;
  const prev = previous === undefined ? undefined : built.get(previous.seq)!;
  const between = previous === undefined ? [] : events.filter((e) => e.seq > previous.seq && e.seq < seq);
  const diff = prev === undefined ? undefined : differenceAsLogged(prev.request, next.request, between, target.cause);
  const problem = verify(next, target);
  const reply = events.find((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp' && e.req === seq);
  const figures = pricedRows(sessionStats(id, events, prices).requests.filter((r) => r.seq === seq), prices)[0]!;
  return {
    seq,
    route: target.route,
    model: target.model,
    wire: wireOf(target.route),
    digest: { logged: target.digest, rebuilt: next.digest, verified: problem === undefined, ...(problem === undefined ? {} : { problem }) },
    upstream: next.request,
    hints: { ...target.hints, cache_key_sent: target.hints?.session_key === true, affinity_headers: target.hints?.headers ?? [] },
    reasoning_back: next.request.messages.flatMap((m, index) =>
      m.role === 'assistant' && (m.thinking !== undefined || (m.blocks?.length ?? 0) > 0)
        ? [{ index, thinking_chars: m.thinking?.length ?? 0, blocks: (m.blocks ?? []).map((b) => ({ kind: b.kind, origin: `${b.origin.provider}/${b.origin.model}` })) }]
        : []),
    dropped_blocks: reply === undefined ? null : (reply.reply.dropped_blocks ?? 0),
    diff: prev === undefined || diff === undefined || diff.cause === 'none' ? null : diffInContext(prev.request, next.request, diff),
    cause: prev === undefined ? 'first' : (diff?.cause ?? 'none'),
    previous: previous?.seq ?? null,
    figures,
    failure: failureOf(events.find((e): e is EventOf<'llm.error'> => e.type === 'llm.error' && e.req === seq), figures),
  };
}

function failureOf(event: EventOf<'llm.error'> | undefined, row: PricedRow): Failure | null {
  if (event === undefined) return null;
  return { status: event.status ?? null, message: row.error_message, error: event.error ?? null, attempts: event.attempts ?? null };
}

interface Built {
  request: NeutralRequest;
  digest: string;
  elided: number[];
  folded: number[];
}

/** One fold of the log, building at the predecessor and at the request (as replay does). */
function rebuild(events: readonly LogEvent[], prevSeq: number | undefined, seq: number, file: string): Map<number, Built> {
  const state = new WindowState();
  const out = new Map<number, Built>();
  for (const [i, event] of events.entries()) {
    try {
      if (event.type === 'llm.req' && (event.seq === prevSeq || event.seq === seq)) {
        const r = state.build(windowInputOf(event));
        out.set(event.seq, { request: r.request, digest: r.digest, elided: r.elided, folded: r.folded.map((f) => f.seq) });
        if (event.seq === seq) return out;
      }
      state.apply(event);
    } catch (err) {
      if (err instanceof ProxyError) throw err;
      throw new ProxyError('log_malformed', { file, line: i + 1, detail: err instanceof Error ? err.message : String(err) });
    }
  }
  return out;
}

function verify(built: Built, req: EventOf<'llm.req'>): string | undefined {
  if (built.digest !== req.digest) return `digest ${built.digest} differs from the recorded ${req.digest}`;
  if (!sameSet(built.elided, req.elided)) return `elided [${built.elided.join(',')}] differs from the recorded [${req.elided.join(',')}]`;
  const folded = (req.folded ?? []).map((f) => f.seq);
  if (!sameSet(built.folded, folded)) return `folded [${built.folded.join(',')}] differs from the recorded [${folded.join(',')}]`;
  return undefined;
}

function sameSet(a: readonly number[], b: readonly number[]): boolean {
  const sa = [...a].sort((x, y) => x - y);
  const sb = [...b].sort((x, y) => x - y);
  return sa.length === sb.length && sa.every((v, i) => v === sb[i]);
}
