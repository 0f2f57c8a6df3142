/**
 * A replica started before its database, or while the database restarts, waits for it a while
 * instead of failing at once: a team's replicas and their database start in any order (a deploy, a
 * host's boot), and a process that gave up would stay down until something restarted it
 * (docs/scaling.md, Outages). Only what says the database cannot be reached is waited out
 * (unavailable.ts); a wrong password, a missing database or one in the wrong encoding fails at once.
 */
import { ProxyError } from '../../core/errors.js';
import { isUnavailable } from './unavailable.js';

/** Delays between tries: short first, so a restart of a few seconds costs little. */
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5000;

/**
 * `connect()` until it succeeds, fails with an error that is not the database's absence, or
 * `waitMs` has passed since the first try (then `store_not_reached`, naming the last error).
 * `onWait` hears each error waited out.
 */
export async function connectWhenThere<T>(connect: () => Promise<T>, waitMs: number, onWait: (err: Error, retryInMs: number, leftMs: number) => void, now = Date.now): Promise<T> {
  const deadline = now() + waitMs;
  let delay = FIRST_DELAY_MS;
  for (;;) {
    try {
      return await connect();
    } catch (err) {
      if (!isUnavailable(err)) throw err;
      const left = deadline - now();
      if (left <= 0) throw new ProxyError('store_not_reached', { seconds: waitMs / 1000, detail: (err as Error).message });
      const wait = Math.min(delay, left);
      onWait(err as Error, wait, left);
      await new Promise((resolve) => setTimeout(resolve, wait));
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}
