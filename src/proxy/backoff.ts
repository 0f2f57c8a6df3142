/**
 * When to try an upstream call again, as pure functions (the random source and the clock are
 * arguments): exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff
 * And Jitter"), unless the upstream said when, in `retry-after-ms` (OpenAI) or `retry-after`
 * (RFC 9110 10.2.3: seconds or an HTTP date), which is honoured up to the configured cap.
 */

export interface BackoffSettings {
  /** The first retry waits up to this long; each next one up to twice as long. */
  baseMs: number;
  /** No wait is longer, whatever the upstream asks. */
  maxDelayMs: number;
}

/** Why an attempt is tried again: the metric's `reason` label, a bounded set. */
export type RetryReason = 'connect' | 'connect_timeout' | 'reset' | 'stream' | '408' | '429' | '500' | '502' | '503' | '529';

/**
 * Statuses worth another try of the same bytes: rate limited (429), the server's own failures
 * (500, 502, 503) and Anthropic's `overloaded_error` (529, https://docs.anthropic.com/en/api/errors).
 * 408 is the server giving up on a slow request: the same request again is what it asks for.
 * Every other 4xx says the request itself is wrong; 504 is a gateway that already waited.
 */
const RETRIED_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 529]);

export function retryableStatus(status: number): RetryReason | undefined {
  return RETRIED_STATUSES.has(status) ? (String(status) as RetryReason) : undefined;
}

/** Full jitter: a uniform wait in [0, min(max, base * 2^retry)). `retry` counts from 0. */
export function jitteredDelay(retry: number, settings: BackoffSettings, random: () => number): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.baseMs * 2 ** Math.min(retry, 30));
  return Math.floor(random() * ceiling);
}

type Headers = Record<string, string | string[] | undefined>;

/** The wait the upstream asked for, in ms; undefined when it named none (or one that does not parse). */
export function retryAfterMs(headers: Headers, nowMs: number): number | undefined {
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms));
  const after = first(headers['retry-after']);
  if (after === undefined) return undefined;
  if (/^\s*\d+\s*$/.test(after)) return Number(after) * 1000;
  // Every HTTP date form starts with the day's name; Date.parse alone would read "-5" as a year.
  const date = /^\s*[A-Za-z]{3}/.test(after) ? Date.parse(after) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** The wait before retry number `retry` (from 0): the upstream's, capped, or the jittered backoff. */
export function retryDelay(retry: number, headers: Headers, settings: BackoffSettings, random: () => number, nowMs: number): number {
  const asked = retryAfterMs(headers, nowMs);
  return asked === undefined ? jitteredDelay(retry, settings, random) : Math.min(asked, settings.maxDelayMs);
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
