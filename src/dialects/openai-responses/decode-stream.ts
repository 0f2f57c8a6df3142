/**
 * Responses SSE events -> StreamDeltas, while assembling the output items; `finish()` hands them to
 * `replyFromOutput`, the conversion `decodeReply` uses, so a streamed reply equals the same reply
 * sent whole. An item's `response.output_item.done` holds it complete (the encrypted reasoning in
 * `output_item.added` "may be incomplete"), so a finished item is taken from there; an item cut
 * off by an error is kept as far as its deltas went, less any encrypted content.
 *
 * Deltas show text, summary text and call arguments as they come, and each kept reasoning item as
 * a block delta once it is done; summary parts are separated by
 * the blank line the whole reply joins them with. A done item whose deltas never came (a server
 * that sends only the items) is shown whole when it is done, and a terminal response whose output
 * holds items no event streamed is read as if they had been.
 */
import type { DialectRoute } from '../../core/route.js';
import type { FinishReason, NeutralReply, Usage } from '../../core/types.js';
import type { StreamEvent } from '../stream-decoder.js';
import type { StreamDecoder, StreamDelta, UpstreamError } from '../types.js';
import { asNonEmptyString, asNumber, asObject, asString, parseJson, type JsonObject } from '../wire-read.js';
import { errorOf, finishFrom, messageText, partsOfResponse, reasoningBlock, replyFromOutput, summaryTexts, THINKING_JOIN } from './decode-reply.js';

interface ItemState {
  item: JsonObject;
  done: boolean;
  text: string[];
  args: string[];
  /** summary_index -> text pieces. */
  summary: Map<number, string[]>;
  /** Position among the reply's calls, once the call was shown. */
  call: number | undefined;
}

export function createStreamDecoder(route: DialectRoute): StreamDecoder {
  return new ResponsesStreamDecoder(route);
}

class ResponsesStreamDecoder implements StreamDecoder {
  readonly framing = 'sse' as const;
  private readonly items = new Map<number, ItemState>();
  private readonly byId = new Map<string, ItemState>();
  private calls = 0;
  private thinkingShown = false;
  private status: string | undefined;
  private incompleteReason: string | undefined;
  private usage: Usage | undefined;
  private model: string | undefined;
  private errored = false;

  constructor(private readonly route: DialectRoute) {}

