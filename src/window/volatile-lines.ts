/**
 * Lines of a system prompt that change on every request and say nothing to the model (Claude
 * Code's `x-anthropic-billing-header: cc_version=...; cc_entrypoint=...; cch=<nonce>;`, docs/inbound.md)
 * would change the first bytes of every request and so every cached prefix. Such lines are taken
 * out before the prompt reaches the log: the window never sees them, and the recipe records the
 * patterns that took them (`volatile_lines`), so a reader of the log knows what was left out.
 */
import type { NeutralMessage } from '../core/types.js';

/**
 * The prompts seen last and what they became: a client sends the same system prompt, 10-20 KB for
 * a coding agent, on every request, and testing each of its lines again cost more than comparing it.
 */
const recent: { text: string; patterns: readonly RegExp[]; out: string }[] = [];
const RECENT = 4;

/** Whole lines matching any pattern are removed; blank lines left at either end go with them. */
export function dropVolatileLines(text: string, patterns: readonly RegExp[]): string {
  if (patterns.length === 0) return text;
  for (const r of recent) if (r.patterns === patterns && r.text === text) return r.out;
  const out = dropLines(text, patterns);
  recent.unshift({ text, patterns, out });
  if (recent.length > RECENT) recent.pop();
  return out;
}

function dropLines(text: string, patterns: readonly RegExp[]): string {
  const lines = text.split('\n');
  const kept = lines.filter((line) => !patterns.some((p) => p.test(line)));
  if (kept.length === lines.length) return text;
  while (kept.length > 0 && kept[0]!.trim() === '') kept.shift();
  while (kept.length > 0 && kept[kept.length - 1]!.trim() === '') kept.pop();
  return kept.join('\n');
}

/**
 * The system prompt and the system messages of a conversation without their volatile lines. A
 * system message left empty stays (empty): the client's message count is what session matching
 * compares, and an empty system message is sent as nothing.
 */
export function withoutVolatile<T extends { system: string | undefined; messages: NeutralMessage[] }>(req: T, patterns: readonly RegExp[]): T {
  if (patterns.length === 0) return req;
  const system = req.system === undefined ? undefined : dropVolatileLines(req.system, patterns);
  const messages = req.messages.map((m) => (m.role === 'system' ? { ...m, content: dropVolatileLines(m.content, patterns) } : m));
  return { ...req, system, messages };
}
