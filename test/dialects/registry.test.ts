import { describe, expect, it } from 'vitest';
import { isProxyError } from '../../src/core/errors.js';
import type { WireFormat } from '../../src/core/route.js';
import { openaiChat } from '../../src/dialects/openai-chat/index.js';
import { DIALECTS, dialectFor } from '../../src/dialects/registry.js';

describe('dialect registry', () => {
  it('names every wire format, each dialect under its own wire', () => {
    const wires: WireFormat[] = ['openai-chat', 'anthropic-messages', 'ollama-chat', 'openai-responses', 'gemini'];
    expect(Object.keys(DIALECTS).sort()).toStrictEqual([...wires].sort());
    for (const [wire, dialect] of Object.entries(DIALECTS)) if (dialect !== undefined) expect(dialect.wire).toBe(wire);
  });

  it('gives the openai-chat dialect, which sends its key as a bearer token', () => {
    expect(dialectFor('openai-chat')).toBe(openaiChat);
    expect(openaiChat.authHeaders('sk-test')).toStrictEqual({ authorization: 'Bearer sk-test' });
  });

  it('raises internal_error for a wire format without a dialect', () => {
    let caught: unknown;
    try {
      dialectFor('no-such-wire' as WireFormat);
    } catch (err) {
      caught = err;
    }
    expect(isProxyError(caught) && caught.code).toBe('internal_error');
  });
});