  onEvent(ev: StreamEvent): StreamDelta[] {
    const parsed = parseJson(ev.data);
    const data = parsed === undefined ? undefined : asObject(parsed.value);
    if (data === undefined) {
      if (ev.data.trim() === '[DONE]') return [];
      const shown = ev.data.length > 200 ? `${ev.data.slice(0, 200)}...` : ev.data;
      return [this.error({ message: `The upstream sent an event that is not JSON: ${shown}`, code: 'upstream_bad_reply', contextOverflow: false })];
    }
    const out: StreamDelta[] = [];
    const type = asString(data.type) ?? ev.event ?? '';
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
        this.model = asNonEmptyString(asObject(data.response)?.model) ?? this.model;
        break;
      case 'response.output_item.added':
        this.added(data, out);
        break;
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const state = this.stateFor(data, 'message');
        if (state !== undefined) this.text(state, asString(data.delta) ?? '', out);
        break;
      }
      case 'response.reasoning_summary_text.delta': {
        const state = this.stateFor(data, 'reasoning');
        if (state !== undefined) this.summary(state, asNumber(data.summary_index) ?? 0, asString(data.delta) ?? '', out);
        break;
      }
      case 'response.function_call_arguments.delta': {
        const state = this.stateOf(data);
        if (state !== undefined) this.args(state, asString(data.delta) ?? '', out);
        break;
      }
      case 'response.function_call_arguments.done': {
        // Arguments sent only whole (no deltas) are shown here.
        const state = this.stateOf(data);
        if (state !== undefined && state.args.length === 0) this.args(state, asString(data.arguments) ?? '', out);
        break;
      }
      case 'response.output_item.done':
        this.itemDone(data, out);
        break;
      case 'response.completed':
      case 'response.incomplete':
        this.terminal(asObject(data.response) ?? {}, out);
        break;
      case 'response.failed': {
        const resp = asObject(data.response) ?? {};
        this.usage = partsOfResponse(resp).usage ?? this.usage;
        out.push(this.error(errorOf(asObject(resp.error) ?? {}, 'The response failed.')));
        if (this.usage !== undefined) out.push({ type: 'usage', usage: this.usage });
        break;
      }
      case 'error':
        out.push(this.error(errorOf(data, 'The upstream reported an error mid-stream.')));
        break;
      default:
        // Lifecycle and part events (content_part.*, *.done, reasoning_summary_part.*) add nothing.
        break;
    }
    return out;
  }

  finish(): NeutralReply {
    const output = [...this.items.entries()].sort((a, b) => a[0] - b[0]).map(([, s]) => (s.done ? s.item : assembled(s)));
    const reply = replyFromOutput({ output, status: this.status, incompleteReason: this.incompleteReason, usage: this.usage, model: this.model }, this.route);
    if (reply.finish_reason === null && this.errored) reply.finish_reason = 'error';
    return reply;
  }

  private stateOf(data: JsonObject): ItemState | undefined {
    const index = asNumber(data.output_index);
    const id = asString(data.item_id);
    return (index === undefined ? undefined : this.items.get(index)) ?? (id === undefined ? undefined : this.byId.get(id));
  }

  /** The item's state; a delta for an item never announced opens one of the kind the delta implies. */
  private stateFor(data: JsonObject, kind: 'message' | 'reasoning'): ItemState | undefined {
    const known = this.stateOf(data);
    if (known !== undefined) return known;
    const index = asNumber(data.output_index);
    const item: JsonObject = { type: kind };
    if (typeof data.item_id === 'string') item.id = data.item_id;
    return index === undefined ? undefined : this.open(index, item);
  }

  private open(index: number, item: JsonObject): ItemState {
    const state: ItemState = { item, done: false, text: [], args: [], summary: new Map(), call: undefined };
    this.items.set(index, state);
    const id = asString(item.id);
    if (id !== undefined) this.byId.set(id, state);
    return state;
  }

  private added(data: JsonObject, out: StreamDelta[]): void {
    const item = asObject(data.item);
    if (item === undefined) return;
    const state = this.open(asNumber(data.output_index) ?? this.items.size, item);
    if (item.type === 'function_call') this.args(state, asString(item.arguments) ?? '', out);
  }

  private itemDone(data: JsonObject, out: StreamDelta[]): void {
    const item = asObject(data.item);
    if (item === undefined) return;
    const state = this.stateOf(data) ?? this.open(asNumber(data.output_index) ?? this.items.size, item);
    // What no delta showed is shown now, so the deltas add up to the finished item.
    if (item.type === 'message' && state.text.length === 0) this.text(state, messageText(item), out);
    if (item.type === 'function_call' && state.args.length === 0) this.args(state, asString(item.arguments) ?? '', out);
    if (item.type === 'reasoning' && state.summary.size === 0) summaryTexts(item).forEach((t, i) => this.summary(state, i, t, out));
    state.item = item;
    state.done = true;
    // Kept where it stood, so a Responses client gets its reasoning item in place (the block
    // finish() holds is the same: both are made by reasoningBlock).
    const block = item.type === 'reasoning' ? reasoningBlock(item, this.route, this.calls) : undefined;
    if (block !== undefined) out.push({ type: 'block', block });
  }

  private terminal(resp: JsonObject, out: StreamDelta[]): void {
    const parts = partsOfResponse(resp);
    if (this.items.size === 0) {
      parts.output.forEach((item, i) => this.itemDone({ output_index: i, item }, out));
    }
    this.status = parts.status;
    this.incompleteReason = parts.incompleteReason;
    this.model = parts.model ?? this.model;
    this.usage = parts.usage ?? this.usage;
    const reason: FinishReason | null = finishFrom(this.status, this.incompleteReason, this.calls > 0);
    if (reason !== null) out.push({ type: 'finish', reason });
    if (this.usage !== undefined) out.push({ type: 'usage', usage: this.usage });
  }

  private text(state: ItemState, delta: string, out: StreamDelta[]): void {
    if (delta.length === 0) return;
    state.text.push(delta);
    out.push({ type: 'content', text: delta });
  }

  private summary(state: ItemState, index: number, delta: string, out: StreamDelta[]): void {
    if (delta.length === 0) return;
    const pieces = state.summary.get(index);
    const first = pieces === undefined || pieces.length === 0;
    if (pieces === undefined) state.summary.set(index, [delta]);
    else pieces.push(delta);
    out.push({ type: 'thinking', text: first && this.thinkingShown ? THINKING_JOIN + delta : delta });
    this.thinkingShown = true;
  }

  /** A call is shown once its item is known; its arguments as they come. */
  private args(state: ItemState, delta: string, out: StreamDelta[]): void {
    if (state.item.type !== 'function_call') return;
    if (state.call === undefined) {
      state.call = this.calls++;
      const id = asString(state.item.call_id) ?? asString(state.item.id) ?? `call_${state.call}`;
      out.push({ type: 'tool_call_start', index: state.call, id, name: asString(state.item.name) ?? '' });
    }
    if (delta.length === 0) return;
    state.args.push(delta);
    out.push({ type: 'tool_call_args', index: state.call, text: delta });
  }

  private error(err: UpstreamError): StreamDelta {
    this.errored = true;
    return { type: 'error', error: err };
  }
}

/** An item no `output_item.done` finished, as far as its deltas went; encrypted content left out. */
function assembled(s: ItemState): JsonObject {
  const { encrypted_content: _partial, ...item } = s.item;
  if (item.type === 'message') return { ...item, content: [{ type: 'output_text', text: s.text.join('') }] };
  if (item.type === 'function_call') return { ...item, arguments: s.args.join('') };
  if (item.type === 'reasoning') {
    const summary = [...s.summary.entries()].sort((a, b) => a[0] - b[0]).map(([, t]) => ({ type: 'summary_text', text: t.join('') }));
    return { ...item, summary };
  }
  return item;
}
