/**
 * A token bucket for `requests_per_minute`: it holds a minute's worth of requests and refills
 * continuously, so a client may burst up to its limit and then goes at the limit's pace. Time is
 * passed in (ms), so tests drive it with their own clock.
 */
export class TokenBucket {
  readonly #capacity: number;
  readonly #perMs: number;
  #tokens: number;
  #at: number;

  constructor(perMinute: number, now: number) {
    this.#capacity = perMinute;
    this.#perMs = perMinute / 60_000;
    this.#tokens = perMinute;
    this.#at = now;
  }

  /** Takes a token: 0 when there was one, else the ms until there will be (nothing is taken). */
  take(now: number): number {
    // A clock that stepped back refills nothing, and the bucket keeps its own latest time.
    if (now > this.#at) {
      this.#tokens = Math.min(this.#capacity, this.#tokens + (now - this.#at) * this.#perMs);
      this.#at = now;
    }
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.#tokens) / this.#perMs));
  }
}
