/** The gemini dialect: Google's Gemini API, native (`generateContent`, `streamGenerateContent?alt=sse`). */
import type { Dialect } from '../types.js';
import { decodeError, decodeReply } from './decode-reply.js';
import { createStreamDecoder } from './decode-stream.js';
import { encodeCountTokens, encodeRequest } from './encode-request.js';

export const gemini: Dialect = {
  wire: 'gemini',
  encodeRequest,
  decodeReply,
  createStreamDecoder,
  decodeError,
  // Google's APIs take the key as `x-goog-api-key` (or `?key=`, which would put it in the URL and logs).
  authHeaders: (apiKey) => ({ 'x-goog-api-key': apiKey }),
  encodeCountTokens,
};
