/** The ollama-chat dialect: Ollama's native `POST /api/chat` (NDJSON stream, metrics in ns). */
import type { Dialect } from '../types.js';
import { decodeError, decodeReply } from './decode-reply.js';
import { createStreamDecoder } from './decode-stream.js';
import { encodeRequest } from './encode-request.js';

export const ollamaChat: Dialect = {
  wire: 'ollama-chat',
  encodeRequest,
  decodeReply,
  createStreamDecoder,
  decodeError,
  // Ollama itself takes no key; a server behind a proxy that checks one reads a bearer token.
  authHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
};
