import { describe, expect, it } from 'vitest';
import { isContextOverflow, toProxyError, upstreamErrorFromBody, upstreamErrorFromJson } from '../../src/dialects/upstream-error.js';

describe('context overflow recognition', () => {
  it.each([
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens.",
    "This endpoint's maximum context length is 200000 tokens.",
    'prompt is too long: 208437 tokens > 200000 maximum',
    'input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again',
    'Your input exceeds the context window of this model. Please adjust your input and try again.',
    'The decoder prompt (length 40000) is longer than the maximum model length of 32768.',
    'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
    'the request exceeds the available context size, try increasing it',
  ])('recognises %s', (message) => {
    expect(isContextOverflow(message)).toBe(true);
  });

  it.each([
    'Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, Used 27412, Requested 4210.',
    'Invalid value for max_tokens: must be a positive integer.',
    "messages.2.assistant.reasoning_content: property 'messages.2.assistant.reasoning_content' is unsupported",
    'Request too large for model in organization on tokens per min.',
  ])('does not mistake %s', (message) => {
    expect(isContextOverflow(message)).toBe(false);
  });

  it('recognises the codes alone', () => {
    expect(isContextOverflow('Bad request', 'context_length_exceeded')).toBe(true);
    expect(isContextOverflow('Bad request', 'exceed_context_size_error')).toBe(true);
    expect(isContextOverflow('Bad request', 'invalid_request_error')).toBe(false);
  });
});

describe('upstream error bodies', () => {
  it('reads a string error (Ollama style) and an empty body', () => {
    expect(upstreamErrorFromJson({ error: 'model "x" not found' }, 'f')).toStrictEqual({ message: 'model "x" not found', contextOverflow: false });
    expect(upstreamErrorFromBody(503, '   ')).toStrictEqual({ message: 'HTTP 503', contextOverflow: false });
  });

  it('cuts a long text body to 2000 characters', () => {
    expect(upstreamErrorFromBody(500, 'x'.repeat(5000)).message).toHaveLength(2000);
  });

  it('reads OpenRouter metadata.raw given as an object', () => {
    const err = upstreamErrorFromJson({ error: { message: 'Provider returned error', code: 400, metadata: { raw: { error: { message: 'prompt is too long: 1 tokens > 0 maximum' } } } } }, 'f');
    expect(err.contextOverflow).toBe(true);
  });

  it('turns an overflow into context_length_exceeded and anything else into upstream_error', () => {
    const overflow = toProxyError(400, { message: 'prompt is too long', contextOverflow: true });
    expect([overflow.code, overflow.status, overflow.message]).toStrictEqual(['context_length_exceeded', 400, 'prompt is too long']);
    const other = toProxyError(429, { message: 'slow down', contextOverflow: false });
    expect([other.code, other.status, other.message]).toStrictEqual(['upstream_error', 502, 'The upstream answered 429: slow down']);
  });
});
