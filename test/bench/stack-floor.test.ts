/**
 * The durable floor on prefix-proxy's stack (bench/peers/stack-floor.ts) does the floor's work the
 * way the proxy does it: the upstream always asked to stream, a client that did not stream given
 * one JSON body made of the events, a streaming client the events as they came, and each
 * conversation's request and reply logged in its own file before the answer ends.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackFloor } from '../../bench/peers/stack-floor.js';

const EVENTS = [
  { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: 'Hello ' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: 'world' }, finish_reason: null }] },
  { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  { choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } },
].map((e) => `data: ${JSON.stringify(e)}\n\n`);
const SSE = EVENTS.join('') + 'data: [DONE]\n\n';

const OVERLOADED = '{"error":{"message":"overloaded","type":"server_error"}}';

const bodies: Record<string, unknown>[] = [];
let upstream: Server;
let dir: string;
let floor: ReturnType<typeof stackFloor>;
let origin: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      bodies.push(body);
      if (body['model'] === 'overloaded') {
        res.writeHead(503, { 'content-type': 'application/json' }).end(OVERLOADED);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // An event cut across two writes, as a network may deliver it.
      res.write(SSE.slice(0, 40));
      res.write(SSE.slice(40, 200));
      res.end(SSE.slice(200));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  dir = mkdtempSync(join(tmpdir(), 'stack-floor-'));
  floor = stackFloor(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, dir);
  origin = await floor.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await floor.close();
  await new Promise((resolve) => upstream.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const post = (body: object) => fetch(`${origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const lines = (file: string) => readFileSync(join(dir, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the durable floor on prefix-proxy\'s stack', () => {
  it('asks the upstream to stream and answers a client that did not with one body made of the events', async () => {
    const messages = [{ role: 'system', content: 'Be terse.' }, { role: 'user', content: 'first question' }];
    const res = await post({ model: 'm', messages });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const answer = await res.json() as { choices: { message: { role: string; content: string } }[]; usage: unknown };
    expect(answer.choices[0]!.message).toEqual({ role: 'assistant', content: 'Hello world' });
    expect(answer.usage).toEqual({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
    expect(bodies.at(-1)).toEqual({ model: 'm', messages, stream: true, stream_options: { include_usage: true } });
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    const logged = lines(files[0]!);
    expect(logged.map((l) => l['type'])).toEqual(['request', 'reply']);
    expect(logged[0]!['message']).toEqual(messages[1]);
    expect(logged[1]!['message']).toEqual({ role: 'assistant', content: 'Hello world' });
  });

  it('passes a streaming client the events as they came, and logs its next turn in the same file', async () => {
    const messages = [{ role: 'user', content: 'first question' }, { role: 'assistant', content: 'Hello world' }, { role: 'user', content: 'and then?' }];
    const res = await post({ model: 'm', messages, stream: true });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await res.text()).toBe(SSE);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    const logged = lines(files[0]!);
    expect(logged.map((l) => l['type'])).toEqual(['request', 'reply', 'request', 'reply']);
    expect(logged[2]!['message']).toEqual(messages[2]);
    expect(logged[3]!['stream']).toBe(SSE);
  });

  it('passes an upstream error on with its status, streamed or not, so a failed run is not counted as answered', async () => {
    for (const stream of [false, true]) {
      const res = await post({ model: 'overloaded', messages: [{ role: 'user', content: `an error, stream ${stream}` }], stream });
      expect(res.status).toBe(503);
      expect(await res.text()).toBe(OVERLOADED);
    }
  });

  it('gives another conversation a file of its own', async () => {
    const before = readdirSync(dir).length;
    await (await post({ model: 'm', messages: [{ role: 'user', content: 'another conversation' }] })).json();
    expect(readdirSync(dir)).toHaveLength(before + 1);
  });
});
