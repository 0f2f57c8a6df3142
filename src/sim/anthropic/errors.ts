/**
 * The simulator's errors as Anthropic sends them: `{"type":"error","error":{"type","message"},
 * "request_id"}`, the types by HTTP status as Anthropic's "Errors" page lists them. The SimError
 * itself is shared with the chat wire; only its body differs.
 */
import { SimError } from '../errors.js';

/** Anthropic's `error.type` for each status it documents; other 5xx are `api_error`. */
const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

function errorObject(err: SimError): { type: 'error'; error: { type: string; message: string } } {
  const type = TYPES[err.status] ?? (err.status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message: err.message } };
}

export function anthropicErrorBody(err: SimError, requestId: string): Record<string, unknown> {
  return { ...errorObject(err), request_id: requestId };
}

/** The stream's error event: the same error object, without a request id. */
export function anthropicErrorEvent(err: SimError): Record<string, unknown> {
  return errorObject(err);
}

/** A 400 `invalid_request_error`; the message names the field as the API does (`messages.1.content.0`). */
export function invalid(message: string): SimError {
  return new SimError(400, 'invalid_request_error', message);
}

/** Anthropic's wording, with the simulator's figures. */
export function promptTooLong(promptTokens: number, contextTokens: number): SimError {
  return new SimError(400, 'prompt_too_long', `prompt is too long: ${promptTokens} tokens > ${contextTokens} maximum`);
}

/** `[[stream-error]]`: an error event mid-stream, or a 500 when not streaming. */
export function anthropicStreamFailure(): SimError {
  return new SimError(500, 'stream_error', 'Internal server error (asked for by [[stream-error]]).');
}
