/**
 * Directives that drive a reply, written in the last message's text (replies.ts says which
 * messages that takes in: trailing system messages are passed over):
 *   [[call NAME JSONARGS]]  one tool call (several = parallel calls), where the request declares
 *                           tools (chat modes: a model calls only what it was given)
 *   [[say TEXT]]            reply text (several are joined by newlines)
 *   [[think TEXT]]          reasoning text
 *   [[len N]]               N completion tokens of filler after any said text
 *   [[error STATUS]]        an OpenAI-shaped error with that status
 *   [[overflow]]            a 400 context_length_exceeded
 *   [[slow MS]]             delay before each stream chunk, or before a non-stream reply
 *   [[stream-error]]        an error event after some content (a 500 when not streaming)
 * Faults of the transport, acted out by the chat wire's server (server.ts; docs/faults.md):
 *   [[reset]]               the connection is dropped before any response header
 *   [[reset-mid]]           the connection is dropped after some content of a stream
 *   [[malformed-sse]]       a stream whose first event after the role chunk is not JSON
 *   [[no-finish]]           a stream that ends after its content, with no finish reason and no [DONE]
 *   [[oversized]]           4 MiB more: of content in a stream, of message in an error body
 *   [[retry-after N]]       an error carries `retry-after: N` (seconds)
 *   [[retry-after-ms N]]    an error carries `retry-after-ms: N`
 *   [[fail-times N]]        the faults above, errors and stream errors happen only to the first N
 *                           requests with the same body; later ones are answered normally
 * Anything else, including a malformed directive, is plain text.
 */

export type Directive =
  | { kind: 'call'; name: string; args: string }
  | { kind: 'say'; text: string }
  | { kind: 'think'; text: string }
  | { kind: 'len'; tokens: number }
  | { kind: 'error'; status: number }
  | { kind: 'overflow' }
  | { kind: 'slow'; ms: number }
  | { kind: 'stream-error' }
  | { kind: 'reset' }
  | { kind: 'reset-mid' }
  | { kind: 'malformed-sse' }
  | { kind: 'no-finish' }
  | { kind: 'oversized' }
  | { kind: 'retry-after'; n: number }
  | { kind: 'retry-after-ms'; n: number }
  | { kind: 'fail-times'; n: number };

const HEAD = /\[\[(call|say|think|len|error|overflow|slow|stream-error|reset-mid|reset|malformed-sse|no-finish|oversized|retry-after-ms|retry-after|fail-times)(?=[\s\]])/g;
const MAX_SLOW_MS = 60_000;
/** Bounds the filler a directive can ask for (1 MiB of text). */
const MAX_LEN_TOKENS = 262_144;

export function parseDirectives(text: string): Directive[] {
  const found: Directive[] = [];
  HEAD.lastIndex = 0;
  for (let head = HEAD.exec(text); head !== null; head = HEAD.exec(text)) {
    const kind = head[1]!;
    const bodyStart = head.index + head[0].length;
    const end = closing(text, bodyStart, kind === 'call');
    if (end < 0) break;
    const directive = build(kind, text.slice(bodyStart, end).trim());
    if (directive !== null) found.push(directive);
    HEAD.lastIndex = end + 2;
  }
  return found;
}

/**
 * Index of the `]]` that closes a directive. JSON arguments may hold `]]` themselves
 * (`{"a":[[1]]}`), so for a call the first `]]` after which the arguments parse wins.
 */
function closing(text: string, from: number, isCall: boolean): number {
  const first = text.indexOf(']]', from);
  if (!isCall || first < 0) return first;
  for (let end = first; end >= 0; end = text.indexOf(']]', end + 1)) {
    const args = callParts(text.slice(from, end).trim())?.args;
    if (args !== undefined && (parses(args) || unquoted(args) !== undefined)) return end;
  }
  return first;
}

function build(kind: string, body: string): Directive | null {
  switch (kind) {
    case 'call': {
      const parts = callParts(body);
      return parts === null ? null : { kind: 'call', ...parts };
    }
    case 'say':
    case 'think':
      return { kind, text: body };
    case 'len': {
      const tokens = wholeNumber(body);
      return tokens === null ? null : { kind: 'len', tokens: Math.min(tokens, MAX_LEN_TOKENS) };
    }
    case 'error': {
      const status = wholeNumber(body);
      return status === null || status < 400 || status > 599 ? null : { kind: 'error', status };
    }
    case 'slow': {
      const ms = wholeNumber(body);
      return ms === null ? null : { kind: 'slow', ms: Math.min(ms, MAX_SLOW_MS) };
    }
    case 'overflow':
    case 'stream-error':
    case 'reset':
    case 'reset-mid':
    case 'malformed-sse':
    case 'no-finish':
    case 'oversized':
      return body === '' ? { kind } : null;
    case 'retry-after':
    case 'retry-after-ms':
    case 'fail-times': {
      const n = wholeNumber(body);
      return n === null ? null : { kind, n };
    }
    default:
      return null;
  }
}

/**
 * `NAME JSONARGS`; arguments default to `{}` and are kept as written (even if not JSON), but for
 * arguments quoted inside a JSON string, which are read through the quoting.
 */
function callParts(body: string): { name: string; args: string } | null {
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(body);
  if (match === null) return null;
  const args = match[2]?.trim() ?? '{}';
  return { name: match[1]!, args: parses(args) ? args : unquoted(args) ?? args };
}

/**
 * Arguments that are JSON once read as the inside of a JSON string: a directive in a tool result
 * the client sends JSON-encoded (Cline's `read_files` returns `[{"query":...,"result":"..."}]`, so
 * a file's `{"a":1}` arrives as `{\"a\":1}`). A model reads through the quoting and writes JSON.
 */
function unquoted(args: string): string | undefined {
  if (!args.includes('\\"')) return undefined;
  try {
    const inner = JSON.parse(`"${args}"`) as string;
    return parses(inner) ? inner : undefined;
  } catch {
    return undefined;
  }
}

function parses(json: string): boolean {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}

function wholeNumber(text: string): number | null {
  return /^\d{1,9}$/.test(text) ? Number(text) : null;
}
