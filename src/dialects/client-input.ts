/**
 * What every inbound dialect checks in a client's body the same way: the nesting limit, read once
 * at the edge (docs/decisions.md, A nesting limit for client JSON), and zod issues as OpenAI-shaped
 * 400s naming the field (`messages[2].tool_call_id`, `input[3].call_id`).
 */
import type { z } from 'zod';
import { ProxyError } from '../core/errors.js';
import { formatPath, MAX_JSON_DEPTH, pathDeeperThan, textDepth, valueDepth } from '../core/json-depth.js';

/** A param names at most this many steps from the top: deeper steps say nothing more useful. */
const PARAM_STEPS = 4;

/** The body is a JSON object; anything else is a 400. */
export function requireObject(raw: unknown): asserts raw is Record<string, unknown> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ProxyError('invalid_request', { detail: 'The request body must be a JSON object.' });
  }
}

/**
 * Checked once here, so that nothing after (zod, the canonical form, redaction, JSON.stringify of
 * the upstream body and the log line) meets JSON nested past the stack.
 */
export function checkBodyDepth(raw: object): void {
  if (valueDepth(raw, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH) return;
  const param = formatPath(pathDeeperThan(raw, MAX_JSON_DEPTH)!.slice(0, PARAM_STEPS));
  throw new ProxyError('json_too_deep', { param, limit: MAX_JSON_DEPTH }, { param });
}

/** JSON in a string (tool call arguments): session matching and the Anthropic and Ollama encoders parse it later. */
export function checkTextDepth(text: string, param: string): void {
  if (textDepth(text, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH) return;
  throw new ProxyError('json_too_deep', { param, limit: MAX_JSON_DEPTH }, { param });
}

/** A zod issue as a 400 naming its field, under `prefix` (`messages[2]`) when given. */
export function fromIssue(issue: z.core.$ZodIssue, prefix = ''): ProxyError {
  const path = issue.path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc === '' ? String(key) : `${acc}.${String(key)}`), prefix);
  const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
  const detail = missing ? `Missing required parameter: '${path}'.` : `Invalid value for '${path}': ${issue.message}.`;
  return new ProxyError('invalid_request', { detail }, { param: path });
}
