/**
 * Gemini mode: Google's OpenAI-compatible endpoint with a Gemini 3 model (Google's Gemini API
 * documentation on thought signatures). A reply with tool calls carries a thought signature,
 * `extra_content.google.thought_signature`, on its first call only: "only the first functionCall
 * part in that response carries a thoughtSignature" for parallel calls, and each step of a turn has
 * its own.
 *
 * When it comes back:
 * - a signature anywhere in the history must be one this simulator made for that message's calls,
 *   on its first call, unchanged, else a 400 "Corrupted thought signature" (signatures are bound to
 *   the calls they came with, not to the prompt: nothing documents a prefix check);
 * - a reply with calls in the current turn (after the last user message) must carry a signature on
 *   its first call, whoever made the calls: "The API enforces strict validation on the 'Current
 *   Turn'. Missing signatures will result in a 400 error"; an earlier turn's may be left out (one of
 *   ours counted as dropped);
 * - the SDKs' escape hatch `skip_thought_signature_validator` is accepted in place of one.
 * Errors come as that endpoint sends them: a list holding one `{error:{code, message, status}}`.
 *
 * Thought text is shown only when the request asks (`google.thinking_config.include_thoughts`, at
 * the top level or under `extra_body`, as Google's examples send it), as `reasoning_content`.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { EnvelopedError } from './errors.js';
import { BoundedMap, zeroOpaque, type ModeRules } from './mode-rules.js';
import type { ReplyPlan } from './replies.js';
import { isObject, toolCallsOf, type ChatRequest, type WireMessage } from './request.js';

/** Not a secret: the simulator only needs to notice a change. */
const SECRET = 'prefix-proxy-sim/gemini-thought-signature/v1';
const NONCE_BYTES = 16;
const TAG_BYTES = 32;
/** What SDKs send for a call made without a signature (vercel/ai, continue). */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

interface Call {
  id: string;
  name: string;
  arguments: string;
}

function tag(nonce: Buffer, calls: readonly Call[]): Buffer {
  return createHmac('sha256', SECRET).update(nonce).update(JSON.stringify(calls.map((c) => [c.id, c.name, c.arguments]))).digest();
}

/** base64(nonce || HMAC(nonce, calls)); the nonce comes from the prompt's digest, so it is deterministic. */
export function thoughtSignature(promptDigest: string, calls: readonly Call[]): string {
  const nonce = createHash('sha256').update(`nonce:${promptDigest}`).digest().subarray(0, NONCE_BYTES);
  return Buffer.concat([nonce, tag(nonce, calls)]).toString('base64');
}

/** True when `signature` is one this simulator made for exactly these calls. */
export function signatureFits(signature: string, calls: readonly Call[]): boolean {
  const bytes = Buffer.from(signature, 'base64');
  if (bytes.length !== NONCE_BYTES + TAG_BYTES || bytes.toString('base64') !== signature) return false;
  return timingSafeEqual(bytes.subarray(NONCE_BYTES), tag(bytes.subarray(0, NONCE_BYTES), calls));
}

function signatureOn(call: unknown): unknown {
  if (!isObject(call) || !isObject(call.extra_content) || !isObject(call.extra_content.google)) return undefined;
  return call.extra_content.google.thought_signature ?? undefined;
}

function googleError(message: string, param: string, code: string): EnvelopedError {
  return new EnvelopedError(400, code, message, param, [{ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }]);
}

function missing(index: number, name: string): EnvelopedError {
  return googleError(
    'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing ' +
      `thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${index}. ` +
      'Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.',
    `messages.[${index}].tool_calls.[0].extra_content`,
    'missing_thought_signature',
  );
}

function corrupted(index: number, call: number, name: string): EnvelopedError {
  return googleError(
    `Corrupted thought signature. Additional data, function call \`default_api:${name}\` , position ${index}.`,
    `messages.[${index}].tool_calls.[${call}].extra_content`,
    'corrupted_thought_signature',
  );
}

function asksForThoughts(body: Record<string, unknown>): boolean {
  for (const holder of [body, body.extra_body]) {
    if (!isObject(holder) || !isObject(holder.google)) continue;
    const config = holder.google.thinking_config;
    if (isObject(config) && config.include_thoughts === true) return true;
  }
  return false;
}

class GeminiRules implements ModeRules {
  /** First call id of each reply of ours -> the signature it went out with. */
  readonly #signed = new BoundedMap<string, string>();

  checkHistory(req: ChatRequest) {
    const counts = zeroOpaque();
    const turnStart = req.messages.findLastIndex((m) => m.role === 'user');
    req.messages.forEach((msg, i) => {
      if (msg.role !== 'assistant') return;
      const calls = toolCallsOf(msg, i);
      if (calls.length === 0) return;
      const raw = msg.tool_calls as unknown[];
      let signed = false;
      raw.forEach((call, j) => {
        const signature = signatureOn(call);
        if (signature === undefined || signature === SKIP_SIGNATURE) return;
        if (j !== 0 || typeof signature !== 'string' || !signatureFits(signature, calls)) throw corrupted(i, j, calls[j]!.name);
        signed = true;
      });
      const ours = this.#signed.get(calls[0]!.id) !== undefined;
      if (signed) {
        if (ours) counts.returned++;
      } else {
        // Whoever made the call: the API cannot tell one of its own whose signature was dropped.
        if (i > turnStart && signatureOn(raw[0]) !== SKIP_SIGNATURE) throw missing(i, calls[0]!.name);
        if (ours) counts.dropped++;
      }
      if (signed && (typeof msg.reasoning_content === 'string' || typeof msg.reasoning === 'string')) counts.withText++;
    });
    return counts;
  }

  caching(): 'auto' {
    return 'auto';
  }

  showsThinking(req: ChatRequest): boolean {
    return asksForThoughts(req.body);
  }

  decorate(plan: ReplyPlan, _req: ChatRequest, promptDigest: string): void {
    const first = plan.toolCalls[0];
    if (first === undefined) return;
    first.thoughtSignature = thoughtSignature(promptDigest, plan.toolCalls);
    this.#signed.set(first.id, first.thoughtSignature);
  }

  /** The signature stands for the reasoning of the calls it rides on. */
  givesReasoningBack(msg: WireMessage): boolean {
    return Array.isArray(msg.tool_calls) && signatureOn(msg.tool_calls[0]) !== undefined;
  }

  clear(): void {
    this.#signed.clear();
  }
}

export function geminiRules(): ModeRules {
  return new GeminiRules();
}
