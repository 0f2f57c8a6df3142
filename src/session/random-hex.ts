/**
 * Random hex for ids (a new session's, a reply's), drawn from a pool refilled 4 KB at a time:
 * each `randomBytes` call costs a system call, ~9 µs here against ~0.3 µs from the pool, and a new
 * conversation takes two. Not for secrets: an id only has to be unlikely to repeat.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/** `bytes` random bytes as lowercase hex (`2 * bytes` characters). */
export function randomHex(bytes: number): string {
  if (bytes > POOL_BYTES) throw new RangeError(`randomHex: at most ${POOL_BYTES} bytes`);
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}
