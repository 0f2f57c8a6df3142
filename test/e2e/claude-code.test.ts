/**
 * The real Claude Code (`@anthropic-ai/claude-code`, headless, `claude -p`) pointed at the proxy
 * over loopback with ANTHROPIC_BASE_URL, the simulator upstream, offline. Its tool loop is scripted through files in a
 * temporary workspace: each file holds the simulator directive for the next call, so each tool's
 * output drives the next reply (src/sim/directives.ts), six calls with Bash, Read and Write.
 * Through the Anthropic wire and a chat wire: no upstream 4xx, every request after the first reads
 * its predecessor's prefix from the simulator's cache, the files are written, and replay passes.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAUDE, runClaude, workspace } from './claude-code-run.js';
import { replayAll } from './harness.js';
import { startWiresWorld, wire, type WiresWorld } from './wires-world.js';
import { wholeBlockTokens } from './wire-prefix.js';

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    models: `
[models.claude-opus-5-5]
provider = "an"
model = "claude-sim"

[models.cc-chat]
provider = "oa"
model = "sim-model"

[models.cc-gpt-chat]
provider = "op56"
model = "gpt-5.6"

[models.cc-gpt-responses]
provider = "rs56"
model = "gpt-5.6"
`,
  });
}, 30_000);
afterAll(async () => {
  await w?.close();
});

describe('Claude Code, headless, through the proxy', () => {
  it('has its binary installed (npm ci installs the pinned package and its native binary)', () => {
    expect(existsSync(CLAUDE), CLAUDE).toBe(true);
  });

  // The last two: OpenAI's GPT-5.6 as the simulator plays it, strict about what its reasoning
  // models refuse (max_tokens on the chat wire, sampling fields while reasoning; docs/wires.md).
  const ROUTES = [
    ['claude-opus-5-5', '/anthropic/v1/messages'],
    ['cc-chat', '/openai/v1/chat/completions'],
    ['cc-gpt-chat', '/gpt56/v1/chat/completions'],
    ['cc-gpt-responses', '/gpt56/v1/responses'],
  ] as const;
  for (const [model, prefix] of ROUTES) {
    it(`completes a six-call tool loop through ${prefix}`, async () => {
      const from = w.tap.requests.length;
      const simFrom = { an: w.sim.anthropicRequests.length, chat: w.sim.requests.length };
      const home = await mkdtemp(join(tmpdir(), 'pp-cc-home-'));
      const { ws, prompt } = await workspace();
      try {
        const run = await runClaude({ base: w.proxy.url, key: 'sk-ant-proxy-test', model, prompt, ws, home });
        expect(run.code, run.stderr).toBe(0);
        expect(run.json?.is_error, run.stderr).toBe(false);
        expect(run.json?.result).toContain('All six steps are done.');
        expect(await readFile(join(ws, 'out.txt'), 'utf8')).toBe('hello from the simulator\n');

        const sent = wire(w, prefix, from);
        expect(sent.every((r) => r.status === 200), JSON.stringify(sent.map((r) => [r.status, r.response.slice(0, 300)]))).toBe(true);
        if (prefix.startsWith('/gpt56')) {
          // Nothing refused is what these two show. GPT-5.6 reads only at breakpoints, and its
          // implicit one ends at the last user or tool message, before the system message Claude
          // Code puts after it: the whole-prefix bound below does not hold there (and the
          // simulator keeps no record list for Responses; the Codex test checks those reads).
          expect(sent.length).toBeGreaterThanOrEqual(6);
          return;
        }
        // Each request reads its predecessor's whole prompt from the cache, up to the simulator's
        // last whole 128-token block: the prefix held from one request to the next.
        const records = (prefix.startsWith('/anthropic') ? w.sim.anthropicRequests.slice(simFrom.an) : w.sim.requests.slice(simFrom.chat))
          .filter((r) => !r.path.endsWith('/count_tokens'));
        expect(records.length).toBe(sent.length);
        for (let i = 1; i < records.length; i++) {
          const allowed = prefix.startsWith('/anthropic') ? Math.floor(records[i - 1]!.promptTokens / 128) * 128 : wholeBlockTokens(records[i - 1]!.promptTokens);
          expect(records[i]!.cachedTokens, `request ${i + 1}`).toBeGreaterThanOrEqual(Math.floor(allowed * 0.99));
        }
        const calls = sent.map((r) => JSON.stringify(r.body.messages ?? [])).at(-1)!.match(/"(tool_use|tool_calls)"/g) ?? [];
        expect(calls.length).toBeGreaterThanOrEqual(5);
      } finally {
        await rm(ws, { recursive: true, force: true });
        await rm(home, { recursive: true, force: true });
      }
    }, 240_000);
  }

  it('replays every request it logged', async () => {
    const result = await replayAll(w);
    expect(result.code, result.stderr).toBe(0);
  });
});
