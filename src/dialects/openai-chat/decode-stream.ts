/**
 * openai-chat stream (`chat.completion.chunk` events) -> StreamDeltas, while assembling the same
 * message a non-stream reply carries; `finish()` hands that message to `replyFromMessage`, the one
 * conversion `decodeReply` uses too.
 *
 * Only the first choice is read (the proxy never asks for n > 1). Deltas are for the client to
 * watch; the log keeps `finish()`. They agree except in one corner: text read from
 * reasoning_details is shown while no reasoning text has come, and if reasoning text comes later
 * the reply keeps that text alone.
 */
import type { DialectRoute } from '../../core/route.js';
import type { FinishReason, NeutralReply, Usage } from '../../core/types.js';
import type { StreamEvent } from '../stream-decoder.js';
import type { StreamDecoder, StreamDelta, UpstreamError } from '../types.js';
import { isContextOverflow, upstreamErrorFromJson } from '../upstream-error.js';
import { asArray, asNonEmptyString, asNumber, asObject, parseJson, type JsonObject } from '../wire-read.js';
import { argumentsText, contentText, fallbackCallId, finishReasonFrom, firstChoice, replyFromMessage } from './decode-reply.js';
import { ReasoningDetailsAccumulator } from './reasoning-details.js';
import { usageFromWire } from './usage.js';

/** One tool call being assembled from its fragments. */
interface CallState {
  /** Position in the reply's tool_calls: order of first appearance. */
  position: number;
  id: string | undefined;
  name: string | undefined;
  args: string[];
  /** Argument pieces already handed out as deltas. */
  sent: number;
  /** Handed out as `tool_call_start`: id and name are fixed from then on. */
  started: boolean;
  signature: unknown;
}

export function createStreamDecoder(route: DialectRoute): StreamDecoder {
  return new ChatStreamDecoder(route);
}

class ChatStreamDecoder implements StreamDecoder {
  readonly framing = 'sse' as const;
  private readonly content: string[] = [];
  private readonly reasoning: string[] = [];
  private details: ReasoningDetailsAccumulator | undefined;
  private readonly calls: CallState[] = [];
  private readonly byIndex = new Map<number, CallState>();
  private finishReason: FinishReason | null = null;
  private errored = false;
  private usage: Usage | undefined;
  private model: string | undefined;

  constructor(private readonly route: DialectRoute) {}

  onEvent(ev: StreamEvent): StreamDelta[] {
    if (ev.event === 'error') return [this.error(this.errorFrom(ev.data))];
    if (ev.data.trim() === '[DONE]') return [];
    const parsed = parseJson(ev.data);
    if (parsed === undefined) {
      const shown = ev.data.length > 200 ? `${ev.data.slice(0, 200)}...` : ev.data;
      return [this.error({ message: `The upstream sent an event that is not JSON: ${shown}`, code: 'upstream_bad_reply', contextOverflow: false })];
    }
    const chunk = asObject(parsed.value);
    if (chunk === undefined) return [];

    const out: StreamDelta[] = [];
    // OpenRouter: `{"error":{...},"choices":[{..."finish_reason":"error"}]}`; OpenAI: `{"error":{...}}`.
    if (chunk.error !== undefined && chunk.error !== null) {
      out.push(this.error(upstreamErrorFromJson(chunk, 'The upstream reported an error mid-stream.')));
    }
    this.model = asNonEmptyString(chunk.model) ?? this.model;

    const choice = firstChoice(asArray(chunk.choices) ?? []);
    if (choice !== undefined) {
      const delta = asObject(choice.delta) ?? asObject(choice.message);
      if (delta !== undefined) this.readDelta(delta, out);
      const reason = finishReasonFrom(choice.finish_reason);
      if (reason !== null && this.finishReason === null) {
        this.finishReason = reason;
        out.push({ type: 'finish', reason });
      }
    }
    const usage = usageFromWire(chunk.usage);
    if (usage !== undefined) {
      this.usage = usage;
      out.push({ type: 'usage', usage });
    }
    return out;
  }

