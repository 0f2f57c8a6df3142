/** The images a run of log events names (user messages' image parts), by digest: what must be stored beside them. */
import type { LogEvent } from '../core/events.js';

export function imageDigests(events: readonly LogEvent[]): Set<string> {
  const out = new Set<string>();
  for (const e of events) {
    if (e.type !== 'client.msg' || e.msg.role !== 'user' || typeof e.msg.content === 'string') continue;
    for (const part of e.msg.content) if (part.type === 'image') out.add(part.sha256);
  }
  return out;
}
