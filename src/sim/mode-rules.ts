/**
 * The interface of a mode's own rules, for what a flag in the modes table cannot say: opaque
 * reasoning the mode hands out and checks when it comes back (OpenRouter's `reasoning_details`,
 * Gemini's thought signatures), whether a request's prompt is cached, whether the reply shows
 * thinking. The engine calls these in a fixed order; none of them knows about HTTP.
 */
import type { ReplyPlan } from './replies.js';
import type { ChatRequest, WireMessage } from './request.js';
import type { OpaqueCounts } from './types.js';

/**
 * `auto`: the upstream caches prefixes by itself; `asked`: it caches because the request asked
 * (and reports what it wrote); `off`: it reads and writes nothing for this request.
 */
export type CachePolicy = 'auto' | 'asked' | 'off';

export interface ModeRules {
  /** Checks the opaque reasoning in the history; throws the upstream's own 400 for what it refuses. */
  checkHistory(req: ChatRequest): OpaqueCounts;
  caching(req: ChatRequest): CachePolicy;
  /** true: the reply shows thinking; false: it shows none; undefined: as the modes table says. */
  showsThinking(req: ChatRequest): boolean | undefined;
  /** Puts the mode's fields on a reply about to go out and remembers it; `promptDigest` is the prompt's `TokenSeq` digest. */
  decorate(plan: ReplyPlan, req: ChatRequest, promptDigest: string): void;
  /**
   * The message gives back its reasoning (one of `thoughts`, the texts a reply of ours had) in a
   * form the mode accepts besides its `backField`: opaque blocks, or an alias field.
   */
  givesReasoningBack(msg: WireMessage, thoughts: ReadonlySet<string>): boolean;
  clear(): void;
}

export function zeroOpaque(): OpaqueCounts {
  return { returned: 0, dropped: 0, withText: 0 };
}

export function addOpaque(into: OpaqueCounts, add: OpaqueCounts): void {
  into.returned += add.returned;
  into.dropped += add.dropped;
  into.withText += add.withText;
}

/** A Map that forgets its oldest entries past `max` (long benchmark runs). */
export class BoundedMap<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, V>();

  constructor(max = 100_000) {
    this.#max = max;
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  set(key: K, value: V): void {
    if (this.#map.size >= this.#max && !this.#map.has(key)) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
    this.#map.set(key, value);
  }

  clear(): void {
    this.#map.clear();
  }
}
