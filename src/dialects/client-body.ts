/**
 * What every inbound wire checks of a client's body the same way: that it is a JSON object, that it
 * nests no deeper than the proxy reads (docs/decisions.md, A nesting limit for client JSON), that
 * its numbers are finite, and zod's first issue as a 400 naming the field
 * (`messages[2].content[0].tool_use_id`).
 */
import type { z } from 'zod';
import { ProxyError } from '../core/errors.js';
import { formatPath, MAX_JSON_DEPTH, pathDeeperThan, scanValue } from '../core/json-depth.js';
import { nonFinitePath } from '../core/json-numbers.js';
import { ListResults } from '../core/list-lineage.js';

/**
 * The wire's list (`messages`, `input`) of each body that passed: a later body that repeats its
 * leading elements (the body memo hands them over as the same objects, at the same place) walks
 * only its new ones, so a resent history costs its new messages.
 */
const SHAPED = new ListResults<unknown>();

/** The body's other members that passed, frozen (a tools list resent unchanged is the same array). */
const PASSED = new WeakSet<object>();

/**
 * What of the body is still to walk: its members in a list standing for the body (the same depths,
 * the same numbers), less those that passed before, and the wire's list cut to the elements no
 * earlier list that passed vouches for. The whole body when nothing is vouched for.
 */
function unvouched(raw: Record<string, unknown>, listKey: string): unknown {
  const list = raw[listKey];
  const vouched = Array.isArray(list) ? SHAPED.reused(list).length : 0;
  let skipped = false;
  const members: unknown[] = [];
  for (const key of Object.keys(raw)) {
    const member = raw[key];
    if (key === listKey && vouched > 0) members.push((list as unknown[]).slice(vouched));
    else if (member !== null && typeof member === 'object' && PASSED.has(member)) skipped = true;
    else members.push(member);
  }
  return vouched > 0 || skipped ? members : raw;
}

/** A param names at most this many steps from the top: deeper steps say nothing more useful. */
const PARAM_STEPS = 4;

export function requireObject(raw: unknown, param?: string): asserts raw is Record<string, unknown> {
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) return;
  if (param === undefined) throw new ProxyError('invalid_request', { detail: 'The request body must be a JSON object.' });
  throw new ProxyError('invalid_request', { detail: `${param} must be an object.` }, { param });
}

/**
 * Checked once at the edge, in one pass over the parsed body:
 * - nesting, so that nothing after (zod, the canonical form, redaction, JSON.stringify of the
 *   upstream body and the log line) meets JSON nested past the stack;
 * - numbers: a literal past the double range (`1e400`) parses as Infinity, anywhere a field takes
 *   any JSON (tool schemas, `tool_choice`, a `tool_use` input, fields passed on as sent), and the
 *   log, the digest and the upstream body could not carry it, so it is the client's 400, not the
 *   proxy's 500.
 * What an earlier body that passed vouches for (`unvouched`) is not walked again. `listKey` names
 * the wire's growing list.
 */
export function checkBodyShape(raw: Record<string, unknown>, listKey: string): void {
  const list = raw[listKey];
  const { depth, nonFinite } = scanValue(unvouched(raw, listKey), MAX_JSON_DEPTH);
  if (depth > MAX_JSON_DEPTH) {
    const param = formatPath(pathDeeperThan(raw, MAX_JSON_DEPTH)!.slice(0, PARAM_STEPS));
    throw new ProxyError('json_too_deep', { param, limit: MAX_JSON_DEPTH }, { param });
  }
  if (!nonFinite) {
    for (const [key, member] of Object.entries(raw)) {
      if (key !== listKey && member !== null && typeof member === 'object' && Object.isFrozen(member)) PASSED.add(member);
    }
    if (Array.isArray(list)) SHAPED.keep(list, list);
    return;
  }
  const param = formatPath(nonFinitePath(raw)!);
  throw new ProxyError('invalid_request', { detail: `Invalid value for '${param}': a number beyond the range of a double (it reads as Infinity).` }, { param });
}

/** A zod issue as the 400 a client reads: the field's path in the body, and what was wrong with it. */
export function issueError(issue: z.core.$ZodIssue, prefix = ''): ProxyError {
  const path = issue.path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc === '' ? String(key) : `${acc}.${String(key)}`), prefix);
  const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
  const detail = missing ? `Missing required parameter: '${path}'.` : `Invalid value for '${path}': ${issue.message}.`;
  return new ProxyError('invalid_request', { detail }, { param: path });
}
