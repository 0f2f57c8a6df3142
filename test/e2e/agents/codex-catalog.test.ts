/**
 * Codex takes a model's metadata (context window, tools, instructions) from its own catalogue, by
 * the model's name. A proxy route named otherwise is not there: Codex warns "Model metadata for
 * `<route>` not found" and falls back to defaults. README.md (Codex) gives the remedy: a catalogue
 * of Codex's own (`codex debug models`) with an entry for the route, named in `model_catalog_json`.
 * Both runs here go through the built-in provider at the proxy; only the catalogue differs.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TappedRequest } from '../harness.js';
import { codexConfig } from './codex-config.js';
import { AGENTS, binaryInstalled, startLongWorld, writeSteps, type LongWorld } from './long-session.js';

const spec = AGENTS.codex;
const WARNING = `Model metadata for \`${spec.route}\` not found`;

/** The text of a Responses request's first input item. */
function opening(r: TappedRequest): string | undefined {
  const first = (r.body?.input as { content?: { text?: string }[] }[] | undefined)?.[0];
  return first?.content?.[0]?.text;
}

interface Run {
  code: number | null | 'killed';
  output: string;
}

/** Runs `codex ARGS` headless with this home; resolves on its exit (its shells may hold the pipes). */
function codex(args: string[], cwd: string, home: string): Promise<Run> {
  const child = spawn(spec.binary, args, {
    cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, OPENAI_API_KEY: 'sk-local' },
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
      resolve({ code: 'killed', output });
    }, 90_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe.runIf(binaryInstalled(spec))('Codex told of a proxy route by its own catalogue', () => {
  let lw: LongWorld;
  let without: Run;
  let withCatalog: Run;
  let instructions: string;
  let postedBefore: number;

  beforeAll(async () => {
    lw = await startLongWorld(spec);
    const run = async (name: string, catalogLine: string): Promise<Run> => {
      const ws = join(lw.scratch, `ws-${name}`);
      const home = join(lw.scratch, `home-${name}`);
      await Promise.all([mkdir(ws, { recursive: true }), mkdir(home, { recursive: true })]);
      const { prompt } = await writeSteps(spec, ws, `catalog-${name}-${process.pid}`, 2);
      await writeFile(join(home, 'config.toml'), catalogLine + codexConfig(spec.route, lw.front.origin, { builtIn: { autoCompactTokens: 100_000 } }));
      return codex(['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', ws, prompt], ws, home);
    };
    without = await run('without', '');
    postedBefore = lw.front.requests.length;
    // README's recipe: Codex's own catalogue, and the entry of the OpenAI model the route stands
    // for under the route's name, with the route's context.
    const home = join(lw.scratch, 'home-debug');
    await mkdir(home, { recursive: true });
    const listed = await codex(['debug', 'models'], lw.scratch, home);
    expect(listed.code, listed.output.slice(-2000)).toBe(0);
    const catalogue = JSON.parse(listed.output.slice(listed.output.indexOf('{'))) as { models: Record<string, unknown>[] };
    const base = catalogue.models.find((m) => m.slug === 'gpt-5.5');
    expect(base, 'Codex lists gpt-5.5').toBeDefined();
    instructions = String(base!.base_instructions);
    const entry = { ...base, slug: spec.route, display_name: spec.route, context_window: 200_000, max_context_window: 200_000 };
    const file = join(lw.scratch, 'catalog.json');
    await writeFile(file, JSON.stringify({ models: [...catalogue.models, entry] }));
    withCatalog = await run('with', `model_catalog_json = "${file}"\n`);
  }, 240_000);

  afterAll(async () => {
    await lw?.close();
  });

  it('without an entry for the route, Codex warns and falls back', () => {
    expect(without.code, without.output.slice(-2000)).toBe(0);
    expect(without.output).toContain(WARNING);
  });

  it('with one, it finds the route, says nothing of it, and runs to the end through the proxy', () => {
    expect(withCatalog.code, withCatalog.output.slice(-2000)).toBe(0);
    expect(withCatalog.output).not.toContain(WARNING);
    expect(withCatalog.output).not.toMatch(/Model metadata for .* not found/);
    const posted = (from: number, to = lw.front.requests.length) => lw.front.requests.slice(from, to).filter((r) => r.path === '/v1/responses' && r.body?.model === spec.route);
    const before = posted(0, postedBefore);
    const after = posted(postedBefore);
    expect(before.length).toBeGreaterThanOrEqual(2);
    expect(after.length).toBeGreaterThanOrEqual(2);
    // The entry's own instructions now open every request (Codex sends them as its first input
    // item, a developer message), where the fallback's did before.
    expect(instructions.length).toBeGreaterThan(100);
    for (const r of after) expect(opening(r)).toBe(instructions);
    for (const r of before) expect(opening(r)).not.toBe(instructions);
  });
});
