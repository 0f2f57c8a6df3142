/**
 * Messages SSE events -> StreamDeltas, while assembling the content array a non-stream reply
 * carries; `finish()` hands it to `replyFromContent`, the one conversion `decodeReply` uses too.
 *
 * Events are read by their data's `type` (the `event:` line names the same): `message_start`
 * (model, first usage), `content_block_start/delta/stop` (text, thinking, signature and tool input
 * deltas), `message_delta` (stop reason, cumulative usage), `message_stop`, `ping`, `error`.
 *
 * A thinking block is handed out whole (signature and all) at its `content_block_stop`, for a client
 * of this same wire. A tool call's arguments are handed out whole at its `content_block_stop` (or when the stream
 * breaks off): the streamed JSON text has the model's spacing, the non-stream `input` is an object,
 * and both must give the same arguments text, so the text is parsed and serialised once.
 */
import type { DialectRoute } from '../../core/route.js';
import type { FinishReason, NeutralReply } from '../../core/types.js';
import type { StreamEvent } from '../stream-decoder.js';
import type { StreamDecoder, StreamDelta, UpstreamError } from '../types.js';
import { isContextOverflow, upstreamErrorFromJson } from '../upstream-error.js';
import { asNonEmptyString, asNumber, asObject, asString, parseJson, type JsonObject } from '../wire-read.js';
import { argumentsText, droppedBlocks, finishReasonFrom, replyFromContent, THINKING_SEPARATOR } from './decode-reply.js';
import { mergeUsage, usageFromWire } from './usage.js';

/** One content block being assembled. */
interface BlockState {
  block: JsonObject;
  /** tool_use: position among the reply's calls, its input text so far, whether its args went out. */
  call?: { position: number; json: string[]; sent: boolean };
  /** thinking: some of its text was shown. */
  shown: boolean;
}

export function createStreamDecoder(route: DialectRoute): StreamDecoder {
  return new MessagesStreamDecoder(route);
}

class MessagesStreamDecoder implements StreamDecoder {
  readonly framing = 'sse' as const;
  private readonly blocks = new Map<number, BlockState>();
  private calls = 0;
  private thinkingShown = false;
  private readonly usage: JsonObject = {};
  private hasUsage = false;
  private finishReason: FinishReason | null = null;
  private errored = false;
  private model: string | undefined;
  private dropped: number | undefined;

  constructor(private readonly route: DialectRoute) {}

  onEvent(ev: StreamEvent): StreamDelta[] {
    const parsed = parseJson(ev.data);
    if (parsed === undefined) {
      if (ev.event === 'error') return [...this.flushCalls(), this.error(this.textError(ev.data))];
      const shown = ev.data.length > 200 ? `${ev.data.slice(0, 200)}...` : ev.data;
      return [this.error({ message: `The upstream sent an event that is not JSON: ${shown}`, code: 'upstream_bad_reply', contextOverflow: false })];
    }
    const data = asObject(parsed.value);
    if (data === undefined) return [];
    const out: StreamDelta[] = [];
    switch (asString(data.type) ?? ev.event) {
      case 'message_start': {
        const message = asObject(data.message);
        this.model = asNonEmptyString(message?.model) ?? this.model;
        this.dropped = droppedBlocks(message?.input_transformations) ?? this.dropped;
        this.readUsage(message?.usage, out);
        break;
      }
      case 'content_block_start':
        this.start(asNumber(data.index), asObject(data.content_block), out);
        break;
      case 'content_block_delta':
        this.delta(asNumber(data.index), asObject(data.delta), out);
        break;
      case 'content_block_stop': {
        const state = this.blocks.get(asNumber(data.index) ?? -1);
        if (state !== undefined) this.sendArgs(state, out);
        if (state !== undefined) this.sendOpaque(state, out);
        break;
      }
      case 'message_delta': {
        out.push(...this.flushCalls());
        const reason = finishReasonFrom(asObject(data.delta)?.stop_reason);
        if (reason !== null && this.finishReason === null) {
          this.finishReason = reason;
          out.push({ type: 'finish', reason });
        }
        this.readUsage(data.usage, out);
        break;
      }
      case 'error':
        out.push(...this.flushCalls(), this.error(upstreamErrorFromJson(data, 'The upstream reported an error mid-stream.')));
        break;
      default:
        // message_stop, ping, and event types added later.
        break;
    }
    return out;
  }

