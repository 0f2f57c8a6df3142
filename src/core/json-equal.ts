/**
 * Whether two values as JSON.parse gives them would serialise to the same JSON text: the same
 * members in the same order, the same scalars. Nothing is built, so comparing a 30 KB tool
 * catalogue with the last one seen costs a walk, not two serialisations (session/heads.ts).
 * Client JSON is held to MAX_JSON_DEPTH at the edge, so the recursion stays shallow.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  const other = Object.keys(y);
  if (keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key !== other[i] || !sameJson(x[key], y[key])) return false;
  }
  return true;
}
