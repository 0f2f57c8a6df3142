import { describe, expect, it } from 'vitest';
import { parseSimArgs, runSimCommand, SimArgumentError } from '../../src/sim/cli.js';
import { fetchJson } from './client.js';

describe('proxy sim', () => {
  it('parses its options', () => {
    expect(parseSimArgs(['--port', '0', '--replicas', '4', '--routing', 'random', '--mode', 'deepseek', '--seed', '7', '--ttl-ms', '1000'])).toEqual({
      port: 0, host: '127.0.0.1', replicas: 4, routing: 'random', mode: 'deepseek', seed: 7, ttlMs: 1000, requireReasoning: false,
    });
  });

  it('rejects bad values with a message naming the option', () => {
    expect(() => parseSimArgs(['--routing', 'sticky'])).toThrow(/--routing must be one of session, prefix, random/);
    expect(() => parseSimArgs(['--replicas', '0'])).toThrow(/--replicas must be an integer >= 1/);
    expect(() => parseSimArgs(['--bogus'])).toThrow(SimArgumentError);
  });

  it('serves until stopped, printing the URL first', async () => {
    let out = '';
    const stop = new AbortController();
    const running = runSimCommand(['--port', '0', '--mode', 'cerebras'], { stdout: { write: (t: string) => (out += t) }, signal: stop.signal });
    for (let i = 0; i < 100 && !out.includes('\n'); i++) await new Promise((r) => setTimeout(r, 10));
    const url = out.split('\n')[0]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const r = await fetchJson(`${url}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(typeof r.choices[0].message.reasoning).toBe('string');
    stop.abort();
    await running;
    await expect(fetch(`${url}/models`)).rejects.toThrow();
  });
});
