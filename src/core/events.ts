/**
 * The log's events. One JSONL line each, append-only, per session. The window is a fold over
 * these; nothing else is needed to rebuild a request (replay).
 */
import type { NeutralMessage, NeutralReply, Origin, RequestParams, ToolSpec } from './types.js';

/**
 * Every window version this build can rebuild; a log replays under the one it recorded.
 * window-v2 renders a run of adjacent elided replies as one placeholder (docs/decisions.md,
 * Placeholders that do not pile up); window-v3 adds folds and per-tool caps (docs/decisions.md,
 * Folds and per-tool caps); window-v4 takes the results a client cleared itself (`client.msg`
 * `cleared`) as elisions it made, and a fold's stand-in leaves with its successor
 * (docs/decisions/0005-client-clearing.md).
 */
export const WINDOW_VERSIONS = ['window-v1', 'window-v2', 'window-v3', 'window-v4'] as const;
export type WindowVersion = (typeof WINDOW_VERSIONS)[number];

/** The version a new session records; a session keeps the version it started with. */
export const NEW_SESSION_WINDOW_VERSION: WindowVersion = 'window-v4';

/** `[window] tool_caps`: results of the tools whose whole name matches `tools` (a regular expression) are cut at this cap. */
export interface ToolCap {
  tools: string;
  max_result_tokens: number;
}

/** A superseded tool result shown as a one-line stand-in (window-v3): `by` is the result that superseded it. */
export interface Fold {
  seq: number;
  by: number;
}

/**
 * Tool results the client cleared itself (window-v4): it now sends them with their content replaced
 * by `text`, a marker the agent uses (`[Old tool result content cleared]`). The window keeps sending
 * the log's copies until its next trim, which elides them first.
 */
export interface Cleared {
  text: string;
  seqs: number[];
}

/** Everything the window needs besides the events; recorded at session start and resume. */
export interface Recipe {
  version: WindowVersion;
  /** Route (config model name) the session started on. */
  route: string;
  /** Context size in tokens. */
  context: number;
  /** Tokens kept for the reply; every request caps its output here. */
  output_reserve: number;
  /** Trim when the estimate crosses this ... */
  high_water: number;
  /** ... down to this, then leave the window alone until high water again. */
  low_water: number;
  /** A tool result over this is shown head and tail. */
  max_result_tokens: number;
  /** The most recent entries are never elided. */
  protected_entries: number;
  estimator: 'bytes/3';
  system: 'follow' | 'append';
  client_drops: 'follow' | 'absorb';
  /**
   * Patterns of system-prompt lines taken out before the log (`[window] volatile_lines`): what the
   * log holds, and so what replay rebuilds, is the prompt without them. Absent in older logs: none.
   */
  volatile_lines?: string[];
  /**
   * window-v3: caps by tool name, first match wins; a tool no entry matches has
   * `max_result_tokens`. Absent: none. A whole-file read gets twice its cap.
   */
  tool_caps?: ToolCap[];
  /** window-v3: `false` when `[window] folds = false`; absent: superseded results are folded at trims. */
  folds?: boolean;
  /**
   * The output limit each request carries. `client`: the client's own, and none when it gave none
   * (docs/wires.md, Output limits). Absent (older logs, and routes that need a cap: Anthropic's
   * wire, or `output_reserve` set in the config): the client's capped at `output_reserve`, and
   * `output_reserve` when it gave none.
   */
  output_cap?: 'client';
  /**
   * `keep`: a reply's signed reasoning blocks go back even after an edit of what came before them
   * (a trim, a summary), for an upstream told to drop those it finds invalid itself
   * (docs/decisions/0009-stale-thinking-dropped-by-the-api.md). Absent (older logs, other routes):
   * they are left out of every request after the edit.
   */
  stale_blocks?: 'keep';
}

/**
 * Why a request's prefix differs from its predecessor's (docs/architecture.md section 8).
 * `provider_miss`: the prefix held, but the provider read less of it from its cache than it allowed.
 */
export const BREAK_CAUSES = ['first', 'none', 'trim', 'system', 'tools', 'client_rewrite', 'model_switch', 'params', 'summary', 'provider_miss'] as const;
export type BreakCause = (typeof BREAK_CAUSES)[number];

/** Which cache hints went on the wire; recorded for the dashboards, not part of the digest. */
export interface HintsRecord {
  session_key?: boolean;
  headers?: string[];
  cache_control?: string;
  breakpoints?: number;
  /**
   * OpenAI's GPT-5.6+ breakpoints: the `prompt_cache_options` mode sent and the message indexes
   * marked. Replay places them again from the rebuilt request and checks they are these. Absent in
   * older logs and where the route sends none.
   */
  prompt_cache?: { mode: 'implicit' | 'explicit'; marks: number[] };
  /**
   * Gemini's explicit context cache the request read: its name, how many of the request's messages
   * it holds (with the system instruction and tools), its tokens, and `created` when this request
   * made it. `kept_until`: when the proxy deletes it unless a later request uses it (the stats
   * price its storage from these, docs/decisions/0007-gemini-explicit-caching.md); absent in older
   * logs. Absent where the route caches implicitly only.
   */
  gemini_cache?: { name: string; messages: number; tokens: number; created?: true; kept_until?: string };
}

