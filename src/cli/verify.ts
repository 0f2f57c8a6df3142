/**
 * Replay: fold a session's log event by event and rebuild every logged request from the events
 * before it, under the recipe the log recorded. A request verifies only when its rebuilt digest
 * and its newly elided set equal what `llm.req` recorded. Nothing here reads config or a clock.
 */
import { planMarks } from '../cache-hints/openai-breakpoints.js';
import { ProxyError } from '../core/errors.js';
import { WINDOW_VERSIONS, type EventOf, type LogEvent } from '../core/events.js';
import type { NeutralRequest } from '../core/types.js';
import { WindowState, windowInputOf } from '../window/index.js';

export interface Rebuilt {
  seq: number;
  line: number;
  digest: string;
  recorded: string;
  ok: boolean;
  request: NeutralRequest;
  /** Why it failed, when it did. */
  problem?: string;
}

export interface VerifyOptions {
  file: string;
  /** Only rebuild this request (seq of an llm.req); undefined: every request. */
  only?: number;
  onRequest?: (r: Rebuilt) => void;
}

/** Rebuild the requests of one session's events; throws ProxyErrors naming file and line. */
export function verifyEvents(events: readonly LogEvent[], opts: VerifyOptions): Rebuilt[] {
  const state = new WindowState();
  const out: Rebuilt[] = [];
  let found = false;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    const line = i + 1;
    if (event.type === 'llm.req' && (opts.only === undefined || opts.only === event.seq)) {
      found = true;
      const rebuilt = rebuild(state, event, line, opts.file);
      out.push(rebuilt);
      opts.onRequest?.(rebuilt);
      if (opts.only !== undefined) return out;
    }
    if (opts.only !== undefined && event.seq >= opts.only) break;
    applyAt(state, event, line, opts.file);
  }
  if (opts.only !== undefined && !found) {
    throw new ProxyError('bad_argument', { detail: `${opts.file}: seq ${opts.only} is not a logged request (llm.req)` });
  }
  return out;
}

function applyAt(state: WindowState, event: LogEvent, line: number, file: string): void {
  try {
    state.apply(event);
  } catch (err) {
    throw withPlace(err, file, line);
  }
}

function rebuild(state: WindowState, event: EventOf<'llm.req'>, line: number, file: string): Rebuilt {
  let result;
  try {
    result = state.build(windowInputOf(event));
  } catch (err) {
    throw withPlace(err, file, line);
  }
  const sameElided = sameSet(result.elided, event.elided);
  const sameFolded = sameSet(result.folded.map((f) => f.seq), (event.folded ?? []).map((f) => f.seq));
  const marks = marksProblem(result.request, event);
  const ok = result.digest === event.digest && sameElided && sameFolded && marks === undefined;
  const rebuilt: Rebuilt = { seq: event.seq, line, digest: result.digest, recorded: event.digest, ok, request: result.request };
  if (!ok) {
    rebuilt.problem = result.digest !== event.digest
      ? `digest ${result.digest} differs from the recorded ${event.digest}`
      : !sameElided ? `elided [${result.elided.join(',')}] differs from the recorded [${event.elided.join(',')}]`
        : !sameFolded ? `folded [${result.folded.map((f) => f.seq).join(',')}] differs from the recorded [${(event.folded ?? []).map((f) => f.seq).join(',')}]`
          : marks;
  }
  return rebuilt;
}

/**
 * The OpenAI breakpoints the request carried, placed again from the rebuilt request: the wire is a
 * function of the request, the route and these, so equal marks give equal bytes. A log without the
 * record (older, or a route that sent none) has nothing to check.
 */
function marksProblem(request: NeutralRequest, event: EventOf<'llm.req'>): string | undefined {
  const recorded = event.hints?.prompt_cache;
  if (recorded === undefined) return undefined;
  const marks = planMarks(request).marks;
  if (marks.join(',') !== recorded.marks.join(',')) return `cache breakpoints [${marks.join(',')}] differ from the recorded [${recorded.marks.join(',')}]`;
  if (recorded.mode === 'explicit' && marks.length === 0) return 'explicit cache mode recorded without a breakpoint';
  return undefined;
}

function sameSet(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  const sa = [...a].sort((x, y) => x - y);
  const sb = [...b].sort((x, y) => x - y);
  return sa.every((v, i) => v === sb[i]);
}

/** Give an error from the window the file and line it came from. */
function withPlace(err: unknown, file: string, line: number): unknown {
  if (err instanceof ProxyError && err.code === 'unknown_recipe_version') {
    const version = /"([^"]*)"/.exec(err.message)?.[1] ?? '?';
    return new ProxyError('unknown_recipe_version', { file, line, version, known: WINDOW_VERSIONS.join(', ') });
  }
  if (err instanceof ProxyError) return err;
  return new ProxyError('log_malformed', { file, line, detail: err instanceof Error ? err.message : String(err) });
}
