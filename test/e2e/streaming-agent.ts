/**
 * A streaming agent for the replica tests: one conversation, each turn a user message asking for a
 * slow streamed answer (`[[slow MS]] [[len N]]`), the answer appended as the client received it.
 * Each answer is checked whole (a finish reason, the length asked for); what it received is kept,
 * so a test can look for every answered turn in the log.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

export interface AgentResult {
  /** The content of every answer received whole, in order. */
  answers: string[];
  /** Each failed request's message (after the client's own retries). */
  errors: string[];
  /** Answers that ended without a finish reason, or shorter than asked: a cut stream. */
  cut: number;
  /** The error that ended the agent, when `fatal` said so (a spent budget). */
  ended?: string;
}

export async function streamingAgent(client: OpenAI, opts: { id: string; model: string; stop: () => boolean; maxTurns?: number; slowMs?: number; len?: number; headers?: Record<string, string>; fatal?: (err: unknown) => boolean;
  /**
   * Send a turn asked again (after an error or a cut stream) marked as a retry: `count` as the SDK
   * marks its own (`x-stainless-retry-count`), `key` by an `Idempotency-Key` every try of the turn
   * repeats (a new one each turn). The proxy answers it from the log when the first try's reply was
   * logged (decisions 0128, 0025); unmarked, the same question again is a new branch, by design.
   */
  markResends?: 'count' | 'key'; }): Promise<AgentResult> {
  const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: `You are agent ${opts.id}.` }];
  const out: AgentResult = { answers: [], errors: [], cut: 0 };
  const len = opts.len ?? 20;
  let resend = false;
  for (let turn = 0; turn < (opts.maxTurns ?? 1000) && !opts.stop(); turn++) {
    const headers = {
      ...opts.headers,
      ...(resend && opts.markResends === 'count' ? { 'x-stainless-retry-count': '1' } : {}),
      ...(opts.markResends === 'key' ? { 'idempotency-key': `${opts.id}-turn-${turn}` } : {}),
    };
    const ask: ChatCompletionMessageParam = { role: 'user', content: `Agent ${opts.id}, turn ${turn}. [[say ${said(opts.id, turn)}]] [[slow ${opts.slowMs ?? 20}]] [[len ${len}]]` };
    let content = '';
    let finish: string | null = null;
    try {
      const stream = await client.chat.completions.create({ model: opts.model, stream: true, messages: [...messages, ask] }, Object.keys(headers).length === 0 ? {} : { headers });
      for await (const c of stream) {
        content += c.choices[0]?.delta?.content ?? '';
        finish = c.choices[0]?.finish_reason ?? finish;
      }
    } catch (err) {
      if (opts.fatal?.(err) === true) {
        out.ended = (err as Error).message;
        break;
      }
      out.errors.push((err as Error).message);
      // The next turn sends the same question again, as an agent's retry would.
      turn--;
      resend = true;
      if (out.errors.length > 200) break;
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    // The simulator's filler is four characters a token.
    if (finish === null || !content.startsWith(said(opts.id, turn)) || content.length < len * 4) {
      out.cut++;
      turn--;
      resend = true;
      continue;
    }
    resend = false;
    messages.push(ask, { role: 'assistant', content });
    out.answers.push(content);
  }
  return out;
}

/** What turn `turn` of agent `id` asks the simulator to say first: its answer is unique. */
function said(id: string, turn: number): string {
  return `answer ${turn} of agent ${id}`;
}
