/**
 * Gemini's SSE stream -> StreamDeltas. Every `data:` is a whole `GenerateContentResponse` holding
 * the parts new since the last: thought summaries (`thought: true`), text, and whole function calls
 * (Gemini never splits a call's arguments); the last carries `finishReason` and `usageMetadata`. An
 * error after the stream started is a `data:` holding `{"error":{code,message,status}}`.
 *
 * `ReplyAssembler` is the one reading of a response: the stream feeds it each chunk, and
 * `decodeReply` the whole body, so a streamed reply equals the same reply sent whole (call ids
 * included: see `geminiCallId`).
 */
import { canonicalDigest } from '../../core/canonical.js';
import type { DialectRoute } from '../../core/route.js';
import type { FinishReason, NeutralReply, OpaqueBlock, ToolCall, Usage } from '../../core/types.js';
import type { StreamEvent } from '../stream-decoder.js';
import type { DecodeContext, StreamDecoder, StreamDelta, UpstreamError } from '../types.js';
import { upstreamErrorFromJson } from '../upstream-error.js';
import { asArray, asNonEmptyString, asObject, asString, parseJson, type JsonObject } from '../wire-read.js';
import { signatureBlock, type SignedPart } from './signatures.js';
import { usageFrom } from './usage.js';

/**
 * A call Gemini did not name gets `call_<position>_<12 hex of the digest of the request's id seed,
 * its name and arguments>`: the same for the stream and the whole reply, new for a call repeated in
 * a later reply, the same for an identical retry (as ollama-chat names its calls).
 */
export function geminiCallId(position: number, name: string, args: unknown, seed: string | undefined): string {
  const what = seed === undefined ? { name, args: args ?? null } : { seed, name, args: args ?? null };
  return `call_${position}_${canonicalDigest(what).slice(0, 12)}`;
}

/** Gemini's finish reasons in the neutral ones; a reply that calls a function ends STOP on Gemini. */
export function finishReasonFrom(raw: unknown, hasCalls: boolean): FinishReason {
  const r = asString(raw);
  if (r === 'MAX_TOKENS') return 'length';
  if (r === 'SAFETY' || r === 'RECITATION' || r === 'BLOCKLIST' || r === 'PROHIBITED_CONTENT' || r === 'SPII' || r === 'IMAGE_SAFETY') return 'content_filter';
  if (r === 'MALFORMED_FUNCTION_CALL' || r === 'UNEXPECTED_TOOL_CALL' || r === 'OTHER') return 'error';
  return hasCalls ? 'tool_calls' : 'stop';
}

export class ReplyAssembler {
  private readonly content: string[] = [];
  private readonly thinking: string[] = [];
  private readonly calls: ToolCall[] = [];
  private readonly blocks: OpaqueBlock[] = [];
  private finishRaw: unknown;
  private finished = false;
  private usage: Usage | undefined;
  private model: string | undefined;

  constructor(private readonly route: DialectRoute, private readonly seed: string | undefined) {}

  /** One response object (a chunk, or the whole reply) -> the deltas it adds. */
  read(chunk: JsonObject): StreamDelta[] {
    const out: StreamDelta[] = [];
    this.model = asNonEmptyString(chunk.modelVersion) ?? this.model;
    const candidate = asObject(asArray(chunk.candidates)?.[0]);
    const parts = asArray(asObject(candidate?.content)?.parts) ?? [];
    for (const raw of parts) {
      const part = asObject(raw);
      if (part !== undefined) this.readPart(part, out);
    }
    if (candidate?.finishReason !== undefined && !this.finished) {
      this.finished = true;
      this.finishRaw = candidate.finishReason;
      out.push({ type: 'finish', reason: finishReasonFrom(candidate.finishReason, this.calls.length > 0) });
    }
    const usage = usageFrom(chunk.usageMetadata);
    if (usage !== undefined) {
      this.usage = usage;
      out.push({ type: 'usage', usage });
    }
    return out;
  }

  private readPart(part: JsonObject, out: StreamDelta[]): void {
    const signature = asNonEmptyString(part.thoughtSignature);
    const sign = (on: SignedPart): void => {
      if (signature === undefined) return;
      const block = signatureBlock({ provider: this.route.provider, model: this.route.model }, on, signature, this.calls.length);
      this.blocks.push(block);
      out.push({ type: 'block', block });
    };
    const call = asObject(part.functionCall);
    if (call !== undefined) {
      const index = this.calls.length;
      const name = asString(call.name) ?? '';
      const args = asObject(call.args) ?? {};
      const id = asNonEmptyString(call.id) ?? geminiCallId(index, name, args, this.seed);
      const text = JSON.stringify(args);
      sign('call');
      this.calls.push({ id, name, arguments: text });
      out.push({ type: 'tool_call_start', index, id, name }, { type: 'tool_call_args', index, text });
      return;
    }
    const text = asString(part.text);
    if (text === undefined) return;
    if (part.thought === true) {
      if (text !== '') {
        this.thinking.push(text);
        out.push({ type: 'thinking', text });
      }
      sign('thought');
    } else {
      if (text !== '') {
        this.content.push(text);
        out.push({ type: 'content', text });
      }
      sign('text');
    }
  }

  reply(): NeutralReply {
    const content = this.content.join('');
    const reply: NeutralReply = {
      content: content === '' && this.calls.length > 0 ? null : content,
      finish_reason: this.finished ? finishReasonFrom(this.finishRaw, this.calls.length > 0) : null,
    };
    const thinking = this.thinking.join('');
    if (thinking !== '') reply.thinking = thinking;
    if (this.blocks.length > 0) reply.blocks = [...this.blocks];
    if (this.calls.length > 0) reply.tool_calls = [...this.calls];
    if (this.usage !== undefined) reply.usage = this.usage;
    if (this.model !== undefined) reply.model = this.model;
    return reply;
  }
}

export function createStreamDecoder(route: DialectRoute, ctx?: DecodeContext): StreamDecoder {
  return new GeminiStreamDecoder(route, ctx?.idSeed);
}

class GeminiStreamDecoder implements StreamDecoder {
  readonly framing = 'sse' as const;
  private readonly assembler: ReplyAssembler;
  private errored = false;

  constructor(route: DialectRoute, seed: string | undefined) {
    this.assembler = new ReplyAssembler(route, seed);
  }

  onEvent(ev: StreamEvent): StreamDelta[] {
    if (ev.data === '' || ev.data === '[DONE]') return [];
    const parsed = parseJson(ev.data);
    const chunk = parsed === undefined ? undefined : asObject(parsed.value);
    if (chunk === undefined) {
      const shown = ev.data.length > 200 ? `${ev.data.slice(0, 200)}...` : ev.data;
      return [this.error({ message: `The upstream sent an event that is not a JSON object: ${shown}`, code: 'upstream_bad_reply', contextOverflow: false })];
    }
    if (chunk.error !== undefined) return [this.error(errorOf(chunk))];
    return this.assembler.read(chunk);
  }

  finish(): NeutralReply {
    const reply = this.assembler.reply();
    if (reply.finish_reason === null && this.errored) reply.finish_reason = 'error';
    return reply;
  }

  private error(error: UpstreamError): StreamDelta {
    this.errored = true;
    return { type: 'error', error };
  }
}

/** Google's `{error:{code,message,status}}`: its `status` is the type, its numeric code the code. */
export function errorOf(body: unknown): UpstreamError {
  const err = upstreamErrorFromJson(body, 'The upstream reported an error.');
  const status = asString(asObject(asObject(body)?.error)?.status);
  return status === undefined ? err : { ...err, type: status };
}
