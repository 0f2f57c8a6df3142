/**
 * Ollama's KV cache as the simulator plays it: one loaded model with one slot, which holds the
 * previous prompt. A request reuses the longest common prefix of its tokens with that prompt and
 * evaluates the rest (llama.cpp always evaluates at least the last token). Loading a model, or
 * loading it again with another `num_ctx`, or after its keep-alive ran out, empties the slot.
 *
 * Time is reported, not spent: prompt_eval_duration is uncached tokens x a fixed cost, which is the
 * figure the cache check reads (a sub-second prompt_eval after an elision: docs/decisions.md,
 * Ollama prompt-eval as the cache check), and what 85K tokens cost on an RTX 4090 (40-48 s) sets
 * the scale.
 */
import { TOKEN_BYTES, type TokenSeq } from '../tokens.js';

/** 0.5 ms a prompt token: 85K uncached tokens take about 42 s, as measured on that GPU. */
export const PROMPT_EVAL_NS_PER_TOKEN = 500_000;
/** 40 tokens a second of output. */
export const EVAL_NS_PER_TOKEN = 25_000_000;
/** Loading the model from disk. */
export const LOAD_NS = 2_000_000_000;
/** A model already loaded. */
export const WARM_LOAD_NS = 60_000;

export interface Admission {
  /** The model was (re)loaded for this request: the slot started empty. */
  loaded: boolean;
  /** Prompt tokens read from the slot. */
  cachedTokens: number;
}

export class KvSlot {
  #model: string | null = null;
  #numCtx = 0;
  #prompt: Buffer | null = null;
  /** When the model unloads; null: never. */
  #expiresAt: number | null = null;

  /** Loads the model if needed, reads the slot, and keeps this prompt in it. */
  admit(model: string, numCtx: number, tokens: TokenSeq, now: number): Admission {
    const expired = this.#expiresAt !== null && now >= this.#expiresAt;
    const loaded = this.#model !== model || this.#numCtx !== numCtx || expired;
    if (loaded) {
      this.#model = model;
      this.#numCtx = numCtx;
      this.#prompt = null;
    }
    const common = this.#prompt === null ? 0 : commonPrefix(this.#prompt, tokens.bytes);
    const cachedTokens = Math.max(0, Math.min(Math.floor(common / TOKEN_BYTES), tokens.count - 1));
    this.#prompt = tokens.bytes;
    return { loaded, cachedTokens };
  }

  /** After a reply: the model stays loaded for its keep-alive (null: for ever; 0: unloads now). */
  release(keepAliveMs: number | null, now: number): void {
    if (keepAliveMs === 0) this.reset();
    else this.#expiresAt = keepAliveMs === null ? null : now + keepAliveMs;
  }

  reset(): void {
    this.#model = null;
    this.#prompt = null;
    this.#expiresAt = null;
  }
}

function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  // Eight bytes at a time while they agree; the prompts are long and usually share most of it.
  while (i + 8 <= n && a.readBigUInt64LE(i) === b.readBigUInt64LE(i)) i += 8;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
