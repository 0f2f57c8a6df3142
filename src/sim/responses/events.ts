/**
 * A reply as the Responses API sends it, written from OpenAI's API reference (the `Response`
 * object and the `ResponseStreamEvent` union), not from the proxy's renderer: the output items
 * (reasoning, message, function calls, in that order), the `response` object, and the stream's
 * events in the API's order: response.created, response.in_progress, then per item
 * output_item.added, its deltas and their .done events, output_item.done (the reasoning's
 * encrypted content complete only there; the added event holds a prefix of it, as the API warns),
 * then response.completed or response.incomplete. Every event repeats its `type` in its data and
 * carries `sequence_number`, counted from 0.
 */
import type { SimError } from '../errors.js';

export interface ResponseMeta {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  model: string;
}

export type Item = Record<string, unknown> & { type: string; id: string };

/** One SSE event: `event: <name>` and its JSON data. */
export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

const TEXT_PIECE = 16;
const ARGS_PIECE = 12;

/** The simulator answers stateless requests only: `store` is always false. */
export function responseObject(meta: ResponseMeta, status: string, output: Item[], usage: Record<string, unknown> | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: meta.id, object: 'response', created_at: meta.createdAt, status, error: null, incomplete_details: null,
    model: meta.model, output, usage, store: false, ...extra,
  };
}

const outputText = (text: string): Record<string, unknown> => ({ type: 'output_text', text, annotations: [] });

/** An assistant message item holding one output_text part. */
export function messageItem(id: string, text: string): Item {
  return { id, type: 'message', status: 'completed', role: 'assistant', content: [outputText(text)] };
}

/** A function_call item; `call_id` is what the function_call_output answers. */
export function functionCallItem(id: string, call: { id: string; name: string; arguments: string }): Item {
  return { id, type: 'function_call', status: 'completed', call_id: call.id, name: call.name, arguments: call.arguments };
}

/** The events of a stream; with `failure`, an `error` event after half the text, and nothing after. */
export function streamEvents(meta: ResponseMeta, output: Item[], final: Record<string, unknown>, failure: SimError | null): SseEvent[] {
  const events: SseEvent[] = [];
  const emit = (type: string, fields: Record<string, unknown>): void => {
    events.push({ event: type, data: { type, ...fields, sequence_number: events.length } });
  };
  const fail = (): SseEvent[] => {
    emit('error', { code: failure!.code, message: failure!.message, param: null });
    return events;
  };
  const start = responseObject(meta, 'in_progress', [], null);
  emit('response.created', { response: start });
  emit('response.in_progress', { response: start });
  for (const [index, item] of output.entries()) {
    const at = { item_id: item.id, output_index: index };
    if (item.type === 'reasoning') {
      const encrypted = typeof item.encrypted_content === 'string' ? { encrypted_content: item.encrypted_content.slice(0, 16) } : {};
      emit('response.output_item.added', { output_index: index, item: { id: item.id, type: 'reasoning', summary: [], ...encrypted } });
      (item.summary as { text: string }[]).forEach((part, s) => {
        const summary = { ...at, summary_index: s };
        emit('response.reasoning_summary_part.added', { ...summary, part: { type: 'summary_text', text: '' } });
        for (const piece of pieces(part.text, TEXT_PIECE)) emit('response.reasoning_summary_text.delta', { ...summary, delta: piece });
        emit('response.reasoning_summary_text.done', { ...summary, text: part.text });
        emit('response.reasoning_summary_part.done', { ...summary, part: { type: 'summary_text', text: part.text } });
      });
    } else if (item.type === 'message') {
      const text = (item.content as { text: string }[])[0]?.text ?? '';
      const content = { ...at, content_index: 0 };
      emit('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      emit('response.content_part.added', { ...content, part: outputText('') });
      const parts = pieces(text, TEXT_PIECE);
      if (failure !== null) {
        for (const piece of parts.length > 0 ? parts.slice(0, Math.ceil(parts.length / 2)) : ['Partial ']) emit('response.output_text.delta', { ...content, delta: piece });
        return fail();
      }
      for (const piece of parts) emit('response.output_text.delta', { ...content, delta: piece });
      emit('response.output_text.done', { ...content, text });
      emit('response.content_part.done', { ...content, part: outputText(text) });
    } else {
      const args = String(item.arguments);
      emit('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const piece of pieces(args, ARGS_PIECE)) emit('response.function_call_arguments.delta', { ...at, delta: piece });
      emit('response.function_call_arguments.done', { ...at, arguments: args });
    }
    emit('response.output_item.done', { output_index: index, item });
  }
  if (failure !== null) return fail();
  emit(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final });
  return events;
}

/** Splits by code points, so no piece ends inside a surrogate pair. */
function pieces(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out;
}
