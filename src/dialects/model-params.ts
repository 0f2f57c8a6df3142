/**
 * The client's sampling fields an OpenAI reasoning model refuses while it reasons ("Unsupported
 * value: 'temperature' does not support 0.2 with this model. Only the default (1) value is
 * supported."; docs/wires.md, OpenAI). A client that sends them to such a model through the proxy
 * meant them for whatever model the route serves, so they are left out and named in
 * `params.dropped` (the log and the request log say so) instead of costing the request a 400.
 * Applied before `llm.req` is written, like the preset's `refuses`: replay rebuilds what was sent.
 */
import { reasons } from '../core/openai-family.js';
import type { RequestParams } from '../core/types.js';

/** The neutral parameters the rule covers, in the order they are named. */
const SAMPLING = ['frequency_penalty', 'presence_penalty', 'temperature', 'top_p'] as const;

/** Client fields the proxy passes through on OpenAI's own wires, refused on the same condition. */
const SAMPLING_EXTRAS = ['logit_bias', 'logprobs', 'top_logprobs'] as const;

/** The parameters less what `model` refuses on this request; the same object when nothing goes. */
export function withoutSampling(params: RequestParams, model: string): RequestParams {
  if (!reasons(model, params.reasoning_effort)) return params;
  const dropped: string[] = [];
  const out: RequestParams = { ...params };
  for (const name of SAMPLING) {
    if (out[name] === undefined) continue;
    delete out[name];
    dropped.push(name);
  }
  const extra = params.extra;
  if (extra !== undefined && SAMPLING_EXTRAS.some((k) => Object.hasOwn(extra.fields, k))) {
    const fields = Object.fromEntries(Object.entries(extra.fields).filter(([k]) => !(SAMPLING_EXTRAS as readonly string[]).includes(k)));
    const gone = SAMPLING_EXTRAS.filter((k) => Object.hasOwn(extra.fields, k));
    out.extra = { ...extra, fields, dropped: [...(extra.dropped ?? []), ...gone].sort() };
  }
  if (dropped.length === 0 && out.extra === params.extra) return params;
  if (dropped.length > 0) out.dropped = dropped;
  return out;
}

/** Every field a request's parameters name as left out (`dropped` and `extra.dropped`). */
export function droppedFields(params: RequestParams): string[] {
  return [...(params.dropped ?? []), ...(params.extra?.dropped ?? [])].sort();
}
