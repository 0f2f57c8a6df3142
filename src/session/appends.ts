/**
 * What a turn writes to its session's log when a request starts or continues it: the client's
 * new messages (with a changed system prompt or catalog before them), and a fork's or side
 * request's copy of its parent's events.
 */
import type { EventBody, LogEvent } from '../core/events.js';
import type { NeutralMessage, ToolSpec } from '../core/types.js';
import type { Store } from '../store/types.js';
import { rulesOf } from '../window/index.js';
import { mergeCatalog, restoreReply } from './additions.js';
import { clearedGroups } from './clearing.js';
import type { IncomingMessage } from './incoming.js';
import type { LiveSession } from './live-session.js';
import type { ClearedEntry } from './plan.js';
import type { SideJob } from './side.js';
import type { Turn } from './turn.js';

/** What of a request its appends read: its head in the log's terms and its messages. */
export interface Additions {
  system?: string;
  tools: ToolSpec[];
  /** The catalog's key (heads.ts). */
  catalog: string;
  messages: NeutralMessage[];
}

export interface AppendOptions {
  /** The elided entries a rewrite takes out, by key (`canon` holds the request's keys). */
  leaving?: Map<string, number> | undefined;
  canon?: readonly IncomingMessage[];
  /** Entries the client cleared (clearing.ts), named on the first message where the window takes that. */
  cleared?: readonly ClearedEntry[] | undefined;
}

/**
 * Write what the request adds: a changed system prompt or catalog, then its new messages from
 * `from` on, the first of them naming the entries the client cleared.
 */
export function appendConversation(turn: Turn, req: Additions, from: number, opts: AppendOptions = {}): void {
  const { leaving: elided, canon } = opts;
  const session = turn.session;
  const recipe = session.window.recipe;
  let cleared = opts.cleared !== undefined && opts.cleared.length > 0 && recipe !== undefined && rulesOf(recipe.version).clientClears ? clearedGroups(opts.cleared) : undefined;
  if (req.system !== undefined && req.system !== session.view.system) {
    turn.append({ type: 'client.msg', msg: { role: 'system', content: req.system }, head: true });
  }
  if (req.catalog !== session.catalogKey) {
    turn.append({ type: 'catalog', tools: mergeCatalog(session.view.tools, req.tools) });
  }
  for (let i = from; i < req.messages.length; i++) {
    const was = elided === undefined || canon === undefined ? undefined : elided.get(canon[i]!.key);
    turn.append({ type: 'client.msg', msg: restoreReply(session.view, req.messages[i]!), ...(was === undefined ? {} : { elided_as: was }), ...(cleared === undefined ? {} : { cleared }) });
    cleared = undefined;
  }
}

/**
 * The elided entries a rewrite takes out of the window, by key: one the client sends again
 * comes back elided, so a rewrite does not grow the window past what the trims left.
 */
export function elidedLeaving(session: LiveSession, from: number): Map<string, number> | undefined {
  let out: Map<string, number> | undefined;
  for (const e of session.view.entries.slice(from)) {
    if (session.window.isElided(e.seq)) (out ??= new Map()).set(e.key, e.seq);
  }
  return out;
}

/**
 * The parent's events before `upTo` (all of them when undefined), with a session.start of the
 * new session's own: a fork's, or a side request's (`side`). Of the requests at the end of that
 * span, made for the message the copy stops after and answered by replies it leaves out, only
 * what the new session needs is copied (`copiedTail`); its own events then start before `upTo`,
 * which its session.start says (`own_from`).
 */
export async function copyParent(store: Store, turn: Turn, parent: LiveSession, upTo: number | undefined, ids: string[], side?: SideJob): Promise<void> {
  // Live sessions keep no events in memory: the parent's log is read, once its appends are written.
  await parent.log.sync();
  const { events } = await store.read(parent.id);
  const atSeq = upTo ?? (events.at(-1)?.seq ?? 0) + 1;
  const copied = copiedTail(events.filter((e) => e.seq < atSeq));
  const ownFrom = copied.length + 1;
  const sideMark = side === undefined ? {} : { side: { kind: side.kind, client: side.client } };
  for (const e of copied) {
    const { seq: _seq, ts: _ts, ...body } = e;
    let copy: EventBody = body;
    if (body.type === 'session.start') {
      const { own_from: _own, ...start } = body;
      copy = { ...start, ids, parent: { session: parent.id, seq: atSeq }, ...(ownFrom === atSeq ? {} : { own_from: ownFrom }), lineage: parent.lineage, ...sideMark };
    }
    turn.append(copy);
  }
}

/**
 * `events` less the requests at their end that the new session has no use for. A fork at a
 * message the parent answered (sub-agents that open alike, one task run again) stops after the
 * parent's requests for that message, whose replies it leaves out. Of those it keeps the last (the
 * predecessor `proxy diff` compares its own first request with) and any that elided or folded
 * (the window holds them); the others and their failures (`llm.error`) are the parent's, counted
 * there. Without this, each fork of a fork at one opener copied one request more than its parent:
 * the log grew with every run, not with what was new (docs/decisions/0027).
 */
function copiedTail(events: LogEvent[]): LogEvent[] {
  let tail = events.length;
  while (tail > 0 && (events[tail - 1]!.type === 'llm.req' || events[tail - 1]!.type === 'llm.error')) tail--;
  const last = events.findLast((e) => e.type === 'llm.req');
  const kept = events.slice(tail).filter((e) => e.type === 'llm.req' && (e === last || e.elided.length > 0 || (e.folded?.length ?? 0) > 0));
  // Nothing copied refers to a request of the tail (their replies are not copied), so the ones
  // kept may take new seqs.
  return [...events.slice(0, tail), ...kept];
}
