/**
 * The client view of a session: what the client would hold if it kept everything — its own
 * messages and the content and tool calls of every reply the proxy gave it. Folded from log
 * events, so a restarted proxy rebuilds it from the log. Pure.
 */
import type { Cleared, LogEvent } from '../core/events.js';
import type { AssistantMessage, NeutralMessage, NeutralReply, ToolSpec } from '../core/types.js';
import { messageKey, chainHashes, chainStart, replyFingerprint } from './fingerprint.js';

const MAX_REPLIES = 4096;

export interface ViewEntry {
  seq: number;
  /** The message as the log holds it (redacted). */
  msg: NeutralMessage;
  /** messageKey(msg) */
  key: string;
  /** The client's own copy, once it matched this entry without being identical (see incoming.ts). */
  sent?: NeutralMessage;
  /** A reply's: the seq of the `llm.req` it answered, which its Responses ids name (response-ids.ts). */
  req?: number;
}

/** A reply as the client holds it: its text and its calls (its reasoning is kept apart, by fingerprint). */
export function viewedReply(reply: NeutralReply): AssistantMessage {
  const msg: AssistantMessage = { role: 'assistant', content: reply.content };
  if (reply.tool_calls !== undefined) msg.tool_calls = reply.tool_calls;
  return msg;
}

export class ClientView {
  /** A new array when an entry changes in place (a clearing), so a match made against the old one is not reused (incoming.ts). */
  entries: ViewEntry[] = [];
  system: string | undefined;
  tools: ToolSpec[] = [];
  /**
   * Every reply the log holds, by fingerprint (the latest wins), kept through rewrites: a client
   * that compacts its history keeps some replies, and their reasoning must go back with them.
   */
  readonly #replies = new Map<string, AssistantMessage>();
  #hashes: string[] | undefined;
  #h0: string | undefined;

  apply(event: LogEvent): void {
    switch (event.type) {
      case 'client.msg':
        if (event.head === true) {
          this.system = event.msg.role === 'system' ? event.msg.content : this.system;
          this.#invalidate();
        } else {
          if (event.cleared !== undefined) this.#clear(event.cleared);
          this.#push(event.seq, event.msg);
        }
        return;
      case 'catalog':
        this.tools = event.tools;
        this.#invalidate();
        return;
      case 'llm.resp': {
        if (event.aborted === true) return;
        const msg = viewedReply(event.reply);
        this.entries.push({ seq: event.seq, msg, key: messageKey(msg), req: event.req });
        const fp = replyFingerprint(msg);
        if (fp !== undefined) {
          this.#replies.delete(fp);
          this.#replies.set(fp, event.reply.thinking === undefined ? msg : { ...msg, thinking: event.reply.thinking });
          // Bounded: an old reply a client still echoes after this many newer ones is rare.
          if (this.#replies.size > MAX_REPLIES) this.#replies.delete(this.#replies.keys().next().value!);
        }
        return;
      }
      case 'client.rewrite': {
        const keep = this.entries.findIndex((e) => e.seq >= event.from_seq);
        if (keep >= 0) {
          this.entries.length = keep;
          if (this.#hashes !== undefined) this.#hashes.length = Math.min(this.#hashes.length, keep);
        }
        return;
      }
      default:
        return;
    }
  }

  /** h0 over the system prompt and the tool set. */
  get h0(): string {
    this.#h0 ??= chainStart(this.system, this.tools);
    return this.#h0;
  }

  /** Chain hashes h1..hn of the entries. */
  hashes(): readonly string[] {
    if (this.#hashes === undefined) this.#hashes = chainHashes(this.h0, this.entries.map((e) => e.key));
    else if (this.#hashes.length < this.entries.length) {
      const start = this.#hashes.at(-1) ?? this.h0;
      this.#hashes.push(...chainHashes(start, this.entries.slice(this.#hashes.length).map((e) => e.key)));
    }
    return this.#hashes;
  }

  /** The logged reply (content, tool calls, thinking) a client's assistant message echoes, if any. */
  replyFor(msg: NeutralMessage): AssistantMessage | undefined {
    const fp = replyFingerprint(msg);
    return fp === undefined ? undefined : this.#replies.get(fp);
  }

  /** The fingerprint of the latest reply the client was given, if any. */
  latestReply(): string | undefined {
    const i = this.#latestReplyAt();
    return i === undefined ? undefined : replyFingerprint(this.entries[i]!.msg);
  }

  /** The latest reply, and the key of the message it answered (the entry before it), if any. */
  latestReplyEntry(): { msg: NeutralMessage; prompt: string | undefined } | undefined {
    const i = this.#latestReplyAt();
    return i === undefined ? undefined : { msg: this.entries[i]!.msg, prompt: i === 0 ? undefined : this.entries[i - 1]!.key };
  }

  #latestReplyAt(): number | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (replyFingerprint(this.entries[i]!.msg) !== undefined) return i;
    }
    return undefined;
  }

  /** Tool results the client cleared: it holds them as the marker now (docs/decisions/0005-client-clearing.md). */
  #clear(cleared: readonly Cleared[]): void {
    this.entries = this.entries.slice();
    let first = this.entries.length;
    for (const { text, seqs } of cleared) {
      for (const seq of seqs) {
        const i = this.#indexOf(seq);
        const e = i === undefined ? undefined : this.entries[i]!;
        if (e?.msg.role !== 'tool') continue;
        const msg: NeutralMessage = { role: 'tool', tool_call_id: e.msg.tool_call_id, content: text };
        this.entries[i!] = { seq, msg, key: messageKey(msg) };
        first = Math.min(first, i!);
      }
    }
    if (this.#hashes !== undefined) this.#hashes.length = Math.min(this.#hashes.length, first);
  }

  /** The index of the entry with this seq (entries are in seq order). */
  #indexOf(seq: number): number | undefined {
    let lo = 0;
    let hi = this.entries.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.entries[mid]!.seq;
      if (s === seq) return mid;
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  #push(seq: number, msg: NeutralMessage): void {
    this.entries.push({ seq, msg, key: messageKey(msg) });
  }

  #invalidate(): void {
    this.#h0 = undefined;
    this.#hashes = undefined;
  }
}
