/**
 * A resent history costs its new messages: the body memo hands a repeated message over as the same
 * frozen object and says which earlier list it repeats, and the openai-chat wire checks and
 * converts only what that list's request did not. What must
 * not change: a new message is still checked (its error names its place), a message that failed
 * fails again, an image still reaches the request's own sink, and what comes out equals a parse
 * from scratch.
 */
import { describe, expect, it } from 'vitest';
import { eachOnce, FrozenResults, ListResults, recordShared } from '../../src/core/list-lineage.js';
import { isProxyError } from '../../src/core/errors.js';
import { anthropicMessagesInbound } from '../../src/dialects/anthropic-messages/inbound.js';
import { openaiChatInbound } from '../../src/dialects/openai-chat/inbound.js';
import { openaiResponsesInbound } from '../../src/dialects/openai-responses/inbound.js';
import { HeadMemo } from '../../src/proxy/head-memo.js';
import type { ImagePart } from '../../src/core/types.js';
import { BodyMemo } from '../../src/proxy/body-memo.js';

/** Over the memo's lower bound, so bodies after the first share their repeated messages. */
const SYSTEM = { role: 'system', content: `You are an agent. ${'Follow the rules. '.repeat(15000)}` };

function body(messages: unknown[]): Buffer {
  return Buffer.from(JSON.stringify({ model: 'm', messages }));
}

const noImages = (): ImagePart => {
  throw new Error('no image expected');
};

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

function errorOf(fn: () => unknown): { code: string; param: string | null } {
  try {
    fn();
  } catch (err) {
    if (isProxyError(err)) return { code: err.code, param: err.param };
    throw err;
  }
  throw new Error('expected an error');
}

describe('ListResults', () => {
  it('gives what was kept for the elements a list shares with the earlier one it repeats, and nothing without a lineage or a kept result', () => {
    const results = new ListResults<string>();
    const first = Object.freeze([{ a: 1 }, { b: 2 }, { c: 3 }]);
    expect(results.reused(first)).toEqual([]);
    results.keep(first, ['A', 'B', 'C']);
    const second = Object.freeze([first[0], first[1], { d: 4 }]);
    recordShared(second, first, 2);
    expect(results.reused(second)).toEqual(['A', 'B']);
    const unrelated = Object.freeze([first[0]]);
    expect(results.reused(unrelated)).toEqual([]);
    const third = Object.freeze([first[0], first[1], second[2], { e: 5 }]);
    recordShared(third, second, 3);
    expect(results.reused(third)).toEqual([]);
    // A list the body memo will never hand over again (not frozen: a small body's) is not kept for.
    const open = [{ f: 6 }];
    results.keep(open, ['F']);
    const after = Object.freeze([open[0]]);
    recordShared(after, open, 1);
    expect(results.reused(after)).toEqual([]);
  });
});

describe('eachOnce', () => {
  it('makes only what an earlier list did not keep, keeps it frozen, and makes an element that is not keepable every time', () => {
    const results = new ListResults<{ n: number } | undefined>();
    const made: number[] = [];
    const make = (x: number) => {
      made.push(x);
      return { n: x * 10 };
    };
    const keepable = (x: number) => x !== 2;
    const first = Object.freeze([0, 1, 2, 3]);
    const one = eachOnce(results, first, first, 1, make, keepable);
    expect(one).toEqual([{ n: 10 }, { n: 20 }, { n: 30 }]);
    expect(made).toEqual([1, 2, 3]);
    expect(Object.isFrozen(one[0])).toBe(true);
    expect(Object.isFrozen(one[1])).toBe(false);
    const second = Object.freeze([0, 1, 2, 3, 4]);
    recordShared(second, first, 4);
    const two = eachOnce(results, second, second, 1, make, keepable);
    expect(made).toEqual([1, 2, 3, 2, 4]);
    expect(two[0]).toBe(one[0]);
    expect(two[2]).toBe(one[2]);
    expect(two[1]).not.toBe(one[1]);
    expect(two).toEqual([{ n: 10 }, { n: 20 }, { n: 30 }, { n: 40 }]);
  });

  it('keeps nothing for a list that is not frozen', () => {
    const results = new ListResults<{ n: number } | undefined>();
    const open = [1, 2];
    const one = eachOnce(results, open, open, 0, (x) => ({ n: x }), () => true);
    expect(Object.isFrozen(one[0])).toBe(false);
    const after = Object.freeze([1, 2, 3]);
    recordShared(after, open, 2);
    expect(eachOnce(results, after, after, 0, (x) => ({ n: x }), () => true)[0]).not.toBe(one[0]);
  });
});

