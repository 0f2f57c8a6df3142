/**
 * The client's request fields the proxy does not read: kept with the parameters (so the log holds
 * them and replay rebuilds them), sent on to an upstream of the client's own wire only, never over
 * a field the proxy sets, and less the fields the route's server is known to refuse
 * (docs/inbound.md, Fields the proxy does not read).
 */
import type { WireFormat } from '../core/route.js';
import type { RequestParams } from '../core/types.js';

/** The body's fields not in `read`, sorted by name; undefined when there are none. */
export function extraFields(body: Readonly<Record<string, unknown>>, read: ReadonlySet<string>, wire: WireFormat): RequestParams['extra'] {
  const names = Object.keys(body).filter((k) => !read.has(k) && body[k] !== undefined).sort();
  if (names.length === 0) return undefined;
  return { wire, fields: Object.fromEntries(names.map((k) => [k, body[k]])) };
}

/** Adds the client's fields to an upstream body of its own wire, where the proxy set nothing and `reserved` does not name them. */
export function addExtraFields(body: Record<string, unknown>, params: RequestParams, wire: WireFormat, reserved: readonly string[] = []): void {
  if (params.extra?.wire !== wire) return;
  for (const [k, v] of Object.entries(params.extra.fields)) {
    if (!Object.hasOwn(body, k) && !reserved.includes(k)) body[k] = v;
  }
}

/**
 * The parameters without the fields the upstream refuses (its preset's list), named in
 * `extra.dropped`: applied before `llm.req` is written, so the log holds what was sent and replay
 * rebuilds the same bytes. Only for an upstream of the client's wire: no other gets the fields.
 */
export function withoutRefused(params: RequestParams, wire: WireFormat, refused: readonly string[]): RequestParams {
  const extra = params.extra;
  if (extra?.wire !== wire) return params;
  const dropped = refused.filter((k) => Object.hasOwn(extra.fields, k)).sort();
  if (dropped.length === 0) return params;
  const fields = Object.fromEntries(Object.entries(extra.fields).filter(([k]) => !dropped.includes(k)));
  return { ...params, extra: { wire, fields, dropped } };
}
