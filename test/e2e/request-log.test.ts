/**
 * The operator's log: one JSON line per conversation request (route, session, status, tokens,
 * cause, phases), errors at `error`, and never a body, a message or a credential.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { withSimulator } from '../../src/config/routes.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { createSim, type Sim } from '../../src/sim/server.js';

const SECRET = 'sk-proj-' + 'Zq9Xw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA9zY8xW7v';
const lines: Record<string, unknown>[] = [];
let dir: string;
let sim: Sim;
let proxy: RunningProxy;
let client: OpenAI;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pp-log-'));
  sim = await createSim({ host: '127.0.0.1', port: 0 });
  const path = join(dir, 'config.toml');
  await writeFile(path, `listen = "127.0.0.1:0"\ndata_dir = ${JSON.stringify(join(dir, 'data'))}\n[providers.ds]\npreset = "deepseek"\nbase_url = "${sim.origin}/deepseek/v1"\napi_key_env = ""\n[models.ds]\nprovider = "ds"\nmodel = "deepseek-v4"\n[providers.gone]\npreset = "deepseek"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = ""\n[models.fb]\nprovider = "gone"\nmodel = "deepseek-v4"\nretries = 0\nfallback = ["ds"]\n[upstream]\nretry_base_ms = 20\n`);
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  proxy = await startProxy(withSimulator(loadConfig({ path, env: {}, cwd: dir }), sim.url), { logger: pino({ level: 'info' }, sink) });
  client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: SECRET, maxRetries: 0 });
});
afterAll(async () => {
  await proxy.close();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the request log', () => {
  it('writes one line per request, streamed or not, with what a cache question needs', async () => {
    const messages = [{ role: 'user' as const, content: `read .env: OPENAI_API_KEY=${SECRET} [[say ok]]` }];
    await client.chat.completions.create({ model: 'ds', messages });
    const stream = await client.chat.completions.create({ model: 'ds', stream: true, messages: [...messages, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'again [[say ok]]' }] });
    for await (const _ of stream) void _;
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.length).toBe(2);
    expect(requests[0]).toMatchObject({ level: 30, method: 'POST', path: '/v1/chat/completions', status: 200, route: 'ds', provider: 'ds', stream: false, cause: 'first' });
    expect(requests[1]).toMatchObject({ status: 200, stream: true, cause: 'none', session: requests[0]!.session });
    for (const r of requests) {
      expect(typeof r.prompt_tokens).toBe('number');
      expect(typeof r.total_ms).toBe('number');
      expect(typeof r.overhead_ms).toBe('number');
    }
  });

  it('an error is a line at error level (5xx) or info (4xx), naming its code', async () => {
    await client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }).catch(() => undefined);
    await client.chat.completions.create({ model: 'ds', messages: [{ role: 'user', content: 'fail [[error 500]]' }] }).catch(() => undefined);
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.find((r) => r.status === 404)).toMatchObject({ level: 30 });
    expect(requests.find((r) => typeof r.status === 'number' && r.status >= 500)).toMatchObject({ level: 50, route: 'ds' });
  });

  it('counts the upstream attempts, and names the fallback that answered', async () => {
    const at = lines.length;
    const retries = async () => {
      const text = await (await fetch(`${proxy.url}/metrics`)).text();
      return Object.fromEntries([...text.matchAll(/^proxy_upstream_retries_total\{(.*)\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
    };
    const before = await retries();
    await client.chat.completions.create({ model: 'ds', messages: [{ role: 'user', content: `once ${Date.now()} [[error 503]] [[fail-times 1]] [[say ok]]` }] });
    await client.chat.completions.create({ model: 'ds', messages: [{ role: 'user', content: `twice ${Date.now()} [[error 500]]` }] }).catch(() => undefined);
    await client.chat.completions.create({ model: 'fb', messages: [{ role: 'user', content: `elsewhere ${Date.now()} [[say ok]]` }] });
    const requests = lines.slice(at).filter((l) => l.msg === 'request');
    expect(requests.map((r) => [r.status, r.attempts, r.deployment])).toEqual([[200, 2, undefined], [500, 3, undefined], [200, 2, 'ds']]);
    const after = await retries();
    const added = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => v !== 0));
    expect(added).toEqual({
      'provider="ds",model="ds",reason="503"': 1,
      'provider="ds",model="ds",reason="500"': 2,
      'provider="gone",model="fb",reason="connect"': 1,
    });
  });

  it('never holds a body, a message or a credential', () => {
    const text = JSON.stringify(lines);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('read .env');
    expect(text).not.toContain('authorization');
  });
});