describe('FrozenResults', () => {
  it('makes once for a frozen value, each time for one that is not, and keeps nothing when making throws', () => {
    const results = new FrozenResults<{ made: number }>();
    let count = 0;
    const make = (kept: boolean) => ({ made: ++count, kept });
    const frozen = Object.freeze([{ a: 1 }]);
    const first = results.of(frozen, make);
    expect(first).toEqual({ made: 1, kept: true });
    expect(results.of(frozen, make)).toBe(first);
    const open = [{ a: 1 }];
    expect(results.of(open, make)).toEqual({ made: 2, kept: false });
    expect(results.of(open, make)).toEqual({ made: 3, kept: false });
    expect(results.of(undefined, make)).toEqual({ made: 4, kept: false });
    const bad = Object.freeze([{ b: 2 }]);
    expect(() => results.of(bad, () => { throw new Error('invalid'); })).toThrow('invalid');
    expect(results.of(bad, make)).toEqual({ made: 5, kept: true });
  });
});

describe('openai-chat parse over the body memo', () => {
  it('converts a resent message once, to the same frozen neutral message, equal to a parse from scratch', () => {
    const memo = new BodyMemo(1 << 21);
    const messages: unknown[] = [SYSTEM, { role: 'user', content: 'one' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }];
    const first = openaiChatInbound.parse(memo.parse(body(messages), 'messages'), noImages);
    messages.push({ role: 'tool', tool_call_id: 'c1', content: 'done' });
    const second = openaiChatInbound.parse(memo.parse(body(messages), 'messages'), noImages);
    expect(second.messages[0]).toBe(first.messages[0]);
    expect(second.messages[1]).toBe(first.messages[1]);
    expect(Object.isFrozen(second.messages[1]!)).toBe(true);
    expect(second.messages).toEqual(openaiChatInbound.parse(JSON.parse(body(messages).toString()), noImages).messages);
  });

  it('still checks every new message: a too-deep argument or content after a repeated history is the error, at its place', () => {
    const memo = new BodyMemo(1 << 21);
    const messages: unknown[] = [SYSTEM, { role: 'user', content: 'one' }];
    openaiChatInbound.parse(memo.parse(body(messages), 'messages'), noImages);
    const deepArgs = [...messages, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: JSON.stringify(nested(300)) } }] }];
    expect(errorOf(() => openaiChatInbound.parse(memo.parse(body(deepArgs), 'messages'), noImages))).toEqual({ code: 'json_too_deep', param: 'messages[2].tool_calls[0].function.arguments' });
    const deepBody = [...messages, { role: 'user', content: 'two', extra: nested(300) }];
    expect(errorOf(() => openaiChatInbound.parse(memo.parse(body(deepBody), 'messages'), noImages)).code).toBe('json_too_deep');
    const badRole = [...messages, { role: 'robot', content: 'x' }];
    expect(errorOf(() => openaiChatInbound.parse(memo.parse(body(badRole), 'messages'), noImages))).toEqual({ code: 'unknown_role', param: 'messages[2].role' });
  });

  it('a message that failed fails again when it is resent', () => {
    const memo = new BodyMemo(1 << 21);
    const messages: unknown[] = [SYSTEM, { role: 'user', content: 'one', extra: nested(300) }];
    for (let i = 0; i < 3; i++) {
      expect(errorOf(() => openaiChatInbound.parse(memo.parse(body(messages), 'messages'), noImages)).code).toBe('json_too_deep');
      messages.push({ role: 'user', content: `again ${i}` });
    }
    const badArgs: unknown[] = [SYSTEM, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: JSON.stringify(nested(300)) } }] }];
    for (let i = 0; i < 3; i++) {
      expect(errorOf(() => openaiChatInbound.parse(memo.parse(body(badArgs), 'messages'), noImages)).param).toBe('messages[1].tool_calls[0].function.arguments');
      badArgs.push({ role: 'user', content: `again ${i}` });
    }
  });

  it('hands a resent image to every request\'s own sink', () => {
    const memo = new BodyMemo(1 << 21);
    const messages: unknown[] = [SYSTEM, { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }];
    const seen: string[] = [];
    const sink = (id: string) => (url: string): ImagePart => {
      seen.push(`${id}:${url.slice(0, 10)}`);
      return { type: "image", sha256: "x", mime: "image/png", tokens: 1 };
    };
    openaiChatInbound.parse(memo.parse(body(messages), 'messages'), sink('first'));
    messages.push({ role: 'user', content: 'and?' });
    openaiChatInbound.parse(memo.parse(body(messages), 'messages'), sink('second'));
    expect(seen).toEqual(['first:data:image', 'second:data:image']);
  });
});

