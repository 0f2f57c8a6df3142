/**
 * The bench agent's trace sent straight to an Anthropic Messages endpoint by a client that sets
 * no cache_control: the comparison for the proxy's Anthropic route. Same directives, same file
 * contents, same turn structure as `runAgent`, in Anthropic's own shapes.
 */
import { request } from 'undici';
import { AGENT_TOOLS, callDirective, fileContent, type AgentStep } from './agent.js';

interface Block {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export interface DirectStep extends AgentStep {
  usage: AnthropicUsage;
}

export async function runDirectAnthropic(baseUrl: string, model: string, opts: { requests: number; seed: number; resultBytes?: number; roundsPerTurn?: number; parallelEvery?: number }): Promise<DirectStep[]> {
  const { seed } = opts;
  const resultBytes = opts.resultBytes ?? 2000;
  const roundsPerTurn = opts.roundsPerTurn ?? 4;
  const parallelEvery = opts.parallelEvery ?? 3;
  const system = 'You are a careful coding agent. Read before you write.';
  const tools = AGENT_TOOLS.map((t) => {
    const fn = (t as { function: { name: string; description?: string; parameters?: unknown } }).function;
    return { name: fn.name, description: fn.description, input_schema: fn.parameters };
  });
  const messages: { role: 'user' | 'assistant'; content: string | unknown[] }[] = [
    { role: 'user', content: `Task ${seed}: find where the config is loaded. ${callDirective(seed, 0, 1)}` },
  ];
  const steps: DirectStep[] = [];
  let round = 0;
  for (let i = 0; i < opts.requests; i++) {
    const res = await request(`${baseUrl}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'bench' },
      body: JSON.stringify({ model, max_tokens: 4096, system, tools, messages }),
    });
    const body = (await res.body.json()) as { content: Block[]; usage: AnthropicUsage };
    if (res.statusCode !== 200) throw new Error(`direct anthropic: ${res.statusCode} ${JSON.stringify(body)}`);
    const calls = body.content.filter((b) => b.type === 'tool_use');
    const u = body.usage;
    const cached = u.cache_read_input_tokens ?? 0;
    steps.push({
      prompt_tokens: u.input_tokens + cached + (u.cache_creation_input_tokens ?? 0),
      cached_tokens: cached,
      completion_tokens: u.output_tokens,
      tool_calls: calls.length,
      usage: u,
    });
    messages.push({ role: 'assistant', content: body.content });
    round++;
    const last = i + 1 >= opts.requests;
    if (calls.length > 0) {
      const endOfTurn = round >= roundsPerTurn;
      messages.push({
        role: 'user',
        content: calls.map((call, j) => {
          const isLast = j === calls.length - 1;
          const next = last || !isLast ? '' : endOfTurn ? '[[say I have what I need.]]' : callDirective(seed, i + 1, (i + 1) % parallelEvery === 0 ? 2 : 1);
          return { type: 'tool_result', tool_use_id: call.id, content: fileContent(seed, i, j, resultBytes) + next };
        }),
      });
    } else {
      round = 0;
      messages.push({ role: 'user', content: `Next, check the tests for step ${i}. ${callDirective(seed, i + 1, 1)}` });
    }
  }
  return steps;
}
