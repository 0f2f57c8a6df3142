/** The openai-chat dialect: OpenAI Chat Completions and the many servers that speak it. */
import type { Dialect } from '../types.js';
import { upstreamErrorFromBody } from '../upstream-error.js';
import { decodeReply } from './decode-reply.js';
import { createStreamDecoder } from './decode-stream.js';
import { encodeRequest } from './encode-request.js';

export const openaiChat: Dialect = {
  wire: 'openai-chat',
  encodeRequest,
  decodeReply,
  createStreamDecoder,
  // OpenAI's envelope, the flat one of Cerebras/SGLang/vLLM, OpenRouter's numeric codes and the
  // Anthropic text OpenRouter relays are all read by the shared reader.
  decodeError: upstreamErrorFromBody,
  authHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
};
