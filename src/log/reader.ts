/**
 * Reading a session log without the lock (what `proxy replay`, the CLI and a writer's open use).
 * Reads in 64 KiB chunks and splits on `\n` by byte, so offsets are exact and a huge file is never
 * one string. A torn last line (no trailing newline, or not JSON) is reported, never repaired here;
 * a bad line that is not the last is an error naming `file:line`.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { ProxyError } from '../core/errors.js';
import type { LogEvent } from '../core/events.js';
import { checkEvent, malformed, type LinePlace, type TornTail } from './log-line.js';

export interface ReadOptions {
  /** Byte offset of a line start to read from (the start tracker's point); default 0. */
  fromOffset?: number;
  /**
   * 1-based number of the line at `fromOffset`, if the caller knows it. Default: 1 at offset 0;
   * elsewhere lines are counted from 1 at the offset and error messages name byte offsets instead.
   */
  fromLine?: number;
}

export interface LogRead {
  events: LogEvent[];
  /** `offsets[i]` is the byte offset of the line holding `events[i]`. */
  offsets: number[];
  /** Byte offset just past the last complete line: where the next append goes. */
  end: number;
  torn?: TornTail;
}

const CHUNK = 64 * 1024;

export async function readLog(file: string, opts: ReadOptions = {}): Promise<LogRead> {
  const from = opts.fromOffset ?? 0;
  const lineKnown = opts.fromLine !== undefined || from === 0;
  let lineNo = opts.fromLine ?? 1;
  const fh = await openForRead(file);
  try {
    if (from > 0) await checkLineStart(fh, file, from);
    const events: LogEvent[] = [];
    const offsets: number[] = [];
    let prevSeq: number | undefined;
    // A line that failed to parse: a torn tail if nothing follows it, an error otherwise.
    let held: { place: LinePlace; detail: string; bytes: number } | undefined;
    const place = (offset: number): LinePlace => ({ file, line: lineKnown ? lineNo : undefined, offset });

    const onLine = (bytes: Buffer, offset: number): void => {
      if (held !== undefined) throw malformed(held.place, held.detail);
      let value: unknown;
      try {
        value = JSON.parse(bytes.toString('utf8'));
      } catch (err) {
        held = { place: place(offset), detail: `not valid JSON (${(err as Error).message})`, bytes: bytes.length + 1 };
        return;
      }
      const event = checkEvent(value, prevSeq, from === 0, place(offset));
      prevSeq = event.seq;
      events.push(event);
      offsets.push(offset);
    };

    const buf = Buffer.allocUnsafe(CHUNK);
    let pos = from;
    let lineStart = from;
    let parts: Buffer[] = [];
    let partsLen = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      const chunk = buf.subarray(0, bytesRead);
      let i = 0;
      while (i < bytesRead) {
        const nl = chunk.indexOf(10, i);
        if (nl === -1) {
          // The buffer is reused: keep a copy of the unfinished line.
          parts.push(Buffer.from(chunk.subarray(i)));
          partsLen += bytesRead - i;
          break;
        }
        const piece = chunk.subarray(i, nl);
        const line = parts.length === 0 ? piece : Buffer.concat([...parts, piece], partsLen + piece.length);
        onLine(line, lineStart);
        lineStart += line.length + 1;
        lineNo++;
        parts = [];
        partsLen = 0;
        i = nl + 1;
      }
    }

    const result: LogRead = { events, offsets, end: lineStart };
    const heldLine = held as { place: LinePlace; detail: string; bytes: number } | undefined;
    if (partsLen > 0) {
      if (heldLine !== undefined) throw malformed(heldLine.place, heldLine.detail);
      result.torn = { file, line: lineNo, offset: lineStart, bytes: partsLen };
    } else if (heldLine !== undefined) {
      result.torn = { file, line: lineNo - 1, offset: heldLine.place.offset, bytes: heldLine.bytes };
      result.end = heldLine.place.offset;
    }
    return result;
  } finally {
    await fh.close();
  }
}

/** The event on the line that starts at `offset` (an offset from `LogRead.offsets` or an index). */
export async function readEventAt(file: string, offset: number): Promise<LogEvent> {
  const fh = await openForRead(file);
  try {
    if (offset > 0) await checkLineStart(fh, file, offset);
    const parts: Buffer[] = [];
    const buf = Buffer.allocUnsafe(CHUNK);
    let pos = offset;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
      const place: LinePlace = { file, line: offset === 0 ? 1 : undefined, offset };
      if (bytesRead === 0) throw malformed(place, 'the line has no end (torn or past the end)');
      const chunk = buf.subarray(0, bytesRead);
      const nl = chunk.indexOf(10);
      if (nl === -1) {
        parts.push(Buffer.from(chunk));
        pos += bytesRead;
        continue;
      }
      parts.push(chunk.subarray(0, nl));
      let value: unknown;
      try {
        value = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch (err) {
        throw malformed(place, `not valid JSON (${(err as Error).message})`);
      }
      return checkEvent(value, undefined, offset === 0, place);
    }
  } finally {
    await fh.close();
  }
}

/** The event on the last complete line ending at byte `end` (a line end), if there is one. */
export async function readEventBefore(file: string, end: number): Promise<LogEvent | undefined> {
  if (end <= 0) return undefined;
  const fh = await openForRead(file);
  let start = 0;
  try {
    // Walk back from the newline at end - 1 to the previous newline, a chunk at a time.
    const buf = Buffer.allocUnsafe(4096);
    for (let to = end - 1; to > 0; ) {
      const from = Math.max(0, to - buf.length);
      await fh.read(buf, 0, to - from, from);
      const nl = buf.subarray(0, to - from).lastIndexOf(10);
      if (nl !== -1) {
        start = from + nl + 1;
        break;
      }
      to = from;
    }
  } finally {
    await fh.close();
  }
  return readEventAt(file, start);
}

async function openForRead(file: string): Promise<FileHandle> {
  try {
    return await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ProxyError('session_not_found', { session: basename(file, '.jsonl'), file });
    }
    throw err;
  }
}

/** An offset must name a line start: offset 0, or just after a newline. */
async function checkLineStart(fh: FileHandle, file: string, offset: number): Promise<void> {
  const one = Buffer.alloc(1);
  const { bytesRead } = await fh.read(one, 0, 1, offset - 1);
  if (bytesRead === 0) throw malformed({ file, line: undefined, offset }, 'the offset is past the end of the file');
  if (one[0] !== 10) throw malformed({ file, line: undefined, offset }, 'the offset is not the start of a line');
}
