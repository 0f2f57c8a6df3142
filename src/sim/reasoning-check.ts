/**
 * Did the reasoning come back? The simulator remembers each reply it produced with thinking (by
 * its tool call ids, or its content text) and, on later requests, checks every assistant
 * message that matches one: the same text in the mode's field is `returned`, in another
 * reasoning field `wrongField`, else `missing`.
 */
import { REASONING_FIELDS, type ReasoningField } from './modes.js';
import { contentText, type WireMessage } from './request.js';
import type { ToolCallOut } from './replies.js';
import type { ReasoningCounts } from './types.js';

/** Bounds memory in long benchmark runs; the oldest replies are forgotten first. */
const MAX_REMEMBERED = 100_000;

export interface ReasoningProblem {
  index: number;
  kind: 'missing' | 'wrongField';
}

export function zeroCounts(): ReasoningCounts {
  return { expected: 0, returned: 0, missing: 0, wrongField: 0 };
}

export function addCounts(into: ReasoningCounts, add: ReasoningCounts): void {
  into.expected += add.expected;
  into.returned += add.returned;
  into.missing += add.missing;
  into.wrongField += add.wrongField;
}

export class ReasoningMemory {
  readonly #byCallId = new Map<string, string>();
  /** A content text may have been produced with different thinking by different prompts. */
  readonly #byContent = new Map<string, Set<string>>();

  remember(reply: { content: string | null; thinking: string | null; toolCalls: readonly ToolCallOut[] }): void {
    if (reply.thinking === null || reply.thinking === '') return;
    if (reply.toolCalls.length > 0) {
      for (const call of reply.toolCalls) bounded(this.#byCallId).set(call.id, reply.thinking);
    } else if (reply.content !== null) {
      const known = this.#byContent.get(reply.content) ?? new Set<string>();
      known.add(reply.thinking);
      bounded(this.#byContent).set(reply.content, known);
    }
  }

  /** `givesBack`: the message gives its reasoning back in another form the mode accepts (see ModeRules). */
  check(
    messages: readonly WireMessage[],
    backField: ReasoningField,
    givesBack?: (msg: WireMessage, thoughts: ReadonlySet<string>) => boolean,
  ): { counts: ReasoningCounts; problems: ReasoningProblem[] } {
    const counts = zeroCounts();
    const problems: ReasoningProblem[] = [];
    messages.forEach((msg, index) => {
      if (msg.role !== 'assistant') return;
      const thoughts = this.#thoughtsFor(msg);
      if (thoughts === null) return;
      counts.expected++;
      if (thoughts.has(textIn(msg, backField)) || givesBack?.(msg, thoughts) === true) {
        counts.returned++;
        return;
      }
      const elsewhere = REASONING_FIELDS.some((field) => field !== backField && thoughts.has(textIn(msg, field)));
      const kind = elsewhere ? 'wrongField' : 'missing';
      counts[kind]++;
      problems.push({ index, kind });
    });
    return { counts, problems };
  }

  clear(): void {
    this.#byCallId.clear();
    this.#byContent.clear();
  }

  #thoughtsFor(msg: WireMessage): Set<string> | null {
    if (Array.isArray(msg.tool_calls) && msg.tool_calls.length > 0) {
      for (const call of msg.tool_calls as unknown[]) {
        const id = (call as { id?: unknown } | null)?.id;
        const thinking = typeof id === 'string' ? this.#byCallId.get(id) : undefined;
        if (thinking !== undefined) return new Set([thinking]);
      }
      return null;
    }
    return this.#byContent.get(contentText(msg.content)) ?? null;
  }
}

/** A reasoning field's text; '' stands for absent (an empty thinking is never remembered). */
function textIn(msg: WireMessage, field: string): string {
  const value = msg[field];
  return typeof value === 'string' ? value : '';
}

function bounded<K, V>(map: Map<K, V>): Map<K, V> {
  if (map.size >= MAX_REMEMBERED) {
    const oldest = map.keys().next();
    if (oldest.done !== true) map.delete(oldest.value);
  }
  return map;
}
