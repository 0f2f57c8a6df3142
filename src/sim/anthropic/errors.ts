/**
 * The simulator's errors as Anthropic sends them: `{"type":"error","error":{"type","message"},
 * "request_id"}`, the error type following the status (`src/resources/shared.ts` `ErrorType`).
 * The SimError itself is shared with the chat wire; only its body differs.
 */
import { SimError } from '../errors.js';

export function anthropicErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export function anthropicErrorBody(err: SimError, requestId: string): Record<string, unknown> {
  return { type: 'error', error: { type: anthropicErrorType(err.status), message: err.message }, request_id: requestId };
}

/** The stream's error event: the same error object, without a request id. */
export function anthropicErrorEvent(err: SimError): Record<string, unknown> {
  return { type: 'error', error: { type: anthropicErrorType(err.status), message: err.message } };
}

/** Anthropic's wording, with the simulator's figures. */
export function promptTooLong(promptTokens: number, contextTokens: number): SimError {
  return new SimError(400, 'prompt_too_long', `prompt is too long: ${promptTokens} tokens > ${contextTokens} maximum`);
}

/** `[[stream-error]]`: an error event mid-stream, or a 500 when not streaming. */
export function anthropicStreamFailure(): SimError {
  return new SimError(500, 'stream_error', 'Internal server error (asked for by [[stream-error]]).');
}
