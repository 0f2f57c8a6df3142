/**
 * Whether a client marks a request as a retry: the OpenAI and Anthropic SDKs send
 * `x-stainless-retry-count` (0 on the first try); clients with idempotency keys repeat their
 * `Idempotency-Key`. Keys seen are remembered in a bounded LRU.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { LRUCache } from 'lru-cache';

export class RetrySignals {
  readonly #keys: LRUCache<string, true>;

  constructor(maxKeys = 10_000) {
    this.#keys = new LRUCache({ max: maxKeys });
  }

  isRetry(headers: IncomingHttpHeaders): boolean {
    const count = Number(first(headers['x-stainless-retry-count']));
    const key = first(headers['idempotency-key']);
    let repeated = false;
    if (key !== undefined && key !== '') {
      repeated = this.#keys.has(key);
      this.#keys.set(key, true);
    }
    return repeated || (Number.isInteger(count) && count > 0);
  }
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
