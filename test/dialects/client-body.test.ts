/**
 * What every inbound wire checks of a body the same way (src/dialects/client-body.ts), through each
 * wire's own parse: a number literal past the double range, which JSON.parse reads as Infinity, is
 * the client's 400 naming the field, wherever a field takes any JSON (it was a 500 from the
 * canonical form, and the log would have held `null`).
 */
import { describe, expect, it } from 'vitest';
import { ProxyError } from '../../src/core/errors.js';
import { anthropicMessagesInbound } from '../../src/dialects/anthropic-messages/inbound.js';
import { openaiChatInbound } from '../../src/dialects/openai-chat/inbound.js';
import { openaiResponsesInbound } from '../../src/dialects/openai-responses/inbound.js';
import type { InboundDialect } from '../../src/dialects/types.js';
import { testImages } from './inbound.case.js';

function refusal(inbound: InboundDialect, text: string): ProxyError {
  try {
    inbound.parse(JSON.parse(text), testImages);
  } catch (err) {
    if (err instanceof ProxyError) return err;
    throw err;
  }
  throw new Error('parsed');
}

const CASES: [string, InboundDialect, string, string][] = [
  ['openai-chat', openaiChatInbound, '{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","maximum":1e400}}}]}', 'tools[0].function.parameters.maximum'],
  ['openai-chat', openaiChatInbound, '{"model":"m","messages":[{"role":"user","content":"x"}],"user_budget":-1e400}', 'user_budget'],
  ['anthropic-messages', anthropicMessagesInbound, '{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"n":[1,1e999]}}]}]}', 'messages[0].content[0].input.n[1]'],
  ['openai-responses', openaiResponsesInbound, '{"model":"m","input":"x","tool_choice":{"type":"function","name":"f","weight":1e400}}', 'tool_choice.weight'],
];

describe('a number past the double range in a client body', () => {
  it.each(CASES)('%s: a 400 naming %s', (_wire, inbound, text, param) => {
    const err = refusal(inbound, text);
    expect(err).toMatchObject({ code: 'invalid_request', status: 400, param });
    expect(err.message).toContain(param);
    expect(err.message).toContain('Infinity');
  });

  it.each(CASES)('%s: the same body with a finite number parses', (_wire, inbound, text) => {
    expect(() => inbound.parse(JSON.parse(text.replace(/1e(400|999)/, '1e300')), testImages)).not.toThrow();
  });
});
