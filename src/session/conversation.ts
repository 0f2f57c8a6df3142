/**
 * The conversation as the client held it once a given reply was given: the system prompt and the
 * client view's messages through that reply, as the log holds them. Read for a request that names
 * an earlier reply instead of sending the conversation (Responses' `previous_response_id`,
 * docs/inbound.md). The session's latest answer is in memory (manager.ts); an earlier one is read
 * from the log, whole: a client that branches from an old reply pays for it.
 */
import { isProxyError } from '../core/errors.js';
import type { LogEvent } from '../core/events.js';
import type { AssistantMessage, NeutralMessage } from '../core/types.js';
import type { Store } from '../store/types.js';
import { ClientView, viewedReply } from './view.js';

export interface Conversation {
  system: string | undefined;
  messages: NeutralMessage[];
}

/**
 * Undefined when the log holds no reply to request `seq` (none, or a failure: `llm.error`; or the
 * log cannot be read), or when its last event is older than `activeSince` (the session is past
 * `locate_days`). A reply whose stream the client stopped is the text it had received (the log's
 * partial reply, its calls left out: none was whole, or answered), as a chat UI keeps it after its
 * stop button; nothing when it had received none. A store that cannot be reached throws
 * `store_unavailable`: the reply may well exist, and the client should retry, not hear that it does
 * not (docs/scaling.md, Outages).
 */
export async function conversationFromLog(store: Store, id: string, seq: number, activeSince?: number): Promise<Conversation | undefined> {
  const events = await eventsOf(store, id, activeSince);
  if (events === undefined) return undefined;
  const view = new ClientView();
  for (const e of events) {
    view.apply(e);
    if (e.type !== 'llm.resp' || e.req !== seq) continue;
    const messages = view.entries.map((x) => x.msg);
    // The view leaves a stopped reply out: the client's next request brings its own copy, if any.
    const received = e.aborted === true ? (e.reply.content ?? '') : undefined;
    if (received !== undefined && received !== '') messages.push({ role: 'assistant', content: received });
    return { system: view.system, messages };
  }
  return undefined;
}

/**
 * The replies to requests `seqs` (by the seq of the `llm.req` each answered), their text and calls,
 * from one read of the log: what Responses item references name (docs/inbound.md). A reply the
 * client stopped is what it had received (the log's partial reply): a chat UI keeps it, and names
 * it, after its stop button. A seq with no reply is absent; the rest as `conversationFromLog`.
 */
export async function repliesFromLog(store: Store, id: string, seqs: ReadonlySet<number>, activeSince?: number): Promise<Map<number, AssistantMessage>> {
  const found = new Map<number, AssistantMessage>();
  const events = await eventsOf(store, id, activeSince);
  for (const e of events ?? []) {
    if (e.type !== 'llm.resp' || !seqs.has(e.req)) continue;
    found.set(e.req, viewedReply(e.reply));
  }
  return found;
}

/** The log's events; undefined when it cannot be read or is past `activeSince`. */
async function eventsOf(store: Store, id: string, activeSince: number | undefined): Promise<LogEvent[] | undefined> {
  let events: LogEvent[];
  try {
    ({ events } = await store.read(id));
  } catch (err) {
    if (isProxyError(err) && err.code === 'store_unavailable') throw err;
    return undefined;
  }
  // A session idle since before `activeSince` is no longer continued (docs/decisions/0023-stored-sessions-located-for-a-time.md).
  const last = events.at(-1);
  if (activeSince !== undefined && last !== undefined && Date.parse(last.ts) < activeSince) return undefined;
  return events;
}
