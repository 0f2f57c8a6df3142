/**
 * The simulator's errors as Anthropic sends them: `{"type":"error","error":{"type","message"},
 * "request_id"}`, in the dialect's shapes (the proxy answers its Anthropic clients in the same).
 * The SimError itself is shared with the chat wire; only its body differs.
 */
import { wireError } from '../../dialects/anthropic-messages/client-render.js';
import { SimError } from '../errors.js';

export function anthropicErrorBody(err: SimError, requestId: string): Record<string, unknown> {
  return { ...wireError(err.status, err.message), request_id: requestId };
}

/** The stream's error event: the same error object, without a request id. */
export function anthropicErrorEvent(err: SimError): Record<string, unknown> {
  return wireError(err.status, err.message);
}

/** Anthropic's wording, with the simulator's figures. */
export function promptTooLong(promptTokens: number, contextTokens: number): SimError {
  return new SimError(400, 'prompt_too_long', `prompt is too long: ${promptTokens} tokens > ${contextTokens} maximum`);
}

/** `[[stream-error]]`: an error event mid-stream, or a 500 when not streaming. */
export function anthropicStreamFailure(): SimError {
  return new SimError(500, 'stream_error', 'Internal server error (asked for by [[stream-error]]).');
}
