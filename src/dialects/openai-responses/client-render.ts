/**
 * What the proxy answers its Responses clients (Codex, the SDK's `responses.create`): a NeutralReply
 * as a `response` object, and StreamDeltas as the API's events, in its order (wire-formats.md §2):
 * response.created, response.in_progress, per item output_item.added, its part and delta events and
 * their .done events, output_item.done, then response.completed (or .incomplete) with usage.
 *
 * Reasoning shows as a reasoning item whose summary is the thinking text, whatever wire made it.
 * Its `encrypted_content` is sent only when the client asked for it (`include`) and the item came
 * from a Responses upstream as such (a `responses.reasoning` block): the exact bytes that upstream
 * gave, which only it can read. The client's echo of it is ignored; the log's copy goes upstream.
 * A failure after the stream started is an `error` event, then `response.failed` whose
 * `response.error.code` Codex reads (`context_length_exceeded`, ...).
 */
import type { ProxyError } from '../../core/errors.js';
import type { FinishReason, NeutralReply, OpaqueBlock, Usage } from '../../core/types.js';
import type { StreamDelta } from '../types.js';
import { asArray, asObject, asString } from '../wire-read.js';
import { THINKING_JOIN } from './decode-reply.js';
import { itemIdOf } from './response-ids.js';
import { functionCallItem, messageItem, responseObject, ResponsesEventSequence, type ResponsesSseEvent } from './stream-events.js';

export interface ResponseMeta {
  id: string;
  /** The client asked for its conversation compacted: the reply is one compaction item (compaction.ts). */
  compaction: boolean;
  createdAt: number;
  model: string;
  /** Send `encrypted_content` on reasoning items (the client's `include`). */
  opaqueReasoning: boolean;
  /** Echoed as the response's `previous_response_id`. */
  previousResponseId: string | null;
}

type Item = Record<string, unknown>;

/** Every count the API types as required, an unknown one as 0 (the log keeps it unknown). */
export function renderUsage(usage: Usage | undefined): Record<string, unknown> {
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  const inputDetails: Record<string, number> = { cached_tokens: usage?.cached_tokens ?? 0 };
  if (usage?.cache_write_tokens !== undefined) inputDetails.cache_write_tokens = usage.cache_write_tokens;
  return {
    input_tokens: input,
    input_tokens_details: inputDetails,
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
  };
}

/** `length` and `content_filter` end a response as incomplete, with the API's reason; the rest complete it. */
function ending(reason: FinishReason | null): { status: 'completed' | 'incomplete'; extra: Item } {
  if (reason === 'length') return { status: 'incomplete', extra: { incomplete_details: { reason: 'max_output_tokens' } } };
  if (reason === 'content_filter') return { status: 'incomplete', extra: { incomplete_details: { reason: 'content_filter' } } };
  return { status: 'completed', extra: {} };
}

/** The `response` object as this wire's clients get it, with the `previous_response_id` they sent. */
export function clientResponse(meta: ResponseMeta, status: string, output: Item[], usage: Item | null, extra: Item = {}): Item {
  return responseObject(meta, status, output, usage, { previous_response_id: meta.previousResponseId, ...extra });
}

function reasoningItem(id: string, text: string, block: OpaqueBlock | undefined, meta: ResponseMeta): Item {
  const data = asObject(block?.data);
  const summary = data !== undefined ? asArray(data.summary) ?? [] : text === '' ? [] : [{ type: 'summary_text', text }];
  const item: Item = { id, type: 'reasoning', summary };
  const encrypted = asString(data?.encrypted_content);
  if (meta.opaqueReasoning && encrypted !== undefined) item.encrypted_content = encrypted;
  return item;
}

/** The reply's items in the order a stream of it shows them: reasoning, text, calls (blocks where they stood). */
export function renderOutput(reply: NeutralReply, meta: ResponseMeta): Item[] {
  const out: Item[] = [];
  const calls = reply.tool_calls ?? [];
  const blocks = (reply.blocks ?? []).filter((b) => b.kind === 'responses.reasoning');
  const reasoningAt = (i: number): void => {
    for (const b of blocks) if (Math.min(b.before_call ?? 0, calls.length) === i) out.push(reasoningItem(itemIdOf(meta.id, 'rs', out.length), '', b, meta));
  };
  if (blocks.length === 0 && reply.thinking !== undefined && reply.thinking !== '') out.push(reasoningItem(itemIdOf(meta.id, 'rs', 0), reply.thinking, undefined, meta));
  reasoningAt(0);
  if (reply.content !== null) out.push(messageItem(itemIdOf(meta.id, 'msg', out.length), reply.content));
  calls.forEach((c, i) => {
    if (i > 0) reasoningAt(i);
    out.push(functionCallItem(itemIdOf(meta.id, 'fc', out.length), c));
  });
  if (calls.length > 0) reasoningAt(calls.length);
  return out;
}

export function renderResponse(reply: NeutralReply, meta: ResponseMeta): Item {
  const end = ending(reply.finish_reason);
  return clientResponse(meta, end.status, renderOutput(reply, meta), renderUsage(reply.usage), end.extra);
}

interface OpenItem {
  kind: 'reasoning' | 'message' | 'call';
  index: number;
  id: string;
  text: string;
  /** A call's position among the reply's calls, its id and name. */
  call?: { index: number; id: string; name: string };
  block?: OpaqueBlock;
}

export interface EventRenderer {
  delta(delta: StreamDelta): ResponsesSseEvent[];
  end(final: NeutralReply): ResponsesSseEvent[];
  error(err: ProxyError): ResponsesSseEvent[];
}

/**
 * One item is open at a time, except calls: every call stays open until something else comes or
 * the reply ends, so arguments may come for any of them (deltas name their call by index).
 */
