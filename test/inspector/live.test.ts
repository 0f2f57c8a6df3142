/**
 * `GET /api/live` on a real port: a request answered after the stream opened arrives as one
 * `event: request` (every session, or the one asked for), and neither the client leaving nor the
 * server closing leaves a stream hanging.
 */
import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversation, getJson, startWorld, turn, type World } from './world.js';

let w: World;
beforeAll(async () => {
  w = await startWorld();
}, 30_000);
afterAll(async () => {
  await w?.close();
});

/** Opens the stream; `frames` fills as events arrive. */
async function watch(url: string): Promise<{ res: IncomingMessage; frames: string[]; close(): void; next(pred: (f: string) => boolean): Promise<string> }> {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, resolve);
    req.on('error', reject);
    req.end();
  });
  const frames: string[] = [];
  const waiters: { pred: (f: string) => boolean; resolve: (f: string) => void }[] = [];
  let buffer = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      frames.push(frame);
      for (const wt of [...waiters]) if (wt.pred(frame)) {
        waiters.splice(waiters.indexOf(wt), 1);
        wt.resolve(frame);
      }
    }
  });
  res.on('error', () => undefined);
  return {
    res, frames,
    close: () => res.destroy(),
    next: (pred) => {
      const found = frames.find(pred);
      return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ pred, resolve }));
    },
  };
}

function dataOf(frame: string): Record<string, unknown> {
  return JSON.parse(frame.split('\n').find((l) => l.startsWith('data: '))!.slice(6)) as Record<string, unknown>;
}

describe('GET /api/live', () => {
  it('streams a request answered after it connected, with its row', async () => {
    const feed = await watch(`${w.proxy.url}/api/live`);
    expect(feed.res.statusCode).toBe(200);
    expect(feed.res.headers['content-type']).toMatch(/^text\/event-stream/);
    await conversation(w, 'live-one', 1, 'pd');
    const frame = await feed.next((f) => f.startsWith('event: request'));
    const data = dataOf(frame);
    expect(data).toMatchObject({ status: 'ok', route: 'pd' });
    expect(await w.proxy.store.listSessions()).toContain(data.session);
    expect(typeof data.seq).toBe('number');
    expect(data.prompt_tokens).toBeGreaterThan(0);
    feed.close();
  });

  it('for one session, only that session\'s requests', async () => {
    await conversation(w, 'live-two', 1);
    const before = new Set(await w.proxy.store.listSessions());
    const messages = await conversation(w, 'live-three', 1);
    const id = (await w.proxy.store.listSessions()).find((s) => !before.has(s))!;
    const first = (await getJson<{ requests: { seq: number }[] }>(w, `/api/sessions/${id}`)).body.requests.at(-1)!.seq;
    const feed = await watch(`${w.proxy.url}/api/live?session=${id}`);
    // Its last reply is the same text as live-three's ("answer 0"): it must not draw live-three's next request.
    await conversation(w, 'live-other', 1);
    messages.push({ role: 'user', content: 'live-three again [[say more]]' });
    await turn(w, messages);
    // The first request's own row may come late (the index reads in bursts): the continuation's is the one after it.
    const frame = await feed.next((f) => f.startsWith('event: request') && (dataOf(f).seq as number) > first);
    expect(dataOf(frame).session).toBe(id);
    expect(feed.frames.filter((f) => f.startsWith('event: request')).every((f) => dataOf(f).session === id)).toBe(true);
    feed.close();
  });
});

describe('closing', () => {
  it('app.close() ends open streams instead of waiting on them', async () => {
    const other = await startWorld();
    const feed = await watch(`${other.proxy.url}/api/live`);
    const ended = new Promise<void>((resolve) => feed.res.on('close', () => resolve()));
    const started = Date.now();
    await other.close();
    await ended;
    expect(Date.now() - started).toBeLessThan(5000);
  }, 20_000);
});
