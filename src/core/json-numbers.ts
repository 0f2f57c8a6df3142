/**
 * Numbers that JSON text can hold but a parsed value cannot give back: JSON.parse reads a literal
 * past the double range (`1e400`) as Infinity, which JSON.stringify writes as `null` and canonical
 * JSON refuses, so a log line or a digest could not hold it. Found without recursion, as
 * json-depth.ts measures depth (the value may nest up to its limit).
 */

/** The value holds a number that is not finite somewhere. One pass, per container. */
export function hasNonFinite(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  const nodes: object[] = [value];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (typeof child === 'number') {
        if (!Number.isFinite(child)) return true;
      } else if (child !== null && typeof child === 'object') {
        nodes.push(child);
      }
    }
  }
  return false;
}

/**
 * The path (keys and indexes from the top) to the first number that is not finite, in document
 * order; undefined when there is none. For naming the place once `hasNonFinite` has said there is one.
 */
export function nonFinitePath(value: unknown): (string | number)[] | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : [];
  if (value === null || typeof value !== 'object') return undefined;
  // One frame per open container: the container, its keys (objects only) and the next position.
  const nodes: object[] = [value];
  const keyLists: (string[] | undefined)[] = [Array.isArray(value) ? undefined : Object.keys(value)];
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
    if (typeof child === 'number' && !Number.isFinite(child)) {
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
