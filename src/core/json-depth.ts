/**
 * How deep JSON nests, measured without recursion, so that input nested past any stack can be
 * refused before something recursive (JSON.stringify, a schema walk) meets it. The limit and why
 * it is 128: docs/decisions.md, A nesting limit for client JSON.
 *
 * Depth counts containers: a scalar is 0, `{}` and `[]` are 1, `[[1]]` is 2.
 */

export const MAX_JSON_DEPTH = 128;

/** JSON's structural characters, as char codes (the same as their UTF-8 bytes). */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;

/**
 * The deepest bracket nesting of JSON text, read without parsing: `[` and `{` outside strings
 * count, anything inside a string does not. Stops as soon as the depth passes `stopAbove`.
 * Text that is not JSON is measured by its brackets all the same (a closer with nothing open is
 * ignored; an unterminated string ends the count).
 */
export function textDepth(text: string, stopAbove = Infinity): number {
  let depth = 0;
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Jump to the closing quote: most of a tool call's text is inside strings, and indexOf
      // crosses it far faster than a loop over characters.
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return max;
        let k = end - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        // An even run of backslashes escapes itself, not the quote. The run stops at the opening
        // quote at the latest, and runs before successive quotes do not overlap: linear overall.
        if ((end - 1 - k) % 2 === 0) break;
      }
      i = end;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > stopAbove) return max;
      }
    } else if ((c === CLOSE_BRACKET || c === CLOSE_BRACE) && depth > 0) {
      depth--;
    }
  }
  return max;
}

/**
 * The deepest container nesting of a parsed JSON value, stopping as soon as it passes
 * `stopAbove`, and whether it holds a number that is not finite (json-numbers.ts says why that
 * matters): one pass for both, since every client body is checked for both. An explicit stack; it
 * allocates per container, never per value.
 */
export function scanValue(value: unknown, stopAbove = Infinity): { depth: number; nonFinite: boolean } {
  if (typeof value === 'number') return { depth: 0, nonFinite: !Number.isFinite(value) };
  if (value === null || typeof value !== 'object') return { depth: 0, nonFinite: false };
  const nodes: object[] = [value];
  const depths: number[] = [1];
  let max = 0;
  let nonFinite = false;
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth > max) {
      max = depth;
      if (max > stopAbove) return { depth: max, nonFinite };
    }
    // Object.values: own members only, and faster here than for-in with an own-property check.
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (typeof child === 'number') {
        if (!Number.isFinite(child)) nonFinite = true;
      } else if (child !== null && typeof child === 'object') {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return { depth: max, nonFinite };
}

/**
 * The path (keys and indexes from the top) to the first container, in document order, that
 * nests deeper than `limit`; undefined when there is none. Keeps the path as it goes, so it is
 * for naming the place once `scanValue` has said there is one.
 */
export function pathDeeperThan(value: unknown, limit: number): (string | number)[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (limit < 1) return [];
  // A child container met with `limit` containers open is at depth limit + 1.
  return firstPath(value, (child, open) => child !== null && typeof child === 'object' && open === limit);
}

/**
 * The path to the first value inside `root`, in document order, that `hit` picks (`open`: how
 * many containers hold it). Without recursion: one frame per open container (the container, its
 * keys for an object, the next position), so any depth the caller allows is walked.
 */
export function firstPath(root: object, hit: (child: unknown, open: number) => boolean): (string | number)[] | undefined {
  const nodes: object[] = [root];
  const keyLists: (string[] | undefined)[] = [Array.isArray(root) ? undefined : Object.keys(root)];
  const positions: number[] = [0];
  while (nodes.length > 0) {
    const top = nodes.length - 1;
    const node = nodes[top]!;
    const keys = keyLists[top];
    const position = positions[top]!;
    if (position === (keys === undefined ? (node as unknown[]).length : keys.length)) {
      nodes.pop();
      keyLists.pop();
      positions.pop();
      continue;
    }
    positions[top] = position + 1;
    const child: unknown = keys === undefined ? (node as unknown[])[position] : (node as Record<string, unknown>)[keys[position]!];
    if (hit(child, nodes.length)) {
      // Every open frame's position: the last is the child's own.
      return nodes.map((_, i) => {
        const at = positions[i]! - 1;
        const frameKeys = keyLists[i];
        return frameKeys === undefined ? at : frameKeys[at]!;
      });
    }
    if (child === null || typeof child !== 'object') continue;
    nodes.push(child);
    keyLists.push(Array.isArray(child) ? undefined : Object.keys(child));
    positions.push(0);
  }
  return undefined;
}

/** `messages[3].content`, as OpenAI writes `error.param`. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const step of path) {
    if (typeof step === 'number') out += `[${step}]`;
    else out += out === '' ? step : `.${step}`;
  }
  return out;
}
