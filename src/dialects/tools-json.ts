/**
 * A request's tools as a wire writes them, serialised once per catalog. A coding agent sends 10 to
 * 60 KB of tool definitions with every request, unchanged, and the window hands out the same array
 * until the session's catalog changes (window/state.ts): so each wire's text of a catalog is kept
 * by that array (core/kept-text.ts), under the wire's own variant (a breakpoint on the last tool,
 * say).
 */
import { keptText } from '../core/kept-text.js';
import type { ToolSpec } from '../core/types.js';

/** JSON.stringify(encode(tools)), made the first time this array is asked for under `variant`. */
export function toolsJson(tools: readonly ToolSpec[], variant: string, encode: (tools: readonly ToolSpec[]) => unknown): string {
  return keptText(tools, variant, () => JSON.stringify(encode(tools)));
}

/**
 * JSON.stringify(obj) for a plain object, with each member named in `texts` written as that text
 * (its JSON, already made) instead of being serialised again: the same bytes, in the same key order.
 */
export function stringifyWith(obj: Readonly<Record<string, unknown>>, texts: Readonly<Record<string, string>>): string {
  let out = '{';
  for (const key of Object.keys(obj)) {
    // undefined for what JSON.stringify leaves out (undefined, functions, symbols).
    const text = Object.hasOwn(texts, key) ? texts[key] : (JSON.stringify(obj[key]) as string | undefined);
    if (text === undefined) continue;
    if (out.length > 1) out += ',';
    out += JSON.stringify(key) + ':' + text;
  }
  return out + '}';
}
