import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';

let sim: Sim;
beforeAll(async () => {
  sim = await createSim();
});
afterAll(async () => {
  await sim.close();
});

/** Sends a request and destroys the connection after the first body bytes, or after 40 ms. */
function abortAfter(body: unknown, readFirst: boolean): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`${sim.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.once('data', () => {
        if (readFirst) req.destroy();
      });
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.on('socket', () => {
      if (!readFirst) setTimeout(() => req.destroy(), 40);
    });
    req.end(JSON.stringify(body));
  });
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await sleep(10);
}

describe('a client that goes away', () => {
  it('mid-stream: the record says closedEarly, with the time, and the stream stops', async () => {
    const body = { model: 'm', stream: true, messages: [{ role: 'user', content: '[[slow 30]] [[len 400]]' }] };
    await abortAfter(body, true);
    const record = sim.requests.at(-1)!;
    await until(() => record.closedEarly);
    expect(record.closedEarly).toBe(true);
    expect(record.closedAt).not.toBeNull();
    expect(record.closedAt!).toBeGreaterThanOrEqual(record.firstByteAt!);
    expect(record.status).toBe(200);
    // The reply had ~100 chunks at 30 ms each; it must not still be sending.
    await sleep(100);
    expect(record.finishedAt).toBeNull();
  });

  it('before a slow non-stream reply: closedEarly too, and no first byte', async () => {
    await abortAfter({ model: 'm', messages: [{ role: 'user', content: '[[slow 300]]' }] }, false);
    const record = sim.requests.at(-1)!;
    await until(() => record.closedEarly);
    expect(record.closedEarly).toBe(true);
    expect(record.firstByteAt).toBeNull();
  });

  it('a complete reply is not closedEarly', async () => {
    const r = await fetch(`${sim.url}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    await r.text();
    const record = sim.requests.at(-1)!;
    await until(() => record.finishedAt !== null);
    expect(record.closedEarly).toBe(false);
    expect(record.finishedAt).not.toBeNull();
  });
});
