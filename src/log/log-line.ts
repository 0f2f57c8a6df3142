/**
 * One JSONL line of a session log: how it is written (fixed key order) and how it is checked on
 * the way back in (an object, `seq` one more than the line before, string `ts`, known `type`).
 * The check is minimal on purpose: the window owns the meaning of each event's fields.
 */
import { ProxyError } from '../core/errors.js';
import type { EventBody, EventType, LogEvent } from '../core/events.js';

/** A last line cut short by a crash: found by the reader, cut off by a writer's open. */
export interface TornTail {
  file: string;
  /** 1-based line number (counted from `fromLine`, see ReadOptions). */
  line: number;
  /** Byte offset where the torn line starts: the file's length once repaired. */
  offset: number;
  /** Bytes in the torn line. */
  bytes: number;
}

// A Record over the union: the compiler fails here if an event type is added and not listed.
const KNOWN: Record<EventType, true> = {
  'session.start': true,
  'session.resume': true,
  'client.msg': true,
  catalog: true,
  'llm.req': true,
  'llm.resp': true,
  'llm.error': true,
  'client.rewrite': true,
  'summary.add': true,
  'summary.revoke': true,
};

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && Object.hasOwn(KNOWN, value);
}

/** Serialises an event as one line: `seq`, `ts`, `type` first, then the body's own fields. */
export function eventLine(body: EventBody, seq: number, ts: string): { event: LogEvent; line: string } {
  const event = Object.assign({ seq, ts, type: body.type }, body) as LogEvent;
  // A stray seq/ts in the body must not override ours; assignment keeps their first position.
  event.seq = seq;
  event.ts = ts;
  return { event, line: JSON.stringify(event) + '\n' };
}

/** Where a line is, for error messages: `file:line`, or `file:byte N` when lines are not counted. */
export interface LinePlace {
  file: string;
  line: number | undefined;
  offset: number;
}

export function malformed(place: LinePlace, detail: string): ProxyError {
  const line = place.line ?? `byte ${place.offset}`;
  return new ProxyError('log_malformed', { file: place.file, line, detail });
}

/**
 * Checks a parsed line. `prevSeq` is the seq of the line before, or undefined when this is the
 * first line read (from offset 0 the first seq must be 1; from elsewhere any positive integer).
 */
export function checkEvent(value: unknown, prevSeq: number | undefined, fromStart: boolean, place: LinePlace): LogEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw malformed(place, 'the line is not a JSON object');
  }
  const rec = value as Record<string, unknown>;
  const seq = rec.seq;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) {
    throw malformed(place, `"seq" is ${JSON.stringify(seq) ?? 'missing'}, expected a positive integer`);
  }
  const want = prevSeq === undefined ? (fromStart ? 1 : undefined) : prevSeq + 1;
  if (want !== undefined && seq !== want) {
    throw malformed(place, `"seq" is ${seq}, expected ${want}`);
  }
  if (typeof rec.ts !== 'string') {
    throw malformed(place, `"ts" is ${JSON.stringify(rec.ts) ?? 'missing'}, expected a string`);
  }
  if (!isEventType(rec.type)) {
    throw malformed(place, `unknown event type ${JSON.stringify(rec.type) ?? '(missing)'}`);
  }
  return value as LogEvent;
}
