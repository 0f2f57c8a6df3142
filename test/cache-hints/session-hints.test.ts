import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CODEX_HEADERS, hintsFor, hintsRecord, sessionKey } from '../../src/cache-hints/session-hints.js';
import { resolveRoute, withSimulator, type Route } from '../../src/config/routes.js';
import { loadToml } from '../config/helpers.js';
import { sha256Hex } from '../../src/core/canonical.js';

const config = withSimulator(loadToml([
  '[providers.openrouter]', 'preset = "openrouter"',
  '[providers.fireworks]', 'preset = "fireworks"',
  '[providers.xai]', 'preset = "xai"',
  '[providers.baseten]', 'preset = "baseten"',
  '[providers.zai]', 'preset = "zai"',
  '[providers.openai]', 'preset = "openai"',
  '[providers.plan]', 'preset = "openai"', 'codex_headers = true',
  '[providers.groq]', 'preset = "groq"',
  '[models.claude]', 'provider = "openrouter"', 'model = "anthropic/claude-sonnet-4.6"', 'cache_control = "1h"',
  '[models.hdr]', 'provider = "openrouter"', 'model = "m"', 'cache_key = "header"', 'cache_control = "ephemeral"',
  '[models.off]', 'provider = "openrouter"', 'model = "m"', 'cache_key = "off"',
  '[models.plan-off]', 'provider = "plan"', 'model = "gpt-6"', 'cache_key = "off"',
  '[models.plan-hdr]', 'provider = "plan"', 'model = "gpt-6"', 'cache_key = "header"',
  '[models.bp]', 'provider = "openai"', 'model = "gpt-6"', 'cache_control = "ephemeral"',
].join('\n')), 'http://127.0.0.1:1/v1');

const route = (name: string): Route => resolveRoute(config, name);
const ID = 'session-2026-10-07T19:41:39Z-eef2d1d4';
const KEY = sha256Hex(ID);

describe('sessionKey', () => {
  it('is the sha256 hex of the id', () => {
    expect(sessionKey(ID)).toBe(KEY);
    expect(sessionKey(ID)).toMatch(/^[0-9a-f]{64}$/);
    expect(sessionKey('a')).not.toBe(sessionKey('b'));
  });
});

describe('hintsFor', () => {
  it('session: body key plus the preset affinity headers, and top-level cache_control', () => {
    expect(hintsFor(route('claude'), ID)).toEqual({
      sessionKey: KEY, bodyKey: true, headers: { 'x-session-id': KEY }, cacheControl: '1h', cacheControlAt: 'top-level',
    });
  });

  it('header: the headers only', () => {
    expect(hintsFor(route('hdr'), ID)).toEqual({
      sessionKey: KEY, bodyKey: false, headers: { 'x-session-id': KEY }, cacheControl: 'ephemeral', cacheControlAt: 'top-level',
    });
  });

  it('off: nothing', () => {
    expect(hintsFor(route('off'), ID)).toEqual({ bodyKey: false, headers: {} });
    expect(hintsFor(route('plan-off'), ID)).toEqual({ bodyKey: false, headers: {} });
  });

  it('uses each preset\'s affinity headers', () => {
    const headersOf = (name: string) => hintsFor(route(name), ID).headers;
    expect(headersOf('fireworks/m')).toEqual({ 'x-session-affinity': KEY });
    expect(headersOf('xai/grok-4')).toEqual({ 'x-grok-conv-id': KEY });
    expect(headersOf('baseten/m')).toEqual({ 'x-baseten-session-id': KEY, 'x-session-affinity': KEY });
    expect(headersOf('zai/glm-5')).toEqual({ 'x-session-id': KEY });
    expect(headersOf('openai/gpt-6')).toEqual({});
    expect(headersOf('sim/sim-1')).toEqual({ 'x-session-id': KEY });
    expect(hintsFor(route('openai/gpt-6'), ID)).toMatchObject({ sessionKey: KEY, bodyKey: true });
    expect(hintsFor(route('xai/grok-4'), ID).bodyKey).toBe(false);
  });

  it('hands over no key when nothing would carry it (header mode, no headers)', () => {
    expect(hintsFor(route('groq/llama'), ID)).toEqual({ bodyKey: false, headers: {} });
  });

  it('adds Codex session headers for a ChatGPT-plan credential whenever the key is sent', () => {
    const expected = Object.fromEntries(CODEX_HEADERS.map((h) => [h, KEY]));
    expect(hintsFor(route('plan/gpt-6'), ID)).toEqual({ sessionKey: KEY, bodyKey: true, headers: expected });
    expect(hintsFor(route('plan-hdr'), ID)).toEqual({ sessionKey: KEY, bodyKey: false, headers: expected });
    expect(Object.keys(expected)).toEqual(['session-id', 'thread-id', 'x-client-request-id']);
  });

  it('asks for breakpoints where the upstream takes no top-level cache_control', () => {
    expect(hintsFor(route('bp'), ID)).toMatchObject({ cacheControl: 'ephemeral', cacheControlAt: 'breakpoints' });
  });

  it('never puts the raw session id in any hint', () => {
    const names = ['claude', 'hdr', 'off', 'plan/gpt-6', 'plan-hdr', 'fireworks/m', 'xai/g', 'baseten/m', 'zai/g', 'sim/s', 'bp'];
    fc.assert(
      fc.property(fc.string({ minLength: 6, maxLength: 80 }).map((s) => `id-${s}`), (id) => {
        for (const name of names) {
          const hints = hintsFor(route(name), id);
          expect(JSON.stringify(hints)).not.toContain(JSON.stringify(id).slice(1, -1));
          expect(JSON.stringify(hintsRecord(hints))).not.toContain(sessionKey(id));
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('hintsRecord', () => {
  it('says what was sent without the key', () => {
    const record = hintsRecord(hintsFor(route('claude'), ID));
    expect(record).toEqual({ session_key: true, headers: ['x-session-id'], cache_control: '1h' });
    expect(JSON.stringify(record)).not.toContain(KEY);
    expect(hintsRecord(hintsFor(route('plan-hdr'), ID))).toEqual({ headers: ['session-id', 'thread-id', 'x-client-request-id'] });
    expect(hintsRecord(hintsFor(route('off'), ID))).toEqual({});
    expect(hintsRecord(hintsFor(route('bp'), ID), { cacheBreakpoints: 3 })).toEqual({ session_key: true, cache_control: 'ephemeral', breakpoints: 3 });
  });
});
