/**
 * The Responses stream's events in the API's shapes (openai-node `src/resources/responses/
 * responses.ts` `ResponseStreamEvent`), numbered by `sequence_number` from 0. Two writers use it:
 * the proxy, rendering a reply for its Responses clients as the deltas come (client-render.ts), and
 * the simulator, streaming whole items as OpenAI would (src/sim/responses/events.ts).
 */

/** One SSE event: its name (the `type` again, as the API sends it) and its JSON data. */
export interface ResponsesSseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Where an item stands: its id and its index in `output`. */
export interface ItemAt {
  item_id: string;
  output_index: number;
}

export class ResponsesEventSequence {
  #next = 0;

  emit(type: string, fields: Record<string, unknown>): ResponsesSseEvent {
    return { event: type, data: { type, ...fields, sequence_number: this.#next++ } };
  }

  /** `response.created`, `.in_progress`, `.completed`, `.incomplete`, `.failed`: the response object. */
  lifecycle(type: string, response: Record<string, unknown>): ResponsesSseEvent {
    return this.emit(type, { response });
  }

  itemAdded(outputIndex: number, item: Record<string, unknown>): ResponsesSseEvent {
    return this.emit('response.output_item.added', { output_index: outputIndex, item });
  }

  itemDone(outputIndex: number, item: Record<string, unknown>): ResponsesSseEvent {
    return this.emit('response.output_item.done', { output_index: outputIndex, item });
  }

  summaryPartAdded(at: ItemAt, summaryIndex: number): ResponsesSseEvent {
    return this.emit('response.reasoning_summary_part.added', { ...at, summary_index: summaryIndex, part: { type: 'summary_text', text: '' } });
  }

  summaryDelta(at: ItemAt, summaryIndex: number, delta: string): ResponsesSseEvent {
    return this.emit('response.reasoning_summary_text.delta', { ...at, summary_index: summaryIndex, delta });
  }

  /** `reasoning_summary_text.done` and `reasoning_summary_part.done`. */
  summaryDone(at: ItemAt, summaryIndex: number, text: string): ResponsesSseEvent[] {
    return [
      this.emit('response.reasoning_summary_text.done', { ...at, summary_index: summaryIndex, text }),
      this.emit('response.reasoning_summary_part.done', { ...at, summary_index: summaryIndex, part: { type: 'summary_text', text } }),
    ];
  }

  textPartAdded(at: ItemAt): ResponsesSseEvent {
    return this.emit('response.content_part.added', { ...at, content_index: 0, part: outputTextPart('') });
  }

  textDelta(at: ItemAt, delta: string): ResponsesSseEvent {
    return this.emit('response.output_text.delta', { ...at, content_index: 0, delta });
  }

  /** `output_text.done` and `content_part.done`. */
  textDone(at: ItemAt, text: string): ResponsesSseEvent[] {
    return [
      this.emit('response.output_text.done', { ...at, content_index: 0, text }),
      this.emit('response.content_part.done', { ...at, content_index: 0, part: outputTextPart(text) }),
    ];
  }

  argsDelta(at: ItemAt, delta: string): ResponsesSseEvent {
    return this.emit('response.function_call_arguments.delta', { ...at, delta });
  }

  argsDone(at: ItemAt, args: string): ResponsesSseEvent {
    return this.emit('response.function_call_arguments.done', { ...at, arguments: args });
  }

  /** The `error` event (`ResponseErrorEvent`): code, message, param. */
  error(code: string | null, message: string, param: string | null): ResponsesSseEvent {
    return this.emit('error', { code, message, param });
  }
}

export function outputTextPart(text: string): Record<string, unknown> {
  return { type: 'output_text', annotations: [], text };
}

/** A finished message item holding one output_text part. */
export function messageItem(id: string, text: string): Record<string, unknown> & { type: string; id: string } {
  return { id, type: 'message', status: 'completed', role: 'assistant', content: [outputTextPart(text)] };
}

/** A finished function_call item. */
export function functionCallItem(id: string, call: { id: string; name: string; arguments: string }): Record<string, unknown> & { type: string; id: string } {
  return { id, type: 'function_call', status: 'completed', call_id: call.id, name: call.name, arguments: call.arguments };
}

/**
 * The `response` object: in the non-stream body and in the lifecycle events. `extra` adds fields
 * (`incomplete_details`, `error`, `previous_response_id`, ...) after the usual ones.
 */
export function responseObject(
  meta: { id: string; createdAt: number; model: string },
  status: string,
  output: unknown[],
  usage: Record<string, unknown> | null,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { id: meta.id, object: 'response', created_at: meta.createdAt, status, error: null, incomplete_details: null, model: meta.model, output, usage, ...extra };
}
