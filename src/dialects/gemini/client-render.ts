/**
 * What the proxy answers a Gemini API client (Gemini CLI, the Gen AI SDK): a NeutralReply as a
 * `GenerateContentResponse`, StreamDeltas as SSE `data:` chunks of the same shape (each with the
 * parts new since the last; the last with `finishReason` and `usageMetadata`), errors as Google's
 * `{"error":{code,message,status}}` (googleapis/js-genai `types.ts`; google.rpc.Status).
 *
 * Thought summaries go as `thought: true` parts. A thought signature goes on the part that carried
 * it, and only this dialect's own (a Gemini upstream's): reasoning of another origin is shown as a
 * thought part without one, never passed off as Google's. Calls carry their `id`, which Gemini CLI
 * keeps and sends back, so its history matches the log's.
 */
import type { ProxyError } from '../../core/errors.js';
import type { FinishReason, NeutralReply, Usage } from '../../core/types.js';
import { sseJson } from '../sse-writer.js';
import type { ClientStream, ReplyMeta, StreamDelta } from '../types.js';
import { argsOf, modelParts } from './model-parts.js';
import { signatureOf } from './signatures.js';
import { renderUsage } from './usage.js';
import type { WireError, WireFinishReason, WireGenerateContentResponse, WirePart } from './wire-types.js';

/** google.rpc.Code names by HTTP status, as Google's APIs answer them. */
const STATUS: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 409: 'ABORTED',
  413: 'INVALID_ARGUMENT', 415: 'INVALID_ARGUMENT', 429: 'RESOURCE_EXHAUSTED', 431: 'INVALID_ARGUMENT', 499: 'CANCELLED',
  500: 'INTERNAL', 501: 'UNIMPLEMENTED', 502: 'UNAVAILABLE', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

export function statusName(status: number): string {
  return STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

/** The proxy's own code and the field it names go in an `ErrorInfo` detail, as Google's APIs carry a reason. */
export function renderError(err: ProxyError): WireError {
  const detail = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: err.code, domain: 'prefix-proxy', metadata: err.param === null ? {} : { param: err.param } };
  return { error: { code: err.status, message: err.message, status: statusName(err.status), details: [detail] } };
}

export function finishReasonFor(reason: FinishReason | null): WireFinishReason {
  if (reason === 'length') return 'MAX_TOKENS';
  if (reason === 'content_filter') return 'SAFETY';
  if (reason === 'error') return 'OTHER';
  return 'STOP';
}

function response(parts: WirePart[], meta: ReplyMeta, end?: { reason: FinishReason | null; usage: Usage | undefined }): WireGenerateContentResponse {
  const candidate: NonNullable<WireGenerateContentResponse['candidates']>[number] = { content: { role: 'model', parts } };
  if (end !== undefined) candidate.finishReason = finishReasonFor(end.reason);
  candidate.index = 0;
  const out: WireGenerateContentResponse = { candidates: [candidate] };
  if (end !== undefined) out.usageMetadata = renderUsage(end.usage);
  out.modelVersion = meta.model;
  out.responseId = meta.id;
  return out;
}

export function renderReply(reply: NeutralReply, meta: ReplyMeta): WireGenerateContentResponse {
  const own = (reply.blocks ?? []).filter((b) => signatureOf(b) !== undefined);
  const parts = modelParts({ ...reply, blocks: own }, { thoughts: true });
  return response(parts, meta, { reason: reply.finish_reason, usage: reply.usage });
}

/**
 * The stream: one chunk per piece of text or thought, one per whole call (Gemini never splits a
 * call's arguments, so a call goes once its arguments are complete), one per signature that stood
 * apart from a call. The last chunk is held back until the end so it carries the finish and usage
 * (Gemini CLI reads them from the chunk that also has parts).
 */
export function openStream(meta: ReplyMeta): ClientStream {
  let held: WirePart[] | undefined;
  let call: { id: string; name: string; args: string; signature?: string } | undefined;
  let pendingSignature: string | undefined;
  let usage: Usage | undefined;
  let finish: FinishReason | null = null;

  const push = (parts: WirePart[]): string => {
    const out = held === undefined ? '' : sseJson(response(held, meta));
    held = parts;
    return out;
  };
  const closeCall = (): string => {
    if (call === undefined) return '';
    const part: WirePart = { functionCall: { id: call.id, name: call.name, args: argsOf(call.args === '' ? '{}' : call.args) } };
    if (call.signature !== undefined) part.thoughtSignature = call.signature;
    call = undefined;
    return push([part]);
  };

  return {
    contentType: 'text/event-stream; charset=utf-8',
    delta(d: StreamDelta): string {
      switch (d.type) {
        case 'usage':
          usage = d.usage;
          return '';
        case 'finish':
          finish ??= d.reason;
          return '';
        case 'error':
          return '';
        case 'tool_call_args':
          if (call !== undefined) call.args += d.text;
          return '';
        case 'tool_call_start': {
          const out = closeCall();
          call = { id: d.id, name: d.name, args: '' };
          if (pendingSignature !== undefined) call.signature = pendingSignature;
          pendingSignature = undefined;
          return out;
        }
        case 'thinking':
          return closeCall() + (d.text === '' ? '' : push([{ text: d.text, thought: true }]));
        case 'content':
          return closeCall() + (d.text === '' ? '' : push([{ text: d.text }]));
        case 'block': {
          const s = signatureOf(d.block);
          if (s === undefined) return '';
          // A call's signature comes just before the call; the others stand on an empty part of their kind.
          if (s.on === 'call') {
            pendingSignature = s.signature;
            return closeCall();
          }
          return closeCall() + push([s.on === 'thought' ? { text: '', thought: true, thoughtSignature: s.signature } : { text: '', thoughtSignature: s.signature }]);
        }
      }
    },
    end(final: NeutralReply): string {
      let out = closeCall();
      const parts = held ?? [{ text: '' }];
      held = undefined;
      out += sseJson(response(parts, meta, { reason: finish ?? final.finish_reason, usage: final.usage ?? usage }));
      return out;
    },
    error: (err: ProxyError) => sseJson(renderError(err)),
  };
}
