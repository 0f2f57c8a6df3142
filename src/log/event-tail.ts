/**
 * What a session's writer keeps of its log in memory, whatever the store behind it: the events
 * (until the owner has folded them and lets them go), each one's byte offset, the last seq and the
 * byte end; and the one way an event body becomes a line: redacted, numbered, serialised
 * (docs/how-it-works.md, The log). Pure.
 */
import type { EventBody, LogEvent } from '../core/events.js';
import { eventLine } from './log-line.js';
import { redactDeep } from './redact.js';

export interface Added {
  /** The event as written, redacted. */
  event: LogEvent;
  /** Its line, newline included. */
  line: string;
  /** Where the line starts. */
  offset: number;
  /** The kinds redaction removed. */
  hits: string[];
}

export class EventTail {
  readonly #events: LogEvent[];
  readonly #offsets: number[];
  /** Seq of `#offsets[0]`. */
  readonly #firstSeq: number;
  #lastSeq: number;
  #end: number;
  #retain = true;

  /** `events` and `offsets` as read (and kept, not copied); `lastSeq` and `size` of the log as it stands. */
  constructor(events: LogEvent[], offsets: number[], lastSeq: number, size: number) {
    this.#events = events;
    this.#offsets = offsets;
    this.#lastSeq = lastSeq;
    this.#firstSeq = events[0]?.seq ?? lastSeq + 1;
    this.#end = size;
  }

  /** The events kept, or undefined once they were let go. */
  get events(): readonly LogEvent[] | undefined {
    return this.#retain ? this.#events : undefined;
  }

  /** Stop keeping events (the owner folded them as they came); offsets stay. */
  release(): void {
    this.#retain = false;
    this.#events.length = 0;
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Byte length of the log once every line added is written. */
  get end(): number {
    return this.#end;
  }

  offsetOf(seq: number): number | undefined {
    if (!Number.isInteger(seq)) return undefined;
    return this.#offsets[seq - this.#firstSeq];
  }

  /** The body as the next event: redacted, given the next seq and `ts`, serialised at the end. */
  add(body: EventBody, ts: string): Added {
    // An event is written once; the messages in it were remembered when they were keyed.
    const { value, hits } = redactDeep(body, false);
    const { event, line } = eventLine(value, this.#lastSeq + 1, ts);
    const offset = this.#end;
    this.#keep(event, offset, offset + Buffer.byteLength(line, 'utf8'));
    return { event, line, offset, hits };
  }

  /** Events another writer appended, read back (their offsets, and the end after them). */
  addRead(events: readonly LogEvent[], offsets: readonly number[], end: number): void {
    events.forEach((e, i) => this.#keep(e, offsets[i]!, end));
  }

  #keep(event: LogEvent, offset: number, end: number): void {
    if (this.#retain) this.#events.push(event);
    this.#offsets.push(offset);
    this.#lastSeq = event.seq;
    this.#end = end;
  }
}
