import { describe, expect, it } from 'vitest';
import type { NeutralMessage, RequestParams } from '../../src/core/types.js';
import { messageKey } from '../../src/session/fingerprint.js';
import { IncomingMessage } from '../../src/session/incoming.js';
import { recogniseSide, sideParams, type SideCandidate, type SideJob } from '../../src/session/side.js';
import type { ViewEntry } from '../../src/session/view.js';

const u = (text: string): NeutralMessage => ({ role: 'user', content: text });
const a = (text: string): NeutralMessage => ({ role: 'assistant', content: text });

const conv = {
  system: 'You are the agent.',
  entries: [u('fix the parser'), a('fixed'), u('now the tests'), a('tested')].map((msg, i): ViewEntry => ({ seq: i + 2, msg, key: messageKey(msg) })),
};

function req(messages: NeutralMessage[], over: Partial<SideCandidate> = {}): SideCandidate {
  return { system: conv.system, noTools: true, sameCatalog: false, messages: messages.map((m) => new IncomingMessage(m)), ...over };
}

const OPENCODE_COMPACT = 'Provide a detailed prompt for continuing our conversation above.\nFocus on information that would be helpful.';
const CLAUDE_COMPACT = 'CRITICAL: Respond with TEXT ONLY.\n\nYour task is to create a detailed summary of the conversation so far, paying close attention.';
const CODEX_COMPACT = 'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.';

describe('recogniseSide', () => {
  it('a compaction prompt after the history: only that prompt is the side\'s own', () => {
    const history = conv.entries.map((e) => e.msg);
    for (const [prompt, client] of [[OPENCODE_COMPACT, 'opencode'], [CLAUDE_COMPACT, 'Claude Code'], [CODEX_COMPACT, 'Codex']] as const) {
      expect(recogniseSide(req([...history, u(prompt)]), conv)).toStrictEqual({ kind: 'compaction', client, instruction: prompt, tools: 'none' });
    }
  });

  it('a compaction over a history the client pruned (its first message kept) is still recognised, and its copy of the history dropped', () => {
    const pruned = [u('fix the parser'), a('[Old tool result content cleared]'), u(OPENCODE_COMPACT)];
    expect(recogniseSide(req(pruned), conv)?.instruction).toBe(OPENCODE_COMPACT);
  });

  it('the side\'s own system prompt, where it differs, goes first in the instruction', () => {
    const job = recogniseSide(req([...conv.entries.map((e) => e.msg), u(OPENCODE_COMPACT)], { system: 'You summarise conversations.' }), conv);
    expect(job?.instruction).toBe(`You summarise conversations.\n\n${OPENCODE_COMPACT}`);
  });

  it('a title prompt in the system: every message of the side is its own, after its system prompt', () => {
    const opencode = req([u('Generate a title for this conversation:'), u('fix the parser')], { system: 'You are a title generator. You output ONLY a thread title.' });
    expect(recogniseSide(opencode, conv)).toStrictEqual({
      kind: 'title', client: 'opencode', tools: 'none',
      instruction: 'You are a title generator. You output ONLY a thread title.\n\nGenerate a title for this conversation:\n\nfix the parser',
    });
    const claude = req([{ role: 'user', content: [{ type: 'text', text: 'fix the parser' }] }], { system: 'You are Claude Code.\n\nYou are naming a coding session so the user can pick it out.' });
    expect(recogniseSide(claude, conv)).toMatchObject({ kind: 'title', client: 'Claude Code' });
  });

  it('Gemini CLI\'s task router (its own system prompt, the last turns, JSON asked for) is a side job of the title kind', () => {
    const router = req([u('now the tests')], { system: '\nYou are a specialized Task Routing AI. Your sole function is to analyze the user\'s request.' });
    expect(recogniseSide(router, conv)).toMatchObject({ kind: 'title', client: 'Gemini CLI', tools: 'none' });
  });

  it('Qwen Code\'s compaction: on the conversation\'s head, or under the summariser\'s own system prompt; its first message edited, by the latest reply it holds', () => {
    const history = conv.entries.map((e) => e.msg);
    const ask = 'You are the component that summarizes a conversation when its context window is about to overflow. The summary you produce will become the agent\'s ONLY memory.';
    expect(recogniseSide(req([...history, u(ask)], { noTools: false, sameCatalog: true }), conv)).toStrictEqual({ kind: 'compaction', client: 'Qwen Code', instruction: ask, tools: 'all' });
    const again = 'First, reason in your <analysis> block. Then, produce the <state_snapshot> XML.';
    expect(recogniseSide(req([...history, u(again)], { system: ask }), conv)).toStrictEqual({ kind: 'compaction', client: 'Qwen Code', instruction: `${ask}\n\n${again}`, tools: 'none' });
    // After a compaction Qwen Code puts a reminder before its first message: the latest reply it holds says whose history it is.
    const edited = [u('<system-reminder>skills</system-reminder>fix the parser'), ...history.slice(1)];
    expect(recogniseSide(req([...edited, u(ask)], { noTools: false, sameCatalog: true }), conv)?.client).toBe('Qwen Code');
    // Neither its first message nor the latest reply: another conversation's.
    expect(recogniseSide(req([u('another task'), a('done'), u(ask)], { noTools: false, sameCatalog: true }), conv)).toBeUndefined();
    // The summariser's system prompt over messages that are not the conversation's is not a side job either.
    expect(recogniseSide(req([u('another task'), a('done'), u(again)], { system: ask }), conv)).toBeUndefined();
  });

  it('the conversation\'s own catalog is kept as offered; a catalog of another shape is not a side request', () => {
    const messages = [...conv.entries.map((e) => e.msg), u(CODEX_COMPACT)];
    expect(recogniseSide(req(messages, { noTools: false, sameCatalog: true }), conv)?.tools).toBe('all');
    // A subset (or any other catalog) cannot be offered over the unchanged catalog on every wire.
    expect(recogniseSide(req(messages, { noTools: false, sameCatalog: false }), conv)).toBeUndefined();
  });

  it('anything else is not a side request', () => {
    const history = conv.entries.map((e) => e.msg);
    // No known marker.
    expect(recogniseSide(req([...history, u('Summarise what we did.')]), conv)).toBeUndefined();
    expect(recogniseSide(req([u('Title for: fix the parser')], { system: 'You write five-word titles.' }), conv)).toBeUndefined();
    // A compaction prompt that does not open as the conversation did, or stands alone.
    expect(recogniseSide(req([u('another task'), u(OPENCODE_COMPACT)]), conv)).toBeUndefined();
    expect(recogniseSide(req([u(OPENCODE_COMPACT)]), conv)).toBeUndefined();
    // The marker not in the last message, or in a message that is not the user's text.
    expect(recogniseSide(req([...history, u(OPENCODE_COMPACT), a('ok')]), conv)).toBeUndefined();
    expect(recogniseSide(req([...history, { role: 'user', content: [{ type: 'text', text: OPENCODE_COMPACT }, { type: 'image', sha256: 'x', mime: 'image/png', tokens: 85 }] }]), conv)).toBeUndefined();
    // A title prompt whose messages hold something other than user text.
    expect(recogniseSide(req([u('fix the parser'), a('fixed')], { system: 'You are a title generator.' }), conv)).toBeUndefined();
    // A conversation whose own system prompt is a title generator's: its requests are the conversation.
    const titler = { ...conv, system: 'You are a title generator.' };
    expect(recogniseSide(req([...history, u('and this one')], { system: 'You are a title generator.' }), titler)).toBeUndefined();
    // No conversation yet (a title asked before the first request).
    expect(recogniseSide(req([u('fix the parser')], { system: 'You are a title generator.' }), { system: conv.system, entries: [] })).toBeUndefined();
  });
});

