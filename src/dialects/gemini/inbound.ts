/**
 * The Gemini API's client side: `POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse` and `:countTokens`, as Gemini CLI and the Gen AI SDK send them,
 * answered in Gemini's shapes. The model and whether to stream are in the path; the key in
 * `x-goog-api-key` or `?key=`. What each upstream wire keeps of a request is in docs/inbound.md.
 */
import { ProxyError } from '../../core/errors.js';
import { bearerOf } from '../wire-headers.js';
import type { ClientHeaders, ClientRequest, ImageSink, InboundDialect, RequestTarget } from '../types.js';
import { openStream, renderError, renderReply } from './client-render.js';
import { toConversation, toParams, toTools } from './inbound-convert.js';
import { parseGeminiRequest } from './inbound-parse.js';

/** A model id in the path runs to the colon before the method (fastify's `::` is a literal colon). */
const MODEL = ':model(^[^:/]+)';
export const GENERATE_PATH = `/v1beta/models/${MODEL}::generateContent`;
export const STREAM_PATH = `/v1beta/models/${MODEL}::streamGenerateContent`;
export const COUNT_PATH = `/v1beta/models/${MODEL}::countTokens`;

/** The model the path names (`models/` is the SDK's prefix of a resource name, not part of the id). */
function modelOf(body: unknown, target: RequestTarget | undefined): string {
  const fromPath = target?.params.model;
  const fromBody = (body as { model?: unknown } | null)?.model;
  const model = fromPath ?? (typeof fromBody === 'string' ? fromBody : undefined);
  if (model === undefined || model === '') throw new ProxyError('invalid_request', { detail: 'No model: the path names it, /v1beta/models/{model}:generateContent.' }, { param: 'model' });
  return model.replace(/^models\//, '');
}

function toClientRequest(body: unknown, images: ImageSink, target: RequestTarget | undefined, count: boolean): ClientRequest {
  const parsed = parseGeminiRequest(body, { count });
  const conversation = toConversation(parsed, images);
  return {
    model: modelOf(count ? (body as { generateContentRequest?: unknown }).generateContentRequest ?? body : body, target),
    stream: target?.route === STREAM_PATH,
    // Gemini always reports usage (`usageMetadata` on the last chunk).
    includeUsage: true,
    system: conversation.system,
    messages: conversation.messages,
    tools: toTools(parsed.body.tools),
    params: toParams(parsed.body),
    // Gemini CLI sends no session id (its sessions are found by their prefix); a body field named in
    // `[sessions] id_body_fields` still counts, as on the other wires.
    idFields: parsed.body as Record<string, unknown>,
  };
}

function first(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export const geminiInbound: InboundDialect = {
  wire: 'gemini',
  paths: [GENERATE_PATH, STREAM_PATH],
  bodyList: 'contents',
  apiKey: (headers: ClientHeaders, target?: RequestTarget) => first(headers['x-goog-api-key']) ?? first(target?.query.key) ?? bearerOf(headers.authorization),
  parse: (body, images, target) => toClientRequest(body, images, target, false),
  renderReply: (reply, meta) => renderReply(reply, meta),
  openStream: (meta) => openStream(meta),
  errorBody: renderError,
  countTokens: {
    path: COUNT_PATH,
    parse: (body, images, target) => toClientRequest(body, images, target, true),
    render: (inputTokens) => ({ totalTokens: inputTokens }),
  },
};
