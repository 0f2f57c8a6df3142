/**
 * A reply to a request in JSON mode (`generationConfig.responseMimeType: "application/json"`): the
 * API answers with JSON text, conforming to `responseJsonSchema` or `responseSchema` where one is
 * given, and makes no function call (https://ai.google.dev/gemini-api/docs/structured-output).
 * The simulated model writes the smallest value the schema allows: each required member, the first
 * of an enum or of `anyOf`, a minimum, an empty string or list. Gemini CLI's loop check and task
 * router ask this way, and read the reply with JSON.parse.
 */
import type { ReplyPlan } from '../replies.js';
import { countTokens } from '../tokens.js';
import type { Json } from './request.js';

export interface JsonMode {
  /** The schema the reply conforms to; null: any JSON (an empty object). */
  schema: unknown;
}

/** JSON mode as the request's generation config asks for it; null when it does not. */
export function readJsonMode(generation: Json): JsonMode | null {
  if (generation.responseMimeType !== 'application/json') return null;
  return { schema: generation.responseJsonSchema ?? generation.responseSchema ?? null };
}

/** The plan with the schema's smallest instance as its text, and no calls; failures and thinking stay. */
export function inJsonMode(plan: ReplyPlan, mode: JsonMode): ReplyPlan {
  const content = JSON.stringify(smallestInstance(mode.schema, 0) ?? {});
  const completionTokens = plan.reasoningTokens + countTokens(content);
  return { ...plan, content, toolCalls: [], finishReason: 'stop', completionTokens };
}

/** A schema nested past this is answered with null at that depth (no schema a client sends is). */
const MAX_DEPTH = 32;

export function smallestInstance(schema: unknown, depth: number): unknown {
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return {};
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ('const' in s) return s.const;
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) return smallestInstance(options[0], depth + 1);
  }
  // `responseSchema` (OpenAPI) spells types in capitals; `type` may also list several.
  const types = (Array.isArray(s.type) ? s.type : [s.type]).map((t) => String(t).toLowerCase());
  const type = types.find((t) => t !== 'null') ?? types[0];
  switch (type) {
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return typeof s.minimum === 'number' ? s.minimum : 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const min = typeof s.minItems === 'number' ? s.minItems : 0;
      return Array.from({ length: min }, () => smallestInstance(s.items, depth + 1));
    }
    default: {
      const props = (typeof s.properties === 'object' && s.properties !== null ? s.properties : {}) as Record<string, unknown>;
      const required = Array.isArray(s.required) ? s.required.map(String) : [];
      const out: Record<string, unknown> = {};
      for (const name of required) out[name] = smallestInstance(props[name], depth + 1);
      return out;
    }
  }
}
