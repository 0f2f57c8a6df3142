/** The openai-chat wire's client side: `POST /v1/chat/completions`, answered in OpenAI's shapes. */
import { errorBody } from '../../core/errors.js';
import { SSE_DONE, sseJson } from '../sse-writer.js';
import { bearerOf } from '../wire-headers.js';
import type { ClientRequest, InboundDialect, ReplyMeta } from '../types.js';
import { createChunkRenderer, renderCompletion } from './client-render.js';
import { toConversation, toParams, toTools } from './inbound-convert.js';
import { parseChatRequest } from './inbound-parse.js';

export const openaiChatInbound: InboundDialect = {
  wire: 'openai-chat',
  paths: ['/v1/chat/completions'],
  bodyList: 'messages',
  apiKey: (headers) => bearerOf(headers.authorization),
  parse(body, images): ClientRequest {
    const parsed = parseChatRequest(body);
    const conversation = toConversation(parsed.messages, images, parsed.list);
    return {
      model: parsed.body.model,
      stream: parsed.body.stream === true,
      includeUsage: parsed.body.stream_options?.include_usage === true,
      system: conversation.system,
      messages: conversation.messages,
      tools: toTools(parsed.tools),
      params: toParams(parsed.body),
      idFields: parsed.body as Record<string, unknown>,
    };
  },
  renderReply: (reply, meta) => renderCompletion(reply, chatMeta(meta)),
  openStream(meta, req) {
    const renderer = createChunkRenderer({ ...chatMeta(meta), includeUsage: req.includeUsage });
    return {
      contentType: 'text/event-stream; charset=utf-8',
      delta: (delta) => renderer.render(delta).map((c) => sseJson(c)).join(''),
      end: (final) => renderer.end(final.usage).map((c) => sseJson(c)).join('') + SSE_DONE,
      error: (err) => sseJson(errorBody(err)),
    };
  },
  errorBody,
};

/** OpenAI's completion ids read `chatcmpl-...`. */
function chatMeta(meta: ReplyMeta): ReplyMeta {
  return { ...meta, id: `chatcmpl-${meta.id}` };
}
