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
 * hash serves every block of a request (a copy is taken at each thinking block). The rendering is
 * the one the model reads: a block dropped by `block_binding` (block-binding.ts) is not in it, so a
 * reply is signed, and checked when it comes back, without the blocks its request dropped.
 * redacted_thinking blocks are neither checked nor dropped: the simulator never makes them.
 */
import { createHash, type Hash } from 'node:crypto';
import { boundElsewhere, type DroppedThinking } from './block-binding.js';
import { renderRequest, type Segment } from './render.js';
import type { MessagesRequest } from './request.js';

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

/**
 * Checks every thinking block against its prefix. With `prefix_mismatch_behavior` "error" (the
 * default) the first that fails is the API's 400. With "drop_block" it is left out of the prompt and
 * the check goes on over the prompt without it, so each later block whose prefix held it (every
 * block made before the change) fails in turn, while a block made after the change, by a request
 * that dropped the same blocks, was signed over the prompt without them and passes. The docs: "that
 * block and every later thinking block are invalid"; thinking Claude produces after the change
 * "stays valid". Returns the blocks left out, in request order, and the rendering the model reads.
 */
export function checkSignatures(req: MessagesRequest, segments: Segment[]): { dropped: DroppedThinking[]; segments: Segment[] } {
  const dropped: DroppedThinking[] = [];
  const leftOut = new Set<string>();
  let rendered = segments;
  for (;;) {
    const failed = firstMismatch(req, rendered);
    if (failed === undefined) return { dropped, segments: rendered };
    if (req.thinking?.prefixMismatch !== 'drop_block') throw boundElsewhere(failed.message, failed.block);
    dropped.push(failed);
    leftOut.add(`${failed.message}.${failed.block}`);
    // Prefix-stable (render.ts): what comes before the dropped block renders as it did.
    rendered = renderRequest(req, leftOut);
  }
}

function firstMismatch(req: MessagesRequest, segments: readonly Segment[]): DroppedThinking | undefined {
  const chain = new SignatureChain();
  for (const segment of segments) {
    const { message, block: index } = segment;
    if (message !== undefined && index !== undefined) {
      const turn = req.messages[message];
      const block = turn?.content[index];
      if (turn?.role === 'assistant' && block?.type === 'thinking' && chain.sign(String(block.thinking)) !== block.signature) return { message, block: index };
    }
    chain.add(segment);
  }
  return undefined;
}
