/**
 * The one byte-level decoder for upstream streams, in layers:
 *
 *   bytes --(UTF-8, streaming)--> text --(line splitter)--> lines --(SSE fields | NDJSON)--> events
 *
 * Every layer keeps its own carry-over, so a chunk may end anywhere: inside a multi-byte UTF-8
 * character, between the CR and LF of a CRLF, inside a field name. `flush()` ends the stream
 * and hands out what the carry-overs still hold.
 *
 * Both framings give the same event shape, so a dialect's stream decoder reads `data` the same way
 * whatever the framing: SSE gives one event per dispatched block, NDJSON one per non-blank line.
 */

export type Framing = 'sse' | 'ndjson';

export interface StreamEvent {
  /** SSE `event:` field of this block; null when none was given (SSE's default "message"), and always for NDJSON. */
  event: string | null;
  /** SSE: the block's `data:` lines joined with "\n". NDJSON: the line itself. */
  data: string;
  /** SSE last event ID (it persists across blocks, as the SSE spec says); null when none was ever set. */
  id: string | null;
}

export type SseEvent = StreamEvent;

export interface EventDecoder {
  push(chunk: Uint8Array): StreamEvent[];
  /** Ends the stream: the last unterminated line, and an SSE block still waiting for its blank line. */
  flush(): StreamEvent[];
}

export interface LineDecoder {
  push(chunk: Uint8Array): string[];
  flush(): string[];
}

const LF = 10;
const CR = 13;

/**
 * Bytes -> lines. Line ends are LF, CRLF or a lone CR (SSE allows all three). A CR ends its line at
 * once; an LF right after it, even in the next chunk, is then skipped, so a CRLF split across two
 * chunks gives one line end and a line is never held back waiting for the next byte. CR and LF are
 * ASCII and never part of a multi-byte UTF-8 sequence, so splitting the decoded text is safe.
 */
export function createLineDecoder(): LineDecoder {
  // fatal: false writes U+FFFD for bad bytes instead of failing the stream; the default ignoreBOM
  // (false) drops a leading byte-order mark, which SSE requires.
  const utf8 = new TextDecoder('utf-8');
  let pending = '';
  let skipLf = false;

  function split(text: string, out: string[]): void {
    let start = 0;
    if (skipLf && text.length > 0) {
      if (text.charCodeAt(0) === LF) start = 1;
      skipLf = false;
    }
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== LF && c !== CR) continue;
      out.push(pending + text.slice(start, i));
      pending = '';
      if (c === CR) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === LF) i++;
        } else {
          skipLf = true;
        }
      }
      start = i + 1;
    }
    if (start < text.length) pending += text.slice(start);
  }

  return {
    push(chunk) {
      const out: string[] = [];
      split(utf8.decode(chunk, { stream: true }), out);
      return out;
    },
    flush() {
      const out: string[] = [];
      split(utf8.decode(), out);
      if (pending.length > 0) out.push(pending);
      pending = '';
      skipLf = false;
      return out;
    },
  };
}

/** Lines -> SSE events, field by field as the WHATWG event-stream rules say. */
class SseBlock {
  private event: string | null = null;
  private data: string[] = [];
  private lastId: string | null = null;

  /** Takes one line; returns the event when the line is the blank line that dispatches one. */
  line(line: string): StreamEvent | null {
    if (line.length === 0) return this.dispatch();
    // A comment: keep-alives such as OpenRouter's ": OPENROUTER PROCESSING".
    if (line.charCodeAt(0) === 58 /* : */) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* space */) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value.length > 0 ? value : null;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        // `retry:` and unknown fields are ignored, as the spec says.
        break;
    }
    return null;
  }

  /**
   * A block without any `data:` line dispatches nothing (spec). At the end of the stream the spec
   * drops a block that never got its blank line; we dispatch it, because losing an upstream's last
   * event (often the usage) to a missing final newline costs more than reading a possibly cut one,
   * which the dialect then reports as unreadable.
   */
  dispatch(): StreamEvent | null {
    const event = this.event;
    const data = this.data;
    this.event = null;
    this.data = [];
    if (data.length === 0) return null;
    return { event, data: data.length === 1 ? (data[0] as string) : data.join('\n'), id: this.lastId };
  }
}

export function createSseDecoder(): EventDecoder {
  const lines = createLineDecoder();
  const block = new SseBlock();
  const take = (input: string[], out: StreamEvent[]): StreamEvent[] => {
    for (const line of input) {
      const ev = block.line(line);
      if (ev !== null) out.push(ev);
    }
    return out;
  };
  return {
    push: (chunk) => take(lines.push(chunk), []),
    flush() {
      const out = take(lines.flush(), []);
      const last = block.dispatch();
      if (last !== null) out.push(last);
      return out;
    },
  };
}

/** NDJSON (Ollama): one JSON value a line; blank lines are skipped. The dialect parses `data`. */
export function createNdjsonDecoder(): EventDecoder {
  const lines = createLineDecoder();
  const take = (input: string[]): StreamEvent[] => {
    const out: StreamEvent[] = [];
    for (const line of input) {
      if (line.trim().length > 0) out.push({ event: null, data: line, id: null });
    }
    return out;
  };
  return {
    push: (chunk) => take(lines.push(chunk)),
    flush: () => take(lines.flush()),
  };
}

export function createEventDecoder(framing: Framing): EventDecoder {
  return framing === 'sse' ? createSseDecoder() : createNdjsonDecoder();
}
