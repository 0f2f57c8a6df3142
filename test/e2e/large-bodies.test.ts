/**
 * Large bodies through the body parser's shortcut (src/proxy/body-memo.ts), with the official
 * `openai` client: conversations past its 256 KB floor, run at once, that resend their history as
 * it was, with its messages' keys in another order, or with an early message edited. Whatever
 * part a body shares with an earlier one, each request is read as the whole body says: the log
 * holds each message once, an edit is one rewrite, and every request replays to its digest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import type { LogEvent } from '../../src/core/events.js';
import { newSessions, replayAll, sessionIds, startWorld, tag, type World } from './harness.js';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

let w: World;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  await w?.close();
});

/** A tool result of about `kb` KB, different per conversation and turn. */
function result(t: string, turn: number, kb: number): string {
  let s = '';
  for (let i = 0; s.length < kb * 1024; i++) s += `${t} turn ${turn} line ${i}: const x = "quoted \\ text"; // ü ✓\n`;
  return s;
}

type Style = 'as-sent' | 'reordered' | 'edited';

/** 10 turns, each adding a ~6 KB file; from turn 5 on, the client changes how it resends its history. */
async function converse(style: Style): Promise<{ t: string; replies: string[] }> {
  const t = tag(`large-${style}`);
  // A long system prompt (~240 KB, as a coding agent's prompt and pasted rules can be) puts every
  // body past the parser's 256 KB floor from the third request on, within the model's context.
  const history: Message[] = [{ role: 'system', content: `${t} You are a coding agent.\n${result(t, -1, 240)}` }, { role: 'user', content: `${t} read the files` }];
  const replies: string[] = [];
  for (let turn = 0; turn < 10; turn++) {
    let sent = history;
    if (turn >= 5 && style === 'reordered') {
      // The same messages, keys in another order: other bytes, the same conversation.
      sent = history.map((m) => Object.fromEntries(Object.entries(m).reverse()) as unknown as Message);
    }
    if (turn === 5 && style === 'edited') {
      history[1] = { role: 'user', content: `${t} read the files, carefully` };
      sent = history;
    }
    const r = await w.client.chat.completions.create({ model: 'oa', messages: sent });
    const reply = r.choices[0]!.message.content ?? '';
    replies.push(reply);
    // The reply as it came, then the file it asked for, pasted in.
    history.push({ role: 'assistant', content: reply });
    history.push({ role: 'user', content: `here is f${turn}.ts:\n${result(t, turn, 6)}` });
  }
  return { t, replies };
}

function count(events: readonly LogEvent[], type: LogEvent['type']): number {
  return events.filter((e) => e.type === type).length;
}

describe('large bodies', () => {
  it('three conversations at once, resent as they were, reordered and edited: each read as its body says', async () => {
    const before = await sessionIds(w);
    const runs = await Promise.all((['as-sent', 'reordered', 'edited'] as const).map(async (style) => ({ style, ...(await converse(style)) })));
    for (const run of runs) expect(run.replies.every((r) => r.length > 0)).toBe(true);
    const sessions = [...(await newSessions(w, before)).values()];
    for (const run of runs) {
      const mine = sessions.filter((events) => JSON.stringify(events).includes(run.t));
      expect(mine).toHaveLength(1);
      const events = mine[0]!;
      expect(count(events, 'llm.req')).toBe(10);
      if (run.style === 'edited') {
        // The edit is one rewrite, from the edited message on; the log still holds the original.
        expect(count(events, 'client.rewrite')).toBe(1);
        const texts = events.filter((e) => e.type === 'client.msg').map((e) => JSON.stringify(e));
        expect(texts.some((s) => s.includes('read the files, carefully'))).toBe(true);
      } else {
        // The system prompt, the first user message, then each file once (a resent reply is the
        // log's own llm.resp, not logged again).
        expect(count(events, 'client.rewrite')).toBe(0);
        expect(count(events, 'client.msg')).toBe(2 + 9);
        expect(count(events, 'llm.resp')).toBe(10);
      }
    }
    const replay = await replayAll(w);
    expect(replay.code).toBe(0);
  });
});