export function createEventRenderer(meta: ResponseMeta): EventRenderer {
  const seq = new ResponsesEventSequence();
  const done: Item[] = [];
  let open: OpenItem[] = [];
  let started = false;
  let usage: Usage | undefined;
  let finish: FinishReason | null = null;

  const preamble = (out: ResponsesSseEvent[]): void => {
    if (started) return;
    started = true;
    const start = clientResponse(meta, 'in_progress', [], null);
    out.push(seq.lifecycle('response.created', start), seq.lifecycle('response.in_progress', start));
  };
  const at = (item: OpenItem) => ({ item_id: item.id, output_index: item.index });
  const close = (out: ResponsesSseEvent[]): void => {
    for (const item of open) {
      let finished: Item;
      if (item.kind === 'reasoning') {
        if (item.text !== '') out.push(...seq.summaryDone(at(item), 0, item.text));
        finished = reasoningItem(item.id, item.text, undefined, meta);
        const encrypted = asString(asObject(item.block?.data)?.encrypted_content);
        if (meta.opaqueReasoning && encrypted !== undefined) finished.encrypted_content = encrypted;
      } else if (item.kind === 'message') {
        out.push(...seq.textDone(at(item), item.text));
        finished = messageItem(item.id, item.text);
      } else {
        out.push(seq.argsDone(at(item), item.text));
        finished = functionCallItem(item.id, { id: item.call!.id, name: item.call!.name, arguments: item.text });
      }
      done[item.index] = finished;
      out.push(seq.itemDone(item.index, finished));
    }
    open = [];
  };
  const begin = (out: ResponsesSseEvent[], kind: OpenItem['kind'], added: (id: string) => Item, call?: OpenItem['call']): OpenItem => {
    const index = done.length + open.length;
    const id = itemIdOf(meta.id, kind === 'reasoning' ? 'rs' : kind === 'message' ? 'msg' : 'fc', index);
    const item: OpenItem = { kind, index, id, text: '', ...(call === undefined ? {} : { call }) };
    open.push(item);
    out.push(seq.itemAdded(index, added(id)));
    return item;
  };
  /** The one open item of this kind, or a new one after closing what was open. */
  const single = (out: ResponsesSseEvent[], kind: 'reasoning' | 'message'): OpenItem => {
    const only = open.length === 1 && open[0]!.kind === kind ? open[0]! : undefined;
    if (only !== undefined) return only;
    close(out);
    if (kind === 'reasoning') {
      const item = begin(out, kind, (id) => ({ id, type: 'reasoning', summary: [] }));
      out.push(seq.summaryPartAdded(at(item), 0));
      return item;
    }
    const item = begin(out, kind, (id) => ({ id, type: 'message', status: 'in_progress', role: 'assistant', content: [] }));
    out.push(seq.textPartAdded(at(item)));
    return item;
  };

  return {
    delta(d) {
      const out: ResponsesSseEvent[] = [];
      preamble(out);
      switch (d.type) {
        case 'thinking': {
          const fresh = !(open.length === 1 && open[0]!.kind === 'reasoning');
          const item = single(out, 'reasoning');
          // The blank line the decoder puts between two reasoning items' summaries: here the
          // items themselves are apart, and a reader of them puts it back.
          const after = fresh && done.some((x) => x?.type === 'reasoning');
          const text = after && d.text.startsWith(THINKING_JOIN) ? d.text.slice(THINKING_JOIN.length) : d.text;
          if (text === '') break;
          item.text += text;
          out.push(seq.summaryDelta(at(item), 0, text));
          break;
        }
        case 'content': {
          const item = single(out, 'message');
          item.text += d.text;
          out.push(seq.textDelta(at(item), d.text));
          break;
        }
        case 'tool_call_start':
          if (open.some((o) => o.kind !== 'call')) close(out);
          begin(out, 'call', (id) => ({ id, type: 'function_call', status: 'in_progress', call_id: d.id, name: d.name, arguments: '' }), { index: d.index, id: d.id, name: d.name });
          break;
        case 'tool_call_args': {
          const item = open.find((o) => o.call?.index === d.index);
          if (item === undefined) break;
          item.text += d.text;
          out.push(seq.argsDelta(at(item), d.text));
          break;
        }
        case 'block': {
          // A Responses upstream's reasoning item is done: it closes the reasoning shown for it.
          if (d.block.kind !== 'responses.reasoning') break;
          const item = open.length === 1 && open[0]!.kind === 'reasoning' ? open[0]! : undefined;
          if (item !== undefined) {
            item.block = d.block;
            close(out);
          } else if (meta.opaqueReasoning) {
            // An item with no summary to show: sent for its encrypted content alone.
            close(out);
            begin(out, 'reasoning', (id) => ({ id, type: 'reasoning', summary: [] })).block = d.block;
            close(out);
          }
          break;
        }
        case 'finish':
          finish = d.reason;
          break;
        case 'usage':
          usage = d.usage;
          break;
        case 'error':
          // Written by error() once the proxy has logged it.
          break;
      }
      return out;
    },
    end(final) {
      const out: ResponsesSseEvent[] = [];
      preamble(out);
      close(out);
      const end = ending(final.finish_reason ?? finish);
      const type = end.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
      out.push(seq.lifecycle(type, clientResponse(meta, end.status, done, renderUsage(final.usage ?? usage), end.extra)));
      return out;
    },
    error(err) {
      const out: ResponsesSseEvent[] = [];
      preamble(out);
      out.push(seq.error(err.code, err.message, err.param));
      const failed = clientResponse(meta, 'failed', done.filter((x) => x !== undefined), usage === undefined ? null : renderUsage(usage), { error: { code: err.code, message: err.message } });
      out.push(seq.lifecycle('response.failed', failed));
      return out;
    },
  };
}
