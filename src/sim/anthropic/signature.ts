/**
 * Thinking signatures bound to their prefix, as Anthropic's preserved-thinking models check them
 * ("A prefix check fails if system, tools, or an earlier message changed after Claude produced a
 * block. It also fails if a thinking block between others was left out or moved."):
 *
 *   signature = base64(sha256(SECRET || rendering of every segment before the block || 0 || thinking))
 *
 * A keyed hash over the same segments the cache reads (render.ts), so the check covers tools,
 * system, every earlier turn and the blocks before it in its own turn, and the block's own text;
 * `cache_control` is not rendered, so moving a breakpoint never breaks a signature. One running
 * hash serves every block of a request (a copy is taken at each thinking block).
 * redacted_thinking blocks are not checked: the simulator never makes them.
 */
import { createHash, type Hash } from 'node:crypto';
import { invalid, type MessagesRequest } from './request.js';
import type { Segment } from './render.js';

const SECRET = 'prefix-proxy-sim/thinking-signature/v1';

export class SignatureChain {
  readonly #hash: Hash = createHash('sha256').update(SECRET);

  /** The signature a thinking block with `thinking` would have here, after the segments added so far. */
  sign(thinking: string): string {
    return this.#hash.copy().update('\u0000').update(thinking).digest('base64');
  }

  add(segment: Segment): void {
    this.#hash.update(segment.text);
  }
}

/** Throws the API's 400 for the first thinking block whose signature does not match its prefix and text. */
export function checkSignatures(req: MessagesRequest, segments: readonly Segment[]): void {
  const chain = new SignatureChain();
  for (const segment of segments) {
    const block = segment.message === undefined || segment.block === undefined ? undefined : req.messages[segment.message]?.content[segment.block];
    if (block?.type === 'thinking' && req.messages[segment.message ?? -1]?.role === 'assistant') {
      if (chain.sign(String(block.thinking)) !== block.signature) {
        throw invalid(
          `${segment.where}: Invalid \`signature\` in \`thinking\` block (invalid signature: the block, or something before it, changed since it was made)`,
        );
      }
    }
    chain.add(segment);
  }
}
