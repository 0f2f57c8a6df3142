/**
 * Redaction of known credential shapes (rules in redact-rules.ts). Runs on every event body
 * before it is written (docs/architecture.md section 3), so what the window sends is what the log holds.
 *
 * Each secret becomes `[redacted:<kind>]`; context around it (`Bearer `, `scheme://user:`) stays.
 * `hits` lists one kind per secret replaced, grouped in rule order (not text order); the same kind
 * may appear more than once. Redacting already-redacted text is a no-op with no hits.
 *
 * Cost: one pass finds every rule's literals (needles.ts), the words of the case-free rules
 * (key-named values, header names) in any case among them; a rule runs its further pre-check and
 * regex only where one of its literals is there (docs/decisions/0022-caseless-literals-in-the-one-pass.md),
 * and the two rules without one (a mailgun key, a discord token) run their pre-check. A short string
 * (keys, roles, finish reasons: most strings an event holds) is answered from a bounded memo.
 * No rule backtracks: 1 MB of adversarial text costs under 60 ms (test/log/redact-corpus.test.ts).
 * Values that need no change are returned as is (same reference), so an event with no secret is
 * not copied.
 */
import { ProxyError } from '../core/errors.js';
import { MAX_JSON_DEPTH } from '../core/json-depth.js';
import { NeedleScan } from './needles.js';
import { memberKind, type Groups } from './redact-assignments.js';
import { RULES, SECRET_KEYS, type Rule } from './redact-rules.js';

const SCAN = new NeedleScan([...new Set(RULES.flatMap((rule) => rule.needles ?? []))], [...new Set(RULES.flatMap((rule) => rule.caseless ?? []))]);
/** Each rule with the indexes in SCAN of its needles, caseless ones included (undefined: it has none). */
const PLAN = RULES.map((rule) => {
  const needles = [...(rule.needles ?? []).map((n) => SCAN.indexOf(n)), ...(rule.caseless ?? []).map((n) => SCAN.indexOf(n, true))];
  return { rule, needles: needles.length === 0 ? undefined : needles };
});

/** Strings up to this long are memoised: event keys and enum values repeat on every request. */
const MEMO_MAX_LENGTH = 32;
const MEMO_MAX_ENTRIES = 4096;
const memo = new Map<string, { text: string; hits: readonly string[] }>();

/**
 * The walk recurses, two frames a level. Client JSON is held to MAX_JSON_DEPTH at the inbound edge
 * and an event holds it a level or two deeper; twice that leaves room and stays far below the
 * stack (thousands of frames). Past it, an error naming the limit rather than a stack overflow.
 */
export const MAX_EVENT_DEPTH = 2 * MAX_JSON_DEPTH;

export interface Redacted<T> {
  value: T;
  hits: string[];
}

export function redactText(text: string): { text: string; hits: string[] } {
  const hits: string[] = [];
  return { text: redactInto(text, hits), hits };
}

/**
 * Every string in a JSON value, object keys included; structure and key order are kept. Throws
 * `json_too_deep` for a value nested deeper than MAX_EVENT_DEPTH. `remember: false` for a value
 * no later walk will meet (a log event's body): keeping it would cost two entries for nothing.
 */
export function redactDeep<T>(value: T, remember = true): Redacted<T> {
  // Redacted before (a route's recipe, a message keyed on arrival): its result, nothing walked or kept again.
  const done = typeof value === 'object' && value !== null ? DONE.get(value) : undefined;
  if (done !== undefined) return { value: done.value as T, hits: [...done.hits] };
  const hits: string[] = [];
  const out = walk(value, hits, 1) as T;
  if (remember && typeof value === 'object' && value !== null) {
    const result = { value: out, hits: [...hits] };
    DONE.set(value, result);
    if ((out as unknown) !== value) DONE.set(out as object, { value: out, hits: [] });
  }
  return { value: out, hits };
}

/**
 * What `redactDeep` made of each object it was given, and its result as its own: a new message is
 * redacted to be keyed (session/incoming.ts) and then again as part of the event the log writes,
 * and a walk that meets an object redacted before takes its result and its hits instead of
 * scanning its text again. Sound because a value is not changed once redacted (an event's body
 * must not be, session-log.ts); only the objects given to `redactDeep` are kept, not every one
 * inside them.
 */
const DONE = new WeakMap<object, Redacted<unknown>>();

