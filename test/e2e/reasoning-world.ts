/**
 * An end-to-end world for the upstreams that hand out opaque reasoning on the openai-chat wire:
 * the simulator, a recording tap in front of it (each request's headers and body, and the whole
 * response text), and the proxy with these providers, all through the tap:
 *
 *   `or`: openrouter preset    -> `/openrouter/v1`
 *   `gm`: gemini-openai preset -> `/gemini/v1`
 *   `oa`: generic preset       -> `/openai/v1`
 *
 * The config is written after the tap has its address, which `startWorld` (harness.ts) cannot do.
 * The world has the harness's `World` shape, so `readSessions` and `replayAll` take it.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSim } from '../../src/sim/server.js';
import type { SimOptions } from '../../src/sim/types.js';
import { openWorld, startTap, type Tap, type TappedRequest, type World } from './harness.js';

export type Exchange = TappedRequest;

export type RecordingTap = Tap;

export interface ReasoningWorld extends World {
  tap: RecordingTap;
}

export async function startReasoningWorld(models: string, sim: SimOptions = {}): Promise<ReasoningWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'pp-opaque-'));
  const simulator = await createSim({ host: '127.0.0.1', port: 0, ...sim });
  const tap = await startTap(simulator.origin);
  const toml = `
listen = "127.0.0.1:0"
data_dir = ${JSON.stringify(join(dir, 'data'))}

[providers.or]
preset = "openrouter"
base_url = "${tap.origin}/openrouter/v1"
api_key_env = ""

[providers.gm]
preset = "gemini-openai"
base_url = "${tap.origin}/gemini/v1"
api_key_env = ""

[providers.oa]
preset = "generic"
base_url = "${tap.origin}/openai/v1"
${models}
`;
  return openWorld(dir, simulator, tap, toml);
}


/** The exchanges since `from` whose path starts with `/<mode>/`. */
export function exchanges(world: ReasoningWorld, mode: string, from = 0): Exchange[] {
  return world.tap.requests.slice(from).filter((r) => r.path.startsWith(`/${mode}/`));
}

export { sseData } from './wires-world.js';

/** A wire assistant message, as the tests read it. */
export interface WireAssistant {
  role: 'assistant';
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string }; extra_content?: { google?: { thought_signature?: string } } }[];
  reasoning_details?: unknown[];
  reasoning_content?: string;
  reasoning?: string;
}

export function assistantsOf(ex: TappedRequest): WireAssistant[] {
  return (ex.body.messages as { role: string }[]).filter((m): m is WireAssistant => m.role === 'assistant');
}
