import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS, ProxyError, errorBody } from '../../src/core/errors.js';

describe('the error table', () => {
  const doc = readFileSync(resolve(import.meta.dirname, '../../docs/errors.md'), 'utf8');
  const rows = new Map(
    [...doc.matchAll(/^\| `([a-z_]+)` \| (\d+) \| ([a-z_]+) \|/gm)].map((m) => [m[1]!, { status: Number(m[2]), type: m[3]! }]),
  );

  it('docs/errors.md lists every code with its status and type, and nothing else', () => {
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERRORS).sort());
    for (const [code, spec] of Object.entries(ERRORS)) {
      expect(rows.get(code), code).toEqual({ status: spec.status, type: spec.type });
    }
  });

  it('renders one OpenAI-shaped body, filling the message template', () => {
    const err = new ProxyError('model_not_found', { model: 'gpt-x', known: 'a, b' }, { param: 'model' });
    expect(err.status).toBe(404);
    expect(errorBody(err)).toEqual({
      error: { message: 'The model "gpt-x" does not exist. Known models: a, b.', type: 'invalid_request_error', param: 'model', code: 'model_not_found' },
    });
  });

  it('gives a code the CLI prints the HTTP type of its status when it answers a request', () => {
    expect(errorBody(new ProxyError('bad_argument', { detail: 'x' })).error).toMatchObject({ type: 'invalid_request_error', code: 'bad_argument' });
    expect(errorBody(new ProxyError('log_locked', { file: 'f', pid: 1 })).error).toMatchObject({ type: 'invalid_request_error', code: 'log_locked' });
    expect(errorBody(new ProxyError('log_malformed', { file: 'f', line: 1, detail: 'd' })).error).toMatchObject({ type: 'server_error', code: 'log_malformed' });
  });
});
