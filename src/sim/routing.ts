/**
 * Which replica serves a request: the session key's hash when one is sent, else the policy's
 * choice. The PRNG is seeded so a `random` run is reproducible.
 */
import { sha256Hex } from '../core/canonical.js';
import type { TokenSeq } from './tokens.js';
import type { SimRouting } from './types.js';
import { mulberry32 } from '../core/prng.js';

/** OpenAI routes on "a hash of the initial prefix of the prompt ... typically the first 256 tokens". */
const ROUTING_PREFIX_TOKENS = 256;

export class Router {
  readonly #replicas: number;
  readonly #routing: SimRouting;
  readonly #seed: number;
  #next: () => number;

  constructor(replicas: number, routing: SimRouting, seed: number) {
    this.#replicas = replicas;
    this.#routing = routing;
    this.#seed = seed;
    this.#next = mulberry32(seed);
  }

  pick(sessionKey: string | null, tokens: TokenSeq): number {
    if (sessionKey !== null) return keyHash(sessionKey) % this.#replicas;
    switch (this.#routing) {
      case 'session':
        return keyHash('') % this.#replicas;
      case 'prefix':
        return tokens.prefixHash(ROUTING_PREFIX_TOKENS) % this.#replicas;
      case 'random':
        return Math.floor(this.#next() * this.#replicas);
    }
  }

  /** Back to the first draw of `#seed`. */
  reset(): void {
    this.#next = mulberry32(this.#seed);
  }
}

function keyHash(key: string): number {
  return Number.parseInt(sha256Hex(key).slice(0, 8), 16);
}

