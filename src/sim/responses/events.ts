/**
 * A reply as the Responses API sends it: the output items (reasoning, message, function calls, in
 * that order), the `response` object, and the stream's events in the API's order:
 * response.created, response.in_progress, then per item output_item.added, its deltas and their
 * .done events, output_item.done (the reasoning's encrypted content complete only there; the added
 * event holds a prefix of it, as the API warns), then response.completed or response.incomplete.
 * The events' shapes are the dialect's (src/dialects/openai-responses/stream-events.ts), which the
 * proxy streams to its own Responses clients too.
 */
import { responseObject as dialectResponse, ResponsesEventSequence, type ResponsesSseEvent } from '../../dialects/openai-responses/stream-events.js';
import type { SimError } from '../errors.js';

export interface ResponseMeta {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  model: string;
}

export type Item = Record<string, unknown> & { type: string; id: string };

export type SseEvent = ResponsesSseEvent;

const TEXT_PIECE = 16;
const ARGS_PIECE = 12;

/** The simulator answers stateless requests only: `store` is always false. */
export function responseObject(meta: ResponseMeta, status: string, output: Item[], usage: Record<string, unknown> | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return dialectResponse(meta, status, output, usage, { store: false, ...extra });
}

/** The events of a stream; with `failure`, an `error` event after half the text, and nothing after. */
export function streamEvents(meta: ResponseMeta, output: Item[], final: Record<string, unknown>, failure: SimError | null): SseEvent[] {
  const seq = new ResponsesEventSequence();
  const events: SseEvent[] = [];
  const start = responseObject(meta, 'in_progress', [], null);
  events.push(seq.lifecycle('response.created', start), seq.lifecycle('response.in_progress', start));
  for (const [index, item] of output.entries()) {
    const at = { item_id: item.id, output_index: index };
    if (item.type === 'reasoning') {
      const encrypted = typeof item.encrypted_content === 'string' ? item.encrypted_content.slice(0, 16) : undefined;
      events.push(seq.itemAdded(index, { id: item.id, type: 'reasoning', summary: [], ...(encrypted === undefined ? {} : { encrypted_content: encrypted }) }));
      (item.summary as { text: string }[]).forEach((part, s) => {
        events.push(seq.summaryPartAdded(at, s));
        for (const piece of pieces(part.text, TEXT_PIECE)) events.push(seq.summaryDelta(at, s, piece));
        events.push(...seq.summaryDone(at, s, part.text));
      });
    } else if (item.type === 'message') {
      const text = (item.content as { text: string }[])[0]?.text ?? '';
      events.push(seq.itemAdded(index, { ...item, status: 'in_progress', content: [] }), seq.textPartAdded(at));
      const parts = pieces(text, TEXT_PIECE);
      if (failure !== null) {
        for (const piece of parts.length > 0 ? parts.slice(0, Math.ceil(parts.length / 2)) : ['Partial ']) events.push(seq.textDelta(at, piece));
        events.push(seq.error(failure.code, failure.message, null));
        return events;
      }
      for (const piece of parts) events.push(seq.textDelta(at, piece));
      events.push(...seq.textDone(at, text));
    } else {
      const args = String(item.arguments);
      events.push(seq.itemAdded(index, { ...item, status: 'in_progress', arguments: '' }));
      for (const piece of pieces(args, ARGS_PIECE)) events.push(seq.argsDelta(at, piece));
      events.push(seq.argsDone(at, args));
    }
    events.push(seq.itemDone(index, item));
  }
  if (failure !== null) {
    events.push(seq.error(failure.code, failure.message, null));
    return events;
  }
  events.push(seq.lifecycle(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', final));
  return events;
}

/** Splits by code points, so no piece ends inside a surrogate pair. */
function pieces(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out;
}
