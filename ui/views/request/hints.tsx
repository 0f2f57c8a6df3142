/**
 * The cache hints a request carried, as the `llm.req` recorded them (src/core/events.ts,
 * HintsRecord), one line each in words: the body's cache key, the affinity headers, Anthropic's
 * `cache_control`, OpenAI's GPT-5.6+ breakpoints, Gemini's context cache. A hint this page does
 * not know yet is shown as recorded.
 */
import type { ComponentChildren } from 'preact';
import type { Hints as HintsRecord } from '../../contract.js';
import { int, time } from '../../format.js';
import { asText } from './data.js';

const KNOWN = new Set(['session_key', 'headers', 'cache_control', 'breakpoints', 'prompt_cache', 'gemini_cache', 'cache_key_sent', 'affinity_headers']);

export function Hints({ hints }: { hints: HintsRecord }) {
  const rows: { key: string; label: ComponentChildren; value: ComponentChildren }[] = [];
  if (hints.session_key === true) {
    rows.push({ key: 'session_key', label: <code>prompt_cache_key</code>, value: "in the body: the SHA-256 of the conversation's lineage (a fork's is its parent's)" });
  }
  if (hints.headers !== undefined && hints.headers.length > 0) {
    rows.push({ key: 'headers', label: 'Affinity headers', value: <>{hints.headers.map((h, i) => <>{i > 0 && ', '}<code>{h}</code></>)}: the same key</> });
  }
  if (hints.cache_control !== undefined) {
    const at = hints.breakpoints === undefined ? 'on the request' : `at ${int(hints.breakpoints)} breakpoint${hints.breakpoints === 1 ? '' : 's'}`;
    rows.push({ key: 'cache_control', label: <code>cache_control</code>, value: `${hints.cache_control}, ${at}` });
  }
  if (hints.prompt_cache !== undefined) {
    const { mode, marks } = hints.prompt_cache;
    rows.push({ key: 'prompt_cache', label: 'Prompt cache breakpoints', value: `${mode}; ${marks.length === 0 ? 'none placed' : `marked at message${marks.length === 1 ? '' : 's'} ${marks.join(', ')}`}` });
  }
  if (hints.gemini_cache !== undefined) {
    const g = hints.gemini_cache;
    rows.push({
      key: 'gemini_cache', label: 'Gemini context cache',
      value: <><code>{g.name}</code>: {int(g.messages)} messages, {int(g.tokens)} tokens{g.created === true ? '; made by this request' : ''}{g.kept_until !== undefined ? `; kept until ${time(g.kept_until)}` : ''}</>,
    });
  }
  for (const [key, value] of Object.entries(hints)) {
    if (!KNOWN.has(key) && value !== undefined && value !== null) rows.push({ key, label: key.replaceAll('_', ' '), value: <pre>{asText(value)}</pre> });
  }
  if (rows.length === 0) return <p class="muted" data-testid="hints-none">No hints added.</p>;
  return (
    <dl class="kv" data-testid="hints">
      {rows.map((r) => <div data-key={r.key} data-testid="hint"><dt>{r.label}</dt><dd>{r.value}</dd></div>)}
    </dl>
  );
}