export interface Timings {
  /** Time to the first byte of the upstream reply, ms. */
  ttfb_ms?: number;
  total_ms: number;
}

export type EventBody =
  | {
      type: 'session.start';
      recipe: Recipe;
      /** Explicit ids that named the session (already hashed if they were credentials-like). */
      ids: string[];
      parent?: { session: string; seq: number };
      /**
       * A fork's or side request's: the seq of its first event of its own, where the copied ones
       * end. Absent: `parent.seq`, when every parent event before it was copied. Less when the
       * copy left out requests the parent made for the message the fork diverged at that change
       * nothing it holds (appends.ts), so repeated forks at one opener do not each copy more.
       */
      own_from?: number;
      /**
       * The conversation a fork or side call descends from, whose cache key it carries upstream
       * (absent: the parent's, or the session's own id). Not part of any request's digest.
       */
      lineage?: string;
      /**
       * A side request on its parent's prefix (a compaction or title prompt, docs/how-it-works.md,
       * Side requests): the session holds the parent's events up to `parent.seq` and the side's
       * instruction, answers that one request, and is never continued or located by a later one.
       */
      side?: { kind: 'compaction' | 'title'; client: string };
    }
  | { type: 'session.resume'; recipe: Recipe }
  /**
   * `head: true` marks the session's leading system prompt (see the `system` policy).
   * `elided_as`: the message repeats an entry a rewrite took out of the window, which was elided
   * there; it comes back elided (docs/decisions.md, Matching in the log's own terms).
   * `cleared` (window-v4): on the first message a request adds, the earlier tool results that
   * request sent cleared by the client, and nothing else re-appended (docs/decisions/0005-client-clearing.md).
   */
  | { type: 'client.msg'; msg: NeutralMessage; head?: true; elided_as?: number; cleared?: Cleared[] }
  | { type: 'catalog'; tools: ToolSpec[] }
  | {
      type: 'llm.req';
      digest: string;
      recipe_version: WindowVersion;
      route: string;
      model: string;
      origin: Origin;
      params: RequestParams;
      /** Seqs this request newly elided (sticky: every later request keeps them elided). */
      elided: number[];
      /** Tool results this request newly folded (window-v3; sticky). Absent: none. */
      folded?: Fold[];
      est_tokens: number;
      hints?: HintsRecord;
      cause?: BreakCause;
      /**
       * The trim line this request was built with, when not the recipe's high water (a side
       * request's: the window's ceiling). Absent in older logs: the recipe's.
       */
      high_water?: number;
      /** The client key's configured name (`[auth] keys`), never the key; absent without keys. */
      key_name?: string;
      /** The wire the client sent the request in (`openai-chat`, ...); absent in older logs. */
      inbound?: string;
      /**
       * SHA-256 of the client's `Idempotency-Key`, never the key; absent without one. A request
       * repeating it (and the request) is answered from this request's reply, on any replica
       * (docs/decisions/0025-idempotency-keys-in-the-log.md).
       */
      idempotency?: string;
    }
  | {
      type: 'llm.resp';
      /** Seq of the `llm.req` this answers. */
      req: number;
      reply: NeutralReply;
      origin: Origin;
      timings: Timings;
      aborted?: true;
      /** The request's prefix held (cause `none`) but the provider read less than it allowed. */
      provider_miss?: true;
      /** Upstream calls made for it, when more than one (docs/faults.md). */
      attempts?: number;
      /** The provider that answered, when it was a fallback of the route's own. */
      deployment?: string;
    }
  | {
      type: 'llm.error';
      req: number;
      status?: number;
      body?: string;
      error?: string;
      attempts?: number;
      deployment?: string;
      /**
       * What a streamed client had received when the upstream failed after its first byte: never a
       * whole assistant message, so not in the window (docs/faults.md).
       */
      partial?: NeutralReply;
    }
  /** The client's history diverged: every conversation entry with seq >= from_seq leaves the window. */
  | { type: 'client.rewrite'; from_seq: number; reason?: string }
  /** A reviewed summary replacing the entries with seq in [from, to]. */
  | { type: 'summary.add'; from: number; to: number; text: string; source_digest: string }
  | { type: 'summary.revoke'; summary: number };

export type EventType = EventBody['type'];

export type LogEvent = EventBody & {
  seq: number;
  /** ISO-8601 time of writing; passed in, never read from a clock inside the pure rooms. */
  ts: string;
};

export type EventOf<T extends EventType> = Extract<LogEvent, { type: T }>;

/**
 * The seq of a log's first event of its own: 1, or after what a fork or side request copied from
 * its parent (its session.start's `own_from`, else `parent.seq`). Readers that count a session's
 * own requests skip the events before it; they are the parent's, counted there.
 */
export function ownFrom(first: LogEvent | undefined): number {
  if (first?.type !== 'session.start' || first.parent === undefined) return 0;
  return first.own_from ?? first.parent.seq;
}
