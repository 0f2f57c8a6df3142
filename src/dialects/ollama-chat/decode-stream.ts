/**
 * Ollama's NDJSON stream -> StreamDeltas. Each line is a ChatResponse: `message.thinking` and
 * `message.content` pieces, `message.tool_calls` as whole calls (Ollama never splits a call's
 * arguments), and a last line with `done: true`, `done_reason` and the metrics. An error after the
 * stream started is a line `{"error":"..."}` with the status still 200.
 *
 * `finish()` hands the assembled parts to `replyFromParts`, the conversion `decodeReply` uses, so a
 * streamed reply equals the same reply sent whole (call ids included: see `ollamaCallId`).
 */
import type { DialectRoute } from '../../core/route.js';
import type { NeutralReply, ToolCall } from '../../core/types.js';
import type { StreamEvent } from '../stream-decoder.js';
import type { DecodeContext, StreamDecoder, StreamDelta, UpstreamError } from '../types.js';
import { asNonEmptyString, asObject, asString, parseJson, type JsonObject } from '../wire-read.js';
import { callsFrom, errorFromText, finishReasonFrom, replyFromParts, usageFrom } from './decode-reply.js';

export function createStreamDecoder(_route: DialectRoute, ctx?: DecodeContext): StreamDecoder {
  return new OllamaStreamDecoder(ctx?.idSeed);
}

class OllamaStreamDecoder implements StreamDecoder {
  readonly framing = 'ndjson' as const;
  private readonly idSeed: string | undefined;
  private readonly content: string[] = [];
  private readonly thinking: string[] = [];
  private readonly calls: ToolCall[] = [];
  private final: JsonObject | undefined;
  private model: string | undefined;
  private errored = false;

  constructor(idSeed: string | undefined) {
    this.idSeed = idSeed;
  }

  onEvent(ev: StreamEvent): StreamDelta[] {
    const parsed = parseJson(ev.data);
    const line = parsed === undefined ? undefined : asObject(parsed.value);
    if (line === undefined) {
      const shown = ev.data.length > 200 ? `${ev.data.slice(0, 200)}...` : ev.data;
      return [this.error({ message: `The upstream sent a line that is not a JSON object: ${shown}`, code: 'upstream_bad_reply', contextOverflow: false })];
    }
    const error = asString(line.error);
    if (error !== undefined) return [this.error(errorFromText(error))];
    // After the last line nothing counts (a server that kept writing would double the reply).
    if (this.final !== undefined) return [];

    const out: StreamDelta[] = [];
    this.model = asNonEmptyString(line.model) ?? this.model;
    const message = asObject(line.message);
    if (message !== undefined) this.readMessage(message, out);
    if (line.done === true) {
      this.final = line;
      out.push({ type: 'finish', reason: finishReasonFrom(line.done_reason, this.calls.length > 0) });
      const usage = usageFrom(line);
      if (usage !== undefined) out.push({ type: 'usage', usage });
    }
    return out;
  }

  finish(): NeutralReply {
    const reply = replyFromParts({
      content: this.content.join(''),
      thinking: this.thinking.join(''),
      calls: this.calls,
      final: this.final,
      model: this.model,
    });
    if (reply.finish_reason === null && this.errored) reply.finish_reason = 'error';
    return reply;
  }

  private readMessage(message: JsonObject, out: StreamDelta[]): void {
    const thinking = asNonEmptyString(message.thinking);
    if (thinking !== undefined) {
      this.thinking.push(thinking);
      out.push({ type: 'thinking', text: thinking });
    }
    const content = asNonEmptyString(message.content);
    if (content !== undefined) {
      this.content.push(content);
      out.push({ type: 'content', text: content });
    }
    for (const call of callsFrom(message.tool_calls, this.calls.length, this.idSeed)) {
      const index = this.calls.length;
      this.calls.push(call);
      out.push({ type: 'tool_call_start', index, id: call.id, name: call.name });
      if (call.arguments.length > 0) out.push({ type: 'tool_call_args', index, text: call.arguments });
    }
  }

  private error(err: UpstreamError): StreamDelta {
    this.errored = true;
    return { type: 'error', error: err };
  }
}