describe('a user who types a compaction marker in an ordinary message', () => {
  const history = conv.entries.map((e) => e.msg);
  const typed = [
    'What does "Your task is to create a detailed summary of the conversation so far" mean in the logs?',
    'Before we go on: Provide a detailed prompt for continuing our conversation above, then run the tests.',
    'The proxy saw "You are performing a CONTEXT CHECKPOINT COMPACTION" in codex.log; why?',
    'I pasted this:\nGenerate a concise, single-line task title\nand got nothing back.',
    // The preamble of Claude Code's prompt without its marker on a line of its own.
    'CRITICAL: Respond with TEXT ONLY. Then explain what "Your task is to create a detailed summary of the conversation so far" does.',
  ];

  it('gets an ordinary turn, not a side request', () => {
    for (const text of typed) expect(recogniseSide(req([...history, u(text)]), conv), text).toBeUndefined();
  });

  it('while the agents\' own prompts, with leading whitespace or Claude Code\'s preamble, are still recognised', () => {
    expect(recogniseSide(req([...history, u(`\n  ${OPENCODE_COMPACT}`)]), conv)?.client).toBe('opencode');
    expect(recogniseSide(req([...history, u(CLAUDE_COMPACT)]), conv)?.client).toBe('Claude Code');
    expect(recogniseSide(req([...history, u('Your task is to create a detailed summary of the conversation so far, paying close attention.')]), conv)?.client).toBe('Claude Code');
    expect(recogniseSide(req([...history, u('Generate a concise, single-line task title of at most 36 characters for the following task:')]), conv)).toMatchObject({ kind: 'title', client: 'Codex' });
  });
});

describe('sideParams', () => {
  const none: SideJob = { kind: 'title', client: 'opencode', instruction: 'x', tools: 'none' };
  const all: SideJob = { ...none, tools: 'all' };
  const client: RequestParams = { max_tokens: 64, temperature: 0.2 };
  const conversation: RequestParams = { max_tokens: 8192, reasoning_effort: 'high', tool_choice: 'auto' };

  it('where no parameter is keyed (OpenAI): the client\'s, with tool_choice none for a side that offered no tools', () => {
    expect(sideParams(client, none, conversation, [])).toStrictEqual({ max_tokens: 64, temperature: 0.2, tool_choice: 'none' });
    expect(sideParams(client, all, conversation, [])).toStrictEqual(client);
  });

  it('keyed parameters (Anthropic) are the conversation\'s, and an absent one is left out', () => {
    const keyed = ['tool_choice', 'parallel_tool_calls', 'reasoning_effort', 'max_tokens'] as const;
    expect(sideParams({ ...client, parallel_tool_calls: false }, none, conversation, keyed)).toStrictEqual({ max_tokens: 8192, temperature: 0.2, reasoning_effort: 'high', tool_choice: 'auto' });
    expect(sideParams({ ...client, reasoning_effort: 'low' }, none, { max_tokens: 8192 }, keyed)).toStrictEqual({ max_tokens: 8192, temperature: 0.2 });
  });
});
