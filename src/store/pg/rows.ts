/**
 * Event rows back into events: each stored line parsed and checked as the file reader checks a
 * line (log-line.ts), its seq one more than the row before and equal to the row's own seq.
 */
import type { LogEvent } from '../../core/events.js';
import { checkEvent, malformed } from '../../log/log-line.js';

/** As the driver returns it: bigints come as strings. */
export interface EventRow {
  seq: string;
  off: string;
  line: string;
}

export interface RowsRead {
  events: LogEvent[];
  offsets: number[];
  /** Offset just past the last row's line (its newline counted); 0 without rows. */
  end: number;
}

/** `prevSeq`: the seq before the first row (0 from the start; undefined when unknown). */
export function rowsToEvents(rows: readonly EventRow[], where: string, prevSeq: number | undefined): RowsRead {
  const events: LogEvent[] = [];
  const offsets: number[] = [];
  let prev = prevSeq === 0 ? undefined : prevSeq;
  let end = 0;
  for (const row of rows) {
    const off = Number(row.off);
    const place = { file: where, line: Number(row.seq), offset: off };
    let value: unknown;
    try {
      value = JSON.parse(row.line);
    } catch (err) {
      throw malformed(place, `not valid JSON (${(err as Error).message})`);
    }
    const event = checkEvent(value, prev, prevSeq === 0, place);
    if (event.seq !== Number(row.seq)) throw malformed(place, `"seq" is ${event.seq}, stored as ${row.seq}`);
    prev = event.seq;
    events.push(event);
    offsets.push(off);
    end = off + Buffer.byteLength(row.line, 'utf8') + 1;
  }
  return { events, offsets, end };
}