describe('anthropic-messages parse over the body memo', () => {
  const claude = (messages: unknown[]): Buffer => Buffer.from(JSON.stringify({ model: 'm', max_tokens: 100, system: SYSTEM.content, messages }));

  it('converts a resent turn once, to the same frozen neutral messages, equal to a parse from scratch', () => {
    const memo = new BodyMemo(1 << 21);
    const messages: unknown[] = [
      { role: 'user', content: [{ type: 'text', text: `context ${'x'.repeat(270000)}` }] },
      { role: 'assistant', content: [{ type: 'text', text: 'reading' }, { type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } }] },
    ];
    const first = anthropicMessagesInbound.parse(memo.parse(claude(messages), 'messages'), noImages);
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'file a' }, { type: 'text', text: 'go on' }] });
    const second = anthropicMessagesInbound.parse(memo.parse(claude(messages), 'messages'), noImages);
    expect(second.messages[0]).toBe(first.messages[0]);
    expect(second.messages[1]).toBe(first.messages[1]);
    expect(Object.isFrozen(second.messages[1]!)).toBe(true);
    expect(second.messages).toEqual(anthropicMessagesInbound.parse(JSON.parse(claude(messages).toString()), noImages).messages);
  });

  it('hands a resent image to every request\'s own sink, and still checks a new block', () => {
    const memo = new BodyMemo(1 << 21);
    const messages: unknown[] = [{ role: 'user', content: [{ type: 'text', text: `look ${'x'.repeat(270000)}` }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }];
    const seen: string[] = [];
    const sink = (id: string) => (): ImagePart => {
      seen.push(id);
      return { type: 'image', sha256: 'x', mime: 'image/png', tokens: 1 };
    };
    anthropicMessagesInbound.parse(memo.parse(claude(messages), 'messages'), sink('first'));
    messages.push({ role: 'assistant', content: 'seen' }, { role: 'user', content: [{ type: 'tool_use', id: 'x', name: 'n', input: {} }] });
    expect(errorOf(() => anthropicMessagesInbound.parse(memo.parse(claude(messages), 'messages'), sink('bad'))).param).toBe('messages[2].content[0].type');
    messages.pop();
    messages.push({ role: 'user', content: 'and?' });
    anthropicMessagesInbound.parse(memo.parse(claude(messages), 'messages'), sink('second'));
    expect(seen).toEqual(['first', 'second']);
  });
});

