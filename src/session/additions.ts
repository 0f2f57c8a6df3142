/**
 * What a request adds to its session's log, beyond its messages as sent: a reply the client
 * echoes goes back as the log holds it, and a changed tool set keeps what did not change. Pure.
 */
import type { AssistantMessage, NeutralMessage, ToolSpec } from '../core/types.js';
import { canonicalJson } from '../core/canonical.js';
import { canonicalMessage } from './fingerprint.js';
import type { ClientView } from './view.js';

/**
 * An assistant message the client sends that echoes a reply the log holds (it kept that reply
 * through a compaction) goes upstream as the log has it, with the thinking the client dropped
 * (docs/architecture.md 4.1; clients that keep reasoning keep it by reply). With the same call ids it is the logged reply itself, so
 * the client's re-serialised arguments change no byte; with ids the client rewrote, its own
 * message (its tool results name those ids) plus the thinking. Opaque blocks stay out: they were
 * made after a prefix this request no longer has.
 */
export function restoreReply(view: ClientView, msg: NeutralMessage): NeutralMessage {
  if (msg.role !== 'assistant') return msg;
  const logged = view.replyFor(msg);
  if (logged === undefined) return msg;
  const out: AssistantMessage = canonicalMessage(logged) === canonicalMessage(msg)
    ? { role: 'assistant', content: logged.content, ...(logged.tool_calls === undefined ? {} : { tool_calls: logged.tool_calls }) }
    : { ...msg };
  if (logged.thinking !== undefined && logged.thinking !== '') out.thinking = logged.thinking;
  return out;
}

/** Keep each unchanged tool's first serialisation and first-seen order; add new ones in client order. */
export function mergeCatalog(current: readonly ToolSpec[], incoming: ToolSpec[]): ToolSpec[] {
  const byName = new Map(incoming.map((t) => [t.function.name, t]));
  const kept = current.filter((t) => {
    const next = byName.get(t.function.name);
    return next !== undefined && canonicalJson(next) === canonicalJson(t);
  });
  const keptNames = new Set(kept.map((t) => t.function.name));
  const merged = [...kept, ...incoming.filter((t) => !keptNames.has(t.function.name))];
  // The request's own array when that is what the merge gives (a new session's first catalog):
  // sessions under one head then share one array, and the texts kept by it (dialects/tools-json.ts).
  return merged.length === incoming.length && merged.every((t, i) => t === incoming[i]) ? incoming : merged;
}
