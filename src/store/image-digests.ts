/** The images a run of log events names (user messages' image parts), by digest: what must be stored beside them. */
import type { LogEvent } from '../core/events.js';
import type { ContentPart } from '../core/types.js';

export function imageDigests(events: readonly LogEvent[]): Set<string> {
  const out = new Set<string>();
  for (const e of events) if (e.type === 'client.msg') addImages(e.msg, out);
  return out;
}

/** The images a list of messages (a request about to be encoded) names, by digest. */
export function messageImageDigests(messages: readonly { role: string; content?: unknown }[]): Set<string> {
  const out = new Set<string>();
  for (const m of messages) addImages(m, out);
  return out;
}

function addImages(msg: { role: string; content?: unknown }, out: Set<string>): void {
  if (msg.role !== 'user' || !Array.isArray(msg.content)) return;
  for (const part of msg.content as ContentPart[]) if (part.type === 'image') out.add(part.sha256);
}
