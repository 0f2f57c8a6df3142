/**
 * Whether a client may be retrying a request: the OpenAI and Anthropic SDKs send
 * `x-stainless-retry-count` (0 on the first try), which marks a retry on its own; clients with
 * idempotency keys repeat their `Idempotency-Key`, which is a retry of the request the session
 * answered last only if that request carried the same key. The key's digest goes into that
 * request's `llm.req`, so the answer is the log's, whichever process or replica reads it
 * (docs/decisions/0025-idempotency-keys-in-the-log.md).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { sha256Hex } from '../core/canonical.js';

export interface RetrySignal {
  /** The SDK's retry count is above 0. */
  marked: boolean;
  /** SHA-256 of the client's `Idempotency-Key`, when it sent one (never the key itself). */
  idempotency?: string;
}

/** What the headers say, or undefined when they name neither signal. */
export function retrySignal(headers: IncomingHttpHeaders): RetrySignal | undefined {
  const count = Number(first(headers['x-stainless-retry-count']));
  const marked = Number.isInteger(count) && count > 0;
  const key = first(headers['idempotency-key']);
  if (key === undefined || key === '') return marked ? { marked } : undefined;
  return { marked, idempotency: sha256Hex(key) };
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
