/**
 * Gemini's thought signatures as the log keeps them: one `gemini.thought_signature` block per part
 * that carried one, `{on, signature}`, where `on` names the kind of part (the thought summary, the
 * answer's text, a function call) and `before_call` the calls before it (for a call, its own index).
 * The encoder puts each back on the same part, the client renderer shows it there, the decoders make
 * them; the signature itself is never read or changed. A signature of another origin never gets
 * here: the window gives a request only its own origin's blocks.
 */
import type { Origin, OpaqueBlock } from '../../core/types.js';

export const SIGNATURE_KIND = 'gemini.thought_signature';

export type SignedPart = 'thought' | 'text' | 'call';

export interface SignatureData {
  on: SignedPart;
  signature: string;
}

export function signatureBlock(origin: Origin, on: SignedPart, signature: string, beforeCall: number): OpaqueBlock {
  return { kind: SIGNATURE_KIND, origin, data: { on, signature } satisfies SignatureData, before_call: beforeCall, unbound: true };
}

/** This dialect's own form of a signature block; undefined for any other block (another wire's signature included). */
export function signatureOf(block: OpaqueBlock): (SignatureData & { beforeCall: number }) | undefined {
  if (block.kind !== SIGNATURE_KIND || block.data === null || typeof block.data !== 'object') return undefined;
  const d = block.data as Partial<SignatureData>;
  if ((d.on !== 'thought' && d.on !== 'text' && d.on !== 'call') || typeof d.signature !== 'string') return undefined;
  return { on: d.on, signature: d.signature, beforeCall: block.before_call ?? 0 };
}

/** The signatures of a reply or message, by where each goes back. */
export interface PlacedSignatures {
  thought?: string;
  text?: string;
  calls: Map<number, string>;
}

export function placeSignatures(blocks: readonly OpaqueBlock[] | undefined): PlacedSignatures {
  const out: PlacedSignatures = { calls: new Map() };
  for (const block of blocks ?? []) {
    const s = signatureOf(block);
    if (s === undefined) continue;
    if (s.on === 'call') out.calls.set(s.beforeCall, s.signature);
    else out[s.on] ??= s.signature;
  }
  return out;
}

