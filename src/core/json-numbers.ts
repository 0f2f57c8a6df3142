/**
 * Numbers that JSON text can hold but a parsed value cannot give back: JSON.parse reads a literal
 * past the double range (`1e400`) as Infinity, which JSON.stringify writes as `null` and canonical
 * JSON refuses, so a log line or a digest could not hold it. Found without recursion, as
 * json-depth.ts measures depth (the value may nest up to its limit).
 */

import { firstPath } from './json-depth.js';

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
  return firstPath(value, (child) => typeof child === 'number' && !Number.isFinite(child));
}
