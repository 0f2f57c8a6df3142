/** The client's wire headers onto the upstream request (src/proxy/forwarded-headers.ts): replaced, or joined for a list. */
import { describe, expect, it } from 'vitest';
import { anthropicMessages } from '../../src/dialects/anthropic-messages/index.js';
import { addForwarded, forwardedHeaders } from '../../src/proxy/forwarded-headers.js';

describe('forwarded headers', () => {
  it('joins the client\'s betas to the encoder\'s, each once; other headers are the client\'s', () => {
    const headers: Record<string, string> = { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'thinking-binding-controls-2026-08-01' };
    const forwarded = forwardedHeaders({ 'anthropic-beta': 'interleaved-thinking-2025-05-14, thinking-binding-controls-2026-08-01', 'anthropic-version': '2023-06-01', 'x-other': 'no' }, anthropicMessages, {});
    addForwarded(headers, forwarded, anthropicMessages);
    expect(headers).toStrictEqual({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'thinking-binding-controls-2026-08-01,interleaved-thinking-2025-05-14' });
    const plain: Record<string, string> = { 'anthropic-version': '2023-06-01' };
    addForwarded(plain, { 'anthropic-version': '2024-01-01', 'anthropic-beta': 'a,b' }, anthropicMessages);
    expect(plain).toStrictEqual({ 'anthropic-version': '2024-01-01', 'anthropic-beta': 'a,b' });
  });
});
