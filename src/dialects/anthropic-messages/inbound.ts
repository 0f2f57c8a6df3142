/**
 * The anthropic-messages wire's client side: `POST /v1/messages` (Claude Code adds `?beta=true`),
 * answered in Anthropic's shapes, and `POST /v1/messages/count_tokens`. What each upstream wire
 * keeps of a client's request is in docs/inbound.md; in short, everything the neutral request
 * holds, less `cache_control` (the proxy places its own), `is_error`, server tools and
 * `thinking.display`; top-level fields the proxy does not read (`metadata`, `top_k`,
 * `context_management`, ...), and the client's `anthropic-beta` and `anthropic-version` headers,
 * go to an Anthropic upstream only.
 */
import type { ToolSpec } from '../../core/types.js';
import { deepFreeze } from '../../core/deep-freeze.js';
import { FrozenResults } from '../../core/list-lineage.js';
import type { ClientRequest, ImageSink, InboundDialect, ReplyMeta } from '../types.js';
import { bearerOf } from '../wire-headers.js';
import { messageEvent, renderError, renderMessage } from './client-render.js';
import { createEventRenderer } from './client-stream.js';
import { idFields, toConversation, toParams, toTools } from './inbound-convert.js';
import { parseMessagesRequest, type ParsedMessages } from './inbound-parse.js';

function toClientRequest(parsed: ParsedMessages, images: ImageSink): ClientRequest {
  const conversation = toConversation(parsed, images);
  return {
    model: parsed.body.model,
    stream: parsed.body.stream === true,
    // Usage is always part of a Messages stream (message_start, message_delta).
    includeUsage: true,
    system: conversation.system,
    messages: conversation.messages,
    tools: toolsOf(parsed),
    params: toParams(parsed.body),
    idFields: idFields(parsed.body),
  };
}

/**
 * The neutral tools made of a tools list the body memo handed over unchanged (the same frozen
 * array): one conversion, and one array, which the session compares by identity (session/heads.ts).
 */
const TOOLS = new FrozenResults<ToolSpec[]>();

function toolsOf(parsed: ParsedMessages): ToolSpec[] {
  return TOOLS.of(parsed.rawTools, (kept) => (kept ? deepFreeze(toTools(parsed.body.tools)) : toTools(parsed.body.tools)));
}

export const anthropicMessagesInbound: InboundDialect = {
  wire: 'anthropic-messages',
  paths: ['/v1/messages'],
  bodyList: 'messages',
  // Claude Code sends ANTHROPIC_API_KEY as `x-api-key` and ANTHROPIC_AUTH_TOKEN as a bearer.
  apiKey(headers) {
    const key = headers['x-api-key'];
    const first = Array.isArray(key) ? key[0] : key;
    return first !== undefined && first.trim() !== '' ? first.trim() : bearerOf(headers.authorization);
  },
  parse: (body, images) => toClientRequest(parseMessagesRequest(body), images),
  renderReply: (reply, meta: ReplyMeta) => renderMessage(reply, meta),
  openStream(meta) {
    const renderer = createEventRenderer(meta);
    return {
      contentType: 'text/event-stream; charset=utf-8',
      delta: (delta) => renderer.render(delta),
      end: (final) => renderer.end(final),
      error: (err) => messageEvent(renderError(err)),
    };
  },
  errorBody: renderError,
  countTokens: {
    path: '/v1/messages/count_tokens',
    parse: (body, images) => toClientRequest(parseMessagesRequest(body, { count: true }), images),
    render: (inputTokens) => ({ input_tokens: inputTokens }),
  },
};