  finish(): NeutralReply {
    const message: JsonObject = {
      content: this.content.length > 0 ? this.content.join('') : null,
      reasoning_content: this.reasoning.length > 0 ? this.reasoning.join('') : undefined,
      reasoning_details: this.details?.items,
      tool_calls: this.calls.map((c) => ({
        id: c.id,
        function: { name: c.name ?? '', arguments: c.args.join('') },
        extra_content: c.signature === undefined ? undefined : { google: { thought_signature: c.signature } },
      })),
    };
    const finishReason = this.finishReason ?? (this.errored ? 'error' : null);
    return replyFromMessage({ message, finishReason, usage: this.usage, model: this.model }, this.route);
  }

  private readDelta(delta: JsonObject, out: StreamDelta[]): void {
    // Some servers send both fields with the same text; one of them per chunk is the reasoning.
    const reasoning = asNonEmptyString(delta.reasoning_content) ?? asNonEmptyString(delta.reasoning);
    if (reasoning !== undefined) {
      this.reasoning.push(reasoning);
      out.push({ type: 'thinking', text: reasoning });
    }
    const details = asArray(delta.reasoning_details);
    if (details !== undefined && details.length > 0) {
      this.details ??= new ReasoningDetailsAccumulator();
      const shown = this.details.add(details);
      // The details are shown as thinking only while no reasoning text came (as in replyFromMessage).
      if (shown.length > 0 && this.reasoning.length === 0) out.push({ type: 'thinking', text: shown });
    }
    const content = contentText(delta.content);
    if (content !== undefined && content.length > 0) {
      this.content.push(content);
      out.push({ type: 'content', text: content });
    }
    for (const raw of asArray(delta.tool_calls) ?? []) {
      const frag = asObject(raw);
      if (frag !== undefined) this.readToolCall(frag, out);
    }
  }

  /**
   * A fragment belongs to the call with its `index`; without one (some servers), to the call with
   * its id, else to the last call. A call starts once its name is known; arguments that came
   * before are handed out right after its start.
   */
  private readToolCall(frag: JsonObject, out: StreamDelta[]): void {
    const call = this.callFor(frag);
    const fn = asObject(frag.function);
    if (!call.started) {
      call.id = asNonEmptyString(frag.id) ?? call.id;
      call.name = asNonEmptyString(fn?.name) ?? call.name;
    }
    if (fn !== undefined && fn.arguments !== undefined && fn.arguments !== null) {
      const piece = argumentsText(fn.arguments);
      if (piece.length > 0) call.args.push(piece);
    }
    const signature = asObject(asObject(frag.extra_content)?.google)?.thought_signature;
    if (signature !== undefined && signature !== null) call.signature = signature;

    if (!call.started && call.name !== undefined) {
      call.started = true;
      call.id ??= fallbackCallId(call.position);
      out.push({ type: 'tool_call_start', index: call.position, id: call.id, name: call.name });
    }
    if (call.started && call.sent < call.args.length) {
      out.push({ type: 'tool_call_args', index: call.position, text: call.args.slice(call.sent).join('') });
      call.sent = call.args.length;
    }
  }

  private callFor(frag: JsonObject): CallState {
    const index = asNumber(frag.index);
    if (index !== undefined) {
      const known = this.byIndex.get(index);
      if (known !== undefined) return known;
      const call = this.open();
      this.byIndex.set(index, call);
      return call;
    }
    const id = asNonEmptyString(frag.id);
    if (id !== undefined) return this.calls.find((c) => c.id === id) ?? this.open();
    return this.calls[this.calls.length - 1] ?? this.open();
  }

  private open(): CallState {
    const call: CallState = { position: this.calls.length, id: undefined, name: undefined, args: [], sent: 0, started: false, signature: undefined };
    this.calls.push(call);
    return call;
  }

  private errorFrom(data: string): UpstreamError {
    const parsed = parseJson(data);
    const fallback = data.trim().length > 0 ? data.trim().slice(0, 2000) : 'The upstream reported an error mid-stream.';
    return parsed === undefined ? { message: fallback, contextOverflow: isContextOverflow(fallback) } : upstreamErrorFromJson(parsed.value, fallback);
  }

  private error(err: UpstreamError): StreamDelta {
    this.errored = true;
    return { type: 'error', error: err };
  }
}
