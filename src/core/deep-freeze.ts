/**
 * Freezes every object and array under `v`, `v` included. Iterative: a client body's depth is not
 * checked yet when its parse freezes it (src/proxy/body-memo.ts). A frozen container is taken as
 * frozen all the way down, as everything this freezes is. Pure.
 */
export function deepFreeze<T>(v: T): T {
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x !== 'object' || x === null || Object.isFrozen(x)) continue;
    Object.freeze(x);
    if (Array.isArray(x)) {
      for (const y of x) stack.push(y);
    } else {
      for (const k of Object.keys(x)) stack.push((x as Record<string, unknown>)[k]);
    }
  }
  return v;
}