/** Marker text for a removed secret; exported so readers can recognise it. */
export function redactedMarker(kind: string): string {
  return `[redacted:${kind}]`;
}

function redactInto(text: string, hits: string[]): string {
  if (text.length > MEMO_MAX_LENGTH) return redactRules(text, hits);
  let known = memo.get(text);
  if (known === undefined) {
    const own: string[] = [];
    known = { text: redactRules(text, own), hits: own };
    if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
    memo.set(text, known);
  }
  hits.push(...known.hits);
  return known.text;
}

function redactRules(text: string, hits: string[]): string {
  let out = text;
  let found = SCAN.scan(out);
  // Rules in a row often share a pre-check (the three key-named ones): asked once per text.
  let asked: ((text: string) => boolean) | undefined;
  let answer = false;
  for (const { rule, needles } of PLAN) {
    if (needles !== undefined && !anyFound(found, needles)) continue;
    if (rule.anchor !== undefined) {
      if (rule.anchor !== asked) {
        asked = rule.anchor;
        answer = rule.anchor(out);
      }
      if (!answer) continue;
    }
    const next = applyRule(rule, out, hits);
    if (next !== out) {
      out = next;
      found = SCAN.scan(out);
      asked = undefined;
    }
  }
  return out;
}

/** One of the needles (indexes into SCAN) was found: a plain loop, ~60 times a string. */
function anyFound(found: Uint8Array, needles: readonly number[]): boolean {
  for (let k = 0; k < needles.length; k++) if (found[needles[k]!] === 1) return true;
  return false;
}

function applyRule(rule: Rule, text: string, hits: string[]): string {
  return text.replace(rule.re, (...args: unknown[]) => {
    const match = args[0] as string;
    const groups = args[args.length - 1] as Groups & { secret: string };
    const offset = args[args.length - 3] as number;
    const end = rule.cut?.(groups.secret, groups) ?? groups.secret.length;
    const secret = groups.secret.slice(0, end);
    const before = text.slice(Math.max(0, offset - 2), offset);
    if (secret === '' || (rule.accept !== undefined && !rule.accept(secret, groups, before))) return match;
    const kind = rule.kindOf?.(groups) ?? rule.kind;
    hits.push(kind);
    return (groups.pre ?? '') + redactedMarker(kind) + groups.secret.slice(end);
  });
}

/** `depth` is the level `value` sits at if it is a container (the top one is 1). */
function walk(value: unknown, hits: string[], depth: number): unknown {
  if (typeof value === 'string') return redactInto(value, hits);
  if (value === null || typeof value !== 'object') return value;
  const done = DONE.get(value);
  if (done !== undefined) {
    for (const hit of done.hits) hits.push(hit);
    return done.value;
  }
  if (depth > MAX_EVENT_DEPTH) {
    throw new ProxyError('json_too_deep', { param: 'A log event', limit: MAX_EVENT_DEPTH });
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = walk(item, hits, depth + 1);
      if (next !== item) {
        copy ??= value.slice();
        copy[i] = next;
      }
    }
    return copy ?? value;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  let changed = false;
  const entries: [string, unknown][] = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const member = obj[key];
    const newKey = redactInto(key, hits);
    const next = redactMember(key, member, hits, depth + 1);
    if (newKey !== key || next !== member) changed = true;
    entries[i] = [newKey, next];
  }
  if (!changed) return obj;
  const out: Record<string, unknown> = {};
  // defineProperty, not assignment: a JSON key "__proto__" must stay a plain member.
  for (const [key, member] of entries) {
    Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * A header-like key (`authorization`, `x-api-key`, ...) makes its whole string value a secret. A
 * password- or token-like key (`password`, `client_secret`) does when the value looks like a
 * literal, as it would in text (`"password": "..."`), and no shape rule named it more precisely.
 */
function redactMember(key: string, member: unknown, hits: string[], depth: number): unknown {
  if (typeof member !== 'string' || member === '' || member.startsWith('[redacted:')) return walk(member, hits, depth);
  const named = key.length <= 19 ? SECRET_KEYS.get(key.toLowerCase()) : undefined;
  if (named !== undefined) {
    hits.push(named);
    return redactedMarker(named);
  }
  const text = redactInto(member, hits);
  if (text !== member) return text;
  const kind = memberKind(key, member);
  if (kind === undefined) return member;
  hits.push(kind);
  return redactedMarker(kind);
}
