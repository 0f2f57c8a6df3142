/**
 * The simulator's encrypted reasoning: base64url of an HMAC-SHA256 tag and the payload it covers
 * (the digest of the prompt the reasoning was made after, and the reasoning text). Opaque to a
 * client, deterministic for a given request, and checkable when it comes back: one changed
 * character and `openReasoning` gives null, which the API answers with a 400
 * `invalid_encrypted_content`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Not a secret: the simulator only needs to notice a change. */
const KEY = 'prefix-proxy-sim/reasoning/v1';
const TAG_BYTES = 32;

export interface SealedReasoning {
  /** SHA-256 hex of the rendered prompt the reasoning followed. */
  prompt: string;
  text: string;
}

function tag(payload: Buffer): Buffer {
  return createHmac('sha256', KEY).update(payload).digest();
}

export function sealReasoning(value: SealedReasoning): string {
  const payload = Buffer.from(JSON.stringify({ p: value.prompt, t: value.text }), 'utf8');
  return Buffer.concat([tag(payload), payload]).toString('base64url');
}

/** The sealed value, or null when the text is not one this simulator made, unchanged. */
export function openReasoning(sealed: string): SealedReasoning | null {
  if (!/^[A-Za-z0-9_-]+$/.test(sealed)) return null;
  const bytes = Buffer.from(sealed, 'base64url');
  // base64url decoding skips what it cannot read; only the exact encoding round-trips.
  if (bytes.length <= TAG_BYTES || bytes.toString('base64url') !== sealed) return null;
  const payload = bytes.subarray(TAG_BYTES);
  if (!timingSafeEqual(bytes.subarray(0, TAG_BYTES), tag(payload))) return null;
  try {
    const value = JSON.parse(payload.toString('utf8')) as { p?: unknown; t?: unknown };
    return typeof value.p === 'string' && typeof value.t === 'string' ? { prompt: value.p, text: value.t } : null;
  } catch {
    return null;
  }
}