describe('a tools list resent unchanged', () => {
  const withTools = (tools: unknown, messages: unknown[], extra: Record<string, unknown> = {}): Buffer => Buffer.from(JSON.stringify({ model: 'm', tools, ...extra, messages }));
  const TOOLS = [{ type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

  it('is the same array from one request to the next, checked once; a changed list or member is checked again', () => {
    const memo = new BodyMemo(1 << 21);
    const messages: unknown[] = [SYSTEM, { role: 'user', content: 'one' }];
    const first = openaiChatInbound.parse(memo.parse(withTools(TOOLS, messages), 'messages'), noImages);
    messages.push({ role: 'assistant', content: 'two' });
    const second = openaiChatInbound.parse(memo.parse(withTools(TOOLS, messages), 'messages'), noImages);
    expect(second.tools).toBe(first.tools);
    expect(second.tools).toEqual(TOOLS);
    messages.push({ role: 'user', content: 'three' });
    const bad = [{ type: 'function', function: { name: '', parameters: {} } }];
    expect(errorOf(() => openaiChatInbound.parse(memo.parse(withTools(bad, messages), 'messages'), noImages)).param).toBe('tools[0].function.name');
    const deep = [{ type: 'function', function: { name: 'f', parameters: nested(300) } }];
    expect(errorOf(() => openaiChatInbound.parse(memo.parse(withTools(deep, messages), 'messages'), noImages)).code).toBe('json_too_deep');
    // A member that passed, next to a new one that does not.
    expect(errorOf(() => openaiChatInbound.parse(memo.parse(withTools(TOOLS, messages, { response_format: nested(300) }), 'messages'), noImages)).code).toBe('json_too_deep');
  });
});

describe('an anthropic tools list resent unchanged', () => {
  it('is the same neutral array, frozen, equal to a conversion from scratch', () => {
    const memo = new BodyMemo(1 << 21);
    const tools = [{ name: 'read', description: 'Read a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }, { type: 'web_search_20250305', name: 'web_search' }];
    const messages: unknown[] = [{ role: 'user', content: `context ${'x'.repeat(270000)}` }];
    const body = () => Buffer.from(JSON.stringify({ model: 'm', max_tokens: 100, tools, messages }));
    const first = anthropicMessagesInbound.parse(memo.parse(body(), 'messages'), noImages);
    messages.push({ role: 'assistant', content: 'ok' }, { role: 'user', content: 'go on' });
    const second = anthropicMessagesInbound.parse(memo.parse(body(), 'messages'), noImages);
    expect(second.tools).toBe(first.tools);
    expect(Object.isFrozen(second.tools)).toBe(true);
    expect(second.tools).toEqual(anthropicMessagesInbound.parse(JSON.parse(body().toString()), noImages).tools);
  });
});

describe('a client\'s head through the head memo', () => {
  const fn = (i: number) => ({ name: `tool_${i}`, description: 'Reads a file. '.repeat(60), parameters: { type: 'object', properties: { path: { type: 'string' } } } });
  const wires = [
    { dialect: openaiChatInbound, list: 'messages', body: (n: number) => ({ model: 'm', messages: [{ role: 'user', content: `task ${n}` }], tools: Array.from({ length: 12 }, (_, i) => ({ type: 'function', function: fn(i) })) }) },
    { dialect: anthropicMessagesInbound, list: 'messages', body: (n: number) => ({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: `task ${n}` }], tools: Array.from({ length: 12 }, (_, i) => ({ name: fn(i).name, description: fn(i).description, input_schema: fn(i).parameters })) }) },
    { dialect: openaiResponsesInbound, list: 'input', body: (n: number) => ({ model: 'm', input: [{ role: 'user', content: `task ${n}` }], tools: Array.from({ length: 12 }, (_, i) => ({ type: 'function', ...fn(i) })) }) },
  ];

  for (const { dialect, list, body: make } of wires) {
    it(`${dialect.wire}: a resent catalogue is converted once, to the same tools array, equal to a parse from scratch`, () => {
      const memo = new HeadMemo();
      const parse = (n: number) => dialect.parse(memo.parse(Buffer.from(JSON.stringify(make(n))), list), noImages);
      parse(0);
      const second = parse(1);
      const third = parse(2);
      expect(memo.size).toBe(1);
      expect(third.tools).toBe(second.tools);
      expect(third.tools).toHaveLength(12);
      expect(third.tools).toEqual(dialect.parse(make(2), noImages).tools);
    });
  }
});
