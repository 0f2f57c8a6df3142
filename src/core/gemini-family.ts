/**
 * Gemini 3 and later: the first call of each step of the current turn must come back with a thought
 * signature, whoever made the call, or the API answers 400; a call Gemini did not make goes with
 * Google's stand-in (ai.google.dev/gemini-api/docs/thought-signatures;
 * docs/decisions/0031-a-stand-in-for-signatures-gemini-never-made.md). One rule for both of
 * Gemini's wires: its own API and its OpenAI endpoint.
 */

/** The value Google names for a signature the caller does not have; the official SDKs send it too. */
export const STAND_IN_SIGNATURE = 'skip_thought_signature_validator';

/**
 * gemini-3 and later, with or without a `models/` prefix, and the aliases that name no version
 * (`gemini-flash-latest` follows the newest); not gemini-2.5 and before, which ask for none. A
 * stand-in sent to a model that does not ask is ignored, so an alias errs that way.
 */
export function requiresCallSignatures(model: string): boolean {
  const name = /^(?:models\/)?(gemini-.*)$/.exec(model)?.[1];
  if (name === undefined) return false;
  const major = /^gemini-(\d+)/.exec(name)?.[1];
  return major === undefined || Number(major) >= 3;
}