  finish(): NeutralReply {
    const content = [...this.blocks.entries()].sort((a, b) => a[0] - b[0]).map(([, state]) => this.finalBlock(state));
    return replyFromContent(
      {
        content,
        finishReason: this.finishReason ?? (this.errored ? 'error' : null),
        usage: this.hasUsage ? usageFromWire(this.usage) : undefined,
        model: this.model,
        ...(this.dropped === undefined ? {} : { dropped: this.dropped }),
      },
      this.route,
    );
  }

  private start(index: number | undefined, block: JsonObject | undefined, out: StreamDelta[]): void {
    if (index === undefined || block === undefined) return;
    const state: BlockState = { block: { ...block }, shown: false };
    this.blocks.set(index, state);
    if (block.type === 'tool_use') {
      state.call = { position: this.calls++, json: [], sent: false };
      out.push({ type: 'tool_call_start', index: state.call.position, id: asString(block.id) ?? `toolu_${state.call.position}`, name: asString(block.name) ?? '' });
    } else if (block.type === 'text') {
      const text = asNonEmptyString(block.text);
      if (text !== undefined) out.push({ type: 'content', text });
    } else if (block.type === 'thinking') {
      this.showThinking(state, asString(block.thinking), out);
    }
  }

  private delta(index: number | undefined, delta: JsonObject | undefined, out: StreamDelta[]): void {
    const state = this.blocks.get(index ?? -1);
    if (state === undefined || delta === undefined) return;
    const b = state.block;
    switch (delta.type) {
      case 'text_delta': {
        const text = asString(delta.text) ?? '';
        b.text = (asString(b.text) ?? '') + text;
        if (text.length > 0) out.push({ type: 'content', text });
        break;
      }
      case 'thinking_delta': {
        const text = asString(delta.thinking) ?? '';
        b.thinking = (asString(b.thinking) ?? '') + text;
        this.showThinking(state, text, out);
        break;
      }
      case 'signature_delta':
        b.signature = (asString(b.signature) ?? '') + (asString(delta.signature) ?? '');
        break;
      case 'input_json_delta':
        state.call?.json.push(asString(delta.partial_json) ?? '');
        break;
      default:
        // citations_delta and later additions.
        break;
    }
  }

  /** The first shown text of a thinking block after an earlier one's is set off by a blank line. */
  private showThinking(state: BlockState, text: string | undefined, out: StreamDelta[]): void {
    if (text === undefined || text.length === 0) return;
    if (!state.shown && this.thinkingShown) out.push({ type: 'thinking', text: THINKING_SEPARATOR });
    state.shown = true;
    this.thinkingShown = true;
    out.push({ type: 'thinking', text });
  }

  /** A tool_use block with its `input` as the streamed JSON gave it (parsed when it parses). */
  private finalBlock(state: BlockState): JsonObject {
    if (state.call === undefined) return state.block;
    const json = state.call.json.join('');
    if (json.trim().length === 0) return state.block;
    const parsed = parseJson(json);
    return { ...state.block, input: parsed === undefined ? json : parsed.value };
  }

  private sendArgs(state: BlockState, out: StreamDelta[]): void {
    if (state.call === undefined || state.call.sent) return;
    state.call.sent = true;
    const text = argumentsText(this.finalBlock(state).input);
    if (text.length > 0) out.push({ type: 'tool_call_args', index: state.call.position, text });
  }

  /** A thinking or redacted_thinking block, whole (its signature arrives just before its stop), as `replyFromContent` keeps it. */
  private sendOpaque(state: BlockState, out: StreamDelta[]): void {
    const type = state.block.type;
    if (type !== 'thinking' && type !== 'redacted_thinking') return;
    const origin = { provider: this.route.provider, model: this.route.model };
    const kind = type === 'thinking' ? 'anthropic.thinking' : 'anthropic.redacted_thinking';
    out.push({ type: 'block', block: { kind, origin, data: { ...state.block }, before_call: this.calls } });
  }

  /** Calls whose block never stopped (a stream that ended or broke early) hand out what they have. */
  private flushCalls(): StreamDelta[] {
    const out: StreamDelta[] = [];
    for (const state of this.blocks.values()) this.sendArgs(state, out);
    return out;
  }

  private readUsage(raw: unknown, out: StreamDelta[]): void {
    if (!mergeUsage(this.usage, raw)) return;
    this.hasUsage = true;
    const usage = usageFromWire(this.usage);
    if (usage !== undefined) out.push({ type: 'usage', usage });
  }

  private textError(data: string): UpstreamError {
    const message = data.trim().length > 0 ? data.trim().slice(0, 2000) : 'The upstream reported an error mid-stream.';
    return { message, contextOverflow: isContextOverflow(message) };
  }

  private error(err: UpstreamError): StreamDelta {
    this.errored = true;
    return { type: 'error', error: err };
  }
}
