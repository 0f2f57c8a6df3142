/** The openai-responses dialect: OpenAI's Responses API, stateless (`store: false`), as Codex speaks it. */
import type { Dialect } from '../types.js';
import { upstreamErrorFromBody } from '../upstream-error.js';
import { decodeReply } from './decode-reply.js';
import { createStreamDecoder } from './decode-stream.js';
import { encodeRequest } from './encode-request.js';

export const openaiResponses: Dialect = {
  wire: 'openai-responses',
  encodeRequest,
  decodeReply,
  createStreamDecoder,
  // HTTP errors use OpenAI's envelope (`{"error":{message,type,param,code}}`), read by the shared reader.
  decodeError: upstreamErrorFromBody,
  authHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
};
