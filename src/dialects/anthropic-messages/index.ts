/** The anthropic-messages dialect: Anthropic's Messages API (`POST /v1/messages`). */
import type { Dialect } from '../types.js';
import { upstreamErrorFromBody } from '../upstream-error.js';
import { decodeReply } from './decode-reply.js';
import { createStreamDecoder } from './decode-stream.js';
import { encodeCountTokens, encodeRequest } from './encode-request.js';

export const anthropicMessages: Dialect = {
  wire: 'anthropic-messages',
  encodeRequest,
  decodeReply,
  createStreamDecoder,
  // `{"type":"error","error":{"type","message"},"request_id"}` is read by the shared reader, which
  // also knows "prompt is too long" as a context overflow.
  decodeError: upstreamErrorFromBody,
  authHeaders: (apiKey) => ({ 'x-api-key': apiKey }),
  // A client of this wire (Claude Code) names its API version and betas; they mean something here only.
  clientHeaders: ['anthropic-version', 'anthropic-beta'],
  // The encoder may name a beta of its own (request-params.ts, staleThinking): the client's join it.
  listHeaders: ['anthropic-beta'],
  encodeCountTokens,
  // "Changes to `tool_choice` parameter only affect message blocks"; so do "changes to extended
  // thinking settings", which come from the effort and, for a budget, `max_tokens`
  // (request-params.ts): https://platform.claude.com/docs/en/build-with-claude/prompt-caching
  cacheKeyedParams: ['tool_choice', 'parallel_tool_calls', 'reasoning_effort', 'max_tokens'],
};
