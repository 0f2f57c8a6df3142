/**
 * The one table of dialects, by wire format. Adding a dialect is its folder plus one line here;
 * nothing outside a dialect tests a wire format's name.
 */
import { ProxyError } from '../core/errors.js';
import type { WireFormat } from '../core/route.js';
import { anthropicMessages } from './anthropic-messages/index.js';
import { anthropicMessagesInbound } from './anthropic-messages/inbound.js';
import { gemini } from './gemini/index.js';
import { geminiInbound } from './gemini/inbound.js';
import { ollamaChat } from './ollama-chat/index.js';
import { openaiChat } from './openai-chat/index.js';
import { openaiChatInbound } from './openai-chat/inbound.js';
import { openaiResponses } from './openai-responses/index.js';
import { openaiResponsesInbound } from './openai-responses/inbound.js';
import type { Dialect, InboundDialect } from './types.js';

export const DIALECTS: Readonly<Record<WireFormat, Dialect | undefined>> = {
  'openai-chat': openaiChat,
  'anthropic-messages': anthropicMessages,
  'ollama-chat': ollamaChat,
  'openai-responses': openaiResponses,
  gemini,
};

/** The dialect for a wire format; `internal_error` for one not built yet (config should refuse it first). */
export function dialectFor(wire: WireFormat): Dialect {
  const dialect = DIALECTS[wire];
  if (dialect === undefined) throw new ProxyError('internal_error', { detail: `no dialect speaks the "${wire}" wire format yet` });
  return dialect;
}

/** The wires clients may speak to the proxy; each serves its own paths through the one pipeline. */
export const INBOUND_DIALECTS: readonly InboundDialect[] = [openaiChatInbound, anthropicMessagesInbound, openaiResponsesInbound, geminiInbound];
