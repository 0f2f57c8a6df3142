/**
 * Thought signatures (ai.google.dev/gemini-api/docs/thought-signatures): opaque bytes on the part
 * that carries them (the first functionCall part of a reply with calls, else the first answer part
 * of a reply that thought), to be passed back exactly as received, on the same part.
 *
 * The simulator's signature is base64 of an HMAC tag and the payload it covers: which part of its
 * turn it was made on (the part's place among the turn's parts of its kind, and for a call its
 * name and arguments; a text's words are not bound, since a client may join streamed text parts)
 * and the thinking it stands for, which the prompt renders where the signature comes back. A changed signature fails the tag;
 * a moved one (another part, another index, another call) fails the binding: both a 400, as the
 * API answers. Within the current turn the first call of each model content sent back without a
 * signature is the 400 Gemini 3 answers, whoever made the call (the API cannot tell a call of its own
 * whose signature was dropped from one another model made: a history moved from another vendor, a
 * call written by hand); earlier turns may drop them. `skip_thought_signature_validator` is the
 * documented escape hatch for such calls and passes as no signature at all. Models before Gemini 3
 * check only a signed call of ours.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../hash.js';
import { invalidArgument } from './errors.js';
import type { Content, Part } from './request.js';

export const SKIP_SIGNATURE = 'skip_thought_signature_validator';
/** Not a secret: the simulator only needs to notice a change. */
const KEY = 'prefix-proxy-sim/gemini-thought-signature/v1';
const TAG_BYTES = 16;

export interface Sealed {
  /** bindingOf() the part it was made on. */
  binding: string;
  thinking: string;
}

export interface SignatureCounts {
  /** Signatures of ours that came back unchanged, in place. */
  returned: number;
  /** Parts of ours that were signed and came back without it (earlier turns, or text parts). */
  dropped: number;
}

/** A part's kind: a call, a thought summary, answer text, or other data. */
function kindOf(part: Part): string {
  if (part.functionCall !== undefined) return 'call';
  if (part.text !== undefined) return part.thought === true ? 'thought' : 'text';
  return 'other';
}

/** A call's name and arguments (canonical JSON: a Struct has no key order). */
function callDigest(part: Part): string {
  return sha256Hex(canonicalJson({ name: part.functionCall?.name, args: part.functionCall?.args })).slice(0, 32);
}

/** Where a part stands: its kind, its place among the turn's parts of that kind, and for a call what it calls. */
export function bindingOf(part: Part, ordinal: number): string {
  const kind = kindOf(part);
  return kind === 'call' ? `call:${ordinal}:${callDigest(part)}` : `${kind}:${ordinal}`;
}

/** Each part's binding, for one content's parts. */
export function bindings(parts: readonly Part[]): string[] {
  const seen = new Map<string, number>();
  return parts.map((part) => {
    const kind = kindOf(part);
    const n = seen.get(kind) ?? 0;
    seen.set(kind, n + 1);
    return bindingOf(part, n);
  });
}

function tag(payload: Buffer): Buffer {
  return createHmac('sha256', KEY).update(payload).digest().subarray(0, TAG_BYTES);
}

export function seal(value: Sealed): string {
  const payload = Buffer.from(JSON.stringify({ b: value.binding, t: value.thinking }), 'utf8');
  return Buffer.concat([tag(payload), payload]).toString('base64');
}

/** The sealed value, or null when the text is not a signature this simulator made, unchanged. */
export function open(signature: string): Sealed | null {
  const bytes = Buffer.from(signature, 'base64');
  if (bytes.length <= TAG_BYTES || bytes.toString('base64') !== signature) return null;
  const payload = bytes.subarray(TAG_BYTES);
  if (!timingSafeEqual(bytes.subarray(0, TAG_BYTES), tag(payload))) return null;
  try {
    const v = JSON.parse(payload.toString('utf8')) as { b?: unknown; t?: unknown };
    return typeof v.b === 'string' && typeof v.t === 'string' ? { binding: v.b, thinking: v.t } : null;
  } catch {
    return null;
  }
}

/** Remembers the calls this simulator signed, to tell a dropped signature from one never made. */
export class SignatureBook {
  readonly #signedCalls = new Set<string>();

  /** Call after a reply is made: its first call part carries a signature. */
  remember(parts: readonly Part[]): void {
    for (const part of parts) if (part.functionCall !== undefined && part.thoughtSignature !== undefined) this.#signedCalls.add(callDigest(part));
  }

  clear(): void {
    this.#signedCalls.clear();
  }

  /**
   * Checks every signature in `contents` (the cache's contents first, then the request's); throws
   * the API's 400 for a changed, moved or (current turn) missing one.
   */
  check(contents: readonly Content[], opts: { everyCall: boolean } = { everyCall: false }): SignatureCounts {
    const counts: SignatureCounts = { returned: 0, dropped: 0 };
    const turnStart = currentTurnStart(contents);
    contents.forEach((content, c) => {
      let firstCall = true;
      const bound = bindings(content.parts);
      content.parts.forEach((part, j) => {
        const where = `contents[${c}].parts[${j}]`;
        const signature = part.thoughtSignature;
        const isFirstCall = part.functionCall !== undefined && firstCall;
        if (part.functionCall !== undefined) firstCall = false;
        if (signature === undefined || signature === SKIP_SIGNATURE) {
          const ours = part.functionCall !== undefined && this.#signedCalls.has(callDigest(part));
          if (signature === undefined && isFirstCall && c >= turnStart && content.role === 'model' && (ours || opts.everyCall)) {
            throw missingSignature(part.functionCall!.name, c);
          }
          if (signature === undefined && ours) counts.dropped++;
          return;
        }
        if (content.role !== 'model') throw invalidArgument(`Thought signature is only valid on a model turn's part (${where}).`);
        const sealed = open(signature);
        if (sealed === null) throw invalidArgument(`Corrupted thought signature at ${where}.`);
        if (sealed.binding !== bound[j]) {
          throw invalidArgument(`Thought signature at ${where} does not belong to this part: a signature must come back on the part that carried it.`);
        }
        counts.returned++;
      });
    });
    return counts;
  }
}

/** Index of the first content of the current turn: after the last user content with text in it. */
function currentTurnStart(contents: readonly Content[]): number {
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i]!;
    if (c.role === 'user' && c.parts.some((p) => p.functionResponse === undefined)) return i + 1;
  }
  return 0;
}

function missingSignature(name: string, index: number): Error {
  return invalidArgument(
    `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${index + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
  );
}
