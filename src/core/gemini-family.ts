/**
 * Gemini 3 and later: the first call of each step of the current turn must come back with a thought
 * signature, whoever made the call, or the API answers 400; a call Gemini did not make goes with
 * Google's stand-in (ai.google.dev/gemini-api/docs/thought-signatures;
 * docs/decisions/0031-a-stand-in-for-signatures-gemini-never-made.md). One rule for both of
 * Gemini's wires: its own API and its OpenAI endpoint.
 */

/** The value Google names for a signature the caller does not have; the official SDKs send it too. */
export const STAND_IN_SIGNATURE = 'skip_thought_signature_validator';

/** gemini-3 and later, with or without a `models/` prefix; not gemini-2.5 and before, which ask for none. */
export function requiresCallSignatures(model: string): boolean {
  const major = /^(?:models\/)?gemini-(\d+)/.exec(model)?.[1];
  return major !== undefined && Number(major) >= 3;
}
