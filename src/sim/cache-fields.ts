/**
 * The GPT-5.6 cache fields, checked as OpenAI checks them: models before GPT-5.6 answer 400 to
 * `prompt_cache_options` and to `prompt_cache_breakpoint` (reported for gpt-5.4 and gpt-5.4-mini,
 * and by the Codex backend); GPT-5.6+ refuses `prompt_cache_retention` ("prompt_cache_retention is
 * not supported on this model"), a breakpoint other than `{"mode":"explicit"}`, and one on an
 * assistant message (not among the parts that take one). Both wires: chat content parts, and
 * Responses message parts and `function_call_output.output` parts.
 */
import type { SimError } from './errors.js';
import { invalidRequest } from './errors.js';
import { isObject } from './request.js';

/** Content that may hold parts: `where` names it in errors, `assistant` when OpenAI takes no marker there. */
export interface PartsAt {
  content: unknown;
  where: string;
  assistant: boolean;
}

/** Throws the 400 the request earns; returns the cache mode asked for (implicit when none). */
export function checkCacheFields(body: Record<string, unknown>, contents: readonly PartsAt[], takes: boolean): 'implicit' | 'explicit' {
  const options = body.prompt_cache_options;
  if (!takes) {
    if (options !== undefined) throw unsupported('prompt_cache_options');
    for (const c of contents) {
      const j = markedParts(c.content)[0];
      if (j !== undefined) throw unsupported('prompt_cache_breakpoint', `${c.where}.[${j}].prompt_cache_breakpoint`);
    }
    return 'implicit';
  }
  if (body.prompt_cache_retention !== undefined) throw unsupported('prompt_cache_retention');
  for (const c of contents) {
    for (const j of markedParts(c.content)) {
      const param = `${c.where}.[${j}].prompt_cache_breakpoint`;
      const marker = (c.content as Record<string, unknown>[])[j]!.prompt_cache_breakpoint;
      if (!isObject(marker) || marker.mode !== 'explicit' || Object.keys(marker).length !== 1) {
        throw invalidRequest(`Invalid value for '${param}': expected {"mode": "explicit"}.`, param, 'invalid_value');
      }
      if (c.assistant) throw invalidRequest(`'${param}' is not supported on assistant messages.`, param, 'invalid_value');
    }
  }
  if (options === undefined) return 'implicit';
  if (!isObject(options) || (options.mode !== undefined && options.mode !== 'implicit' && options.mode !== 'explicit')) {
    throw invalidRequest("Invalid value for 'prompt_cache_options.mode': expected 'implicit' or 'explicit'.", 'prompt_cache_options.mode', 'invalid_value');
  }
  if (options.ttl !== undefined && options.ttl !== '30m') {
    throw invalidRequest("Invalid value for 'prompt_cache_options.ttl': supported values are: '30m'.", 'prompt_cache_options.ttl', 'invalid_value');
  }
  return options.mode === 'explicit' ? 'explicit' : 'implicit';
}

function markedParts(content: unknown): number[] {
  if (!Array.isArray(content)) return [];
  const out: number[] = [];
  content.forEach((part: unknown, j) => {
    if (isObject(part) && part.prompt_cache_breakpoint !== undefined) out.push(j);
  });
  return out;
}

function unsupported(field: string, param = field): SimError {
  return invalidRequest(`${field} is not supported on this model`, param, 'unsupported_parameter');
}
