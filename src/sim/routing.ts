/**
 * Which replica serves a request: the session key's hash when one is sent, else the policy's
 * choice. The PRNG is seeded so a `random` run is reproducible.
 */
import { sha256Hex } from './hash.js';
import type { TokenSeq } from './tokens.js';
import type { SimRouting } from './types.js';

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

/**
 * mulberry32 (Tommy Ettinger's public-domain 32-bit generator): floats in [0, 1), the same
 * sequence for a seed, so a `random` run replays.
 */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 2 ** 32;
  };
}

function keyHash(key: string): number {
  return Number.parseInt(sha256Hex(key).slice(0, 8), 16);
}

