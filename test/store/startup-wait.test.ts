/**
 * `proxy serve` waits at its start for a database not reachable yet, and only for that: the
 * retries, their bound, and what is not waited out.
 */
import { describe, expect, it } from 'vitest';
import { isProxyError } from '../../src/core/errors.js';
import { connectWhenThere } from '../../src/store/pg/startup-wait.js';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('connectWhenThere', () => {
  it('tries again while the database is not there, and gives what connects', async () => {
    let tries = 0;
    const waits: number[] = [];
    const got = await connectWhenThere(async () => {
      tries++;
      if (tries === 1) throw refused();
      // Starting up: PostgreSQL's own "not now".
      if (tries === 2) throw Object.assign(new Error('the database system is starting up'), { code: '57P03' });
      return 'connected';
    }, 10_000, (_err, retryIn) => waits.push(retryIn));
    expect(got).toBe('connected');
    expect(tries).toBe(3);
    expect(waits).toEqual([250, 500]);
  });

  it('fails at once on what waiting would not mend', async () => {
    let tries = 0;
    const denied = Object.assign(new Error('password authentication failed for user "proxy"'), { code: '28P01' });
    await expect(connectWhenThere(async () => {
      tries++;
      throw denied;
    }, 10_000, () => undefined)).rejects.toBe(denied);
    expect(tries).toBe(1);
  });

  it('gives up after the wait with store_not_reached, naming the last error', async () => {
    let clock = 0;
    const started = Date.now();
    const err = await connectWhenThere(async () => {
      clock += 400;
      throw refused();
    }, 1000, () => undefined, () => clock).catch((e: unknown) => e);
    expect(isProxyError(err) && err.code).toBe('store_not_reached');
    expect((err as Error).message).toContain('ECONNREFUSED');
    expect((err as Error).message).toContain('1 s');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('with no wait, the first failure is the answer', async () => {
    let tries = 0;
    const err = await connectWhenThere(async () => {
      tries++;
      throw refused();
    }, 0, () => undefined).catch((e: unknown) => e);
    expect(isProxyError(err) && err.code).toBe('store_not_reached');
    expect(tries).toBe(1);
  });
});
