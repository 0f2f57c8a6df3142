/**
 * The build stage: the window over the session's log, the cache hints, the wire body, and the
 * `llm.req` record written before anything is sent (replay rebuilds the digest from it).
 */
import { hintsFor, hintsRecord } from '../../cache-hints/session-hints.js';
import type { BreakCause } from '../../core/events.js';
import type { NeutralRequest, RequestParams } from '../../core/types.js';
import { counterOf } from '../../metrics/series.js';
import type { Turn } from '../../session/manager.js';
import { sideParams } from '../../session/side.js';
import { firstDifference } from '../../window/index.js';
import { summaryOf } from '../request-log.js';
import { addForwarded } from '../forwarded-headers.js';
import type { Call } from './call.js';

/** The window, the hints and the wire body; `llm.req` is written before anything is sent. */
export async function build(call: Call) {
  const { a, turn, deps } = call;
  // A side request keeps what the upstream's cache is keyed on as the conversation sent it (side.ts).
  const params = turn.plan.kind === 'side' ? sideParams(a.client.params, turn.plan.job, turn.session.lastRequestParams, a.dialect.cacheKeyedParams ?? []) : a.client.params;
  // A side request trims only where it would not fit: below that, the prefix it came to read holds.
  const recipe = turn.session.window.recipe;
  const highWater = turn.plan.kind === 'side' && recipe !== undefined ? recipe.context - recipe.output_reserve : undefined;
  const built = turn.session.window.build({ route: a.route.name, model: a.route.dialect.model, origin: call.origin, params, ...(highWater === undefined ? {} : { highWater }) });
  // The lineage's key: a fork or side call lands on the replica that holds its parent's prefix.
  const hints = hintsFor(a.route, turn.session.lineage);
  const cause = breakCause(turn, built.request, a.dialect.cacheKeyedParams);
  // The dialect reads images synchronously: any the request names that memory dropped come back first.
  const fetching = deps.images.ensure(built.request.messages);
  if (fetching !== undefined) await fetching;
  const cached = await explicitCache(call, built.request);
  if (cached !== undefined) hints.geminiCache = { name: cached.name, messages: cached.messages };
  // Encoded before llm.req is written: the record names the breakpoints the dialect placed. The
  // digest is the neutral request's, which encoding does not touch.
  // A conversation's first request keeps no serialisations: most are the only one (wire-memo.ts).
  const memo = cause === 'first' ? deps.wireMemo?.readOnly : deps.wireMemo;
  const encoded = a.dialect.encodeRequest(built.request, a.route.dialect, hints, { stream: true, resolveImage: (sha) => deps.images.resolve(sha), ...(memo === undefined ? {} : { memo }), ...(deps.listMemo === undefined ? {} : { lists: deps.listMemo }) });
  call.reqEvent = turn.append({
    type: 'llm.req', digest: built.digest, recipe_version: turn.session.window.recipe?.version ?? a.route.recipe.version,
    route: a.route.name, model: a.route.dialect.model, origin: call.origin, params, elided: built.elided,
    ...(built.folded.length === 0 ? {} : { folded: built.folded }), est_tokens: built.estTokens,
    hints: cached === undefined ? hintsRecord(hints, encoded) : { ...hintsRecord(hints, encoded), gemini_cache: { name: cached.name, messages: cached.messages, tokens: cached.tokens, ...(cached.created ? { created: true as const } : {}), kept_until: new Date(cached.keptUntil).toISOString() } },
    cause, ...(highWater === undefined ? {} : { high_water: highWater }),
    ...(a.key === undefined ? {} : { key_name: a.key.name }), inbound: a.inbound.wire,
    ...(a.incoming.retry?.idempotency === undefined ? {} : { idempotency: a.incoming.retry.idempotency }),
  });
  turn.sent(built.request);
  summaryOf(call.req).cause = cause;
  if (built.trimmed) counterOf(deps.metrics.windowTrims, a.labels).inc();
  addForwarded(encoded.headers, a.forwarded, a.dialect);
  if (a.apiKey !== undefined) Object.assign(encoded.headers, a.dialect.authHeaders(a.apiKey));
  return { encoded, digest: built.digest, cause, estTokens: built.estTokens, trimmed: built.trimmed, maxTokens: built.request.params.max_tokens };
}

/**
 * The explicit context cache the request reads (gemini-caches.ts), on a route that asks for one.
 * Not for a side request (one call on the conversation's prefix), nor where a fallback could get
 * the request (the entry is the first provider's).
 */
function explicitCache(call: Call, request: NeutralRequest) {
  const { a, turn, deps } = call;
  if (a.route.geminiCache !== 'explicit' || deps.geminiCaches === undefined || turn.plan.kind === 'side' || a.route.deployments.length > 1) return undefined;
  return deps.geminiCaches.use(turn.session.id, a.route, request, a.apiKey, (sha) => deps.images.resolve(sha));
}

/** Why this request's prefix differs from the session's previous request (docs/architecture.md 8). */
function breakCause(turn: Turn, request: NeutralRequest, keyed: readonly (keyof RequestParams)[] | undefined): BreakCause {
  const previous = turn.session.previousRequest;
  if (previous === undefined) return 'first';
  const diff = firstDifference(previous, request, turn.appended, { keyed });
  return diff?.cause ?? 'none';
}
