/**
 * A long session of a real coding agent (Claude Code, Codex, qwen-code, opencode, Cline, Gemini CLI; the pinned npm
 * binaries, headless, offline on loopback as docs in agents-offline describe) through the proxy, on
 * a route small enough that the window trims several times (issue 29, "Must show").
 *
 * The tool loop is scripted through files in a temporary workspace: step N holds, on its first
 * line, the simulator directive that reads step N+1 (src/sim/directives.ts), then ~6 KB of text;
 * the last says done. Two recording taps: `front` between the agent and the proxy (what the agent
 * sent and got), the world's own between the proxy and the simulator (every upstream request and
 * its whole response).
 *
 * The figures are measured on the upstream wire, independently of the proxy's accounting: each
 * request rendered as the simulator reads it (its own renderers), the cache read taken from the
 * upstream's usage, what an unchanged prefix allows from the common prefix of consecutive rendered
 * prompts in the simulator's whole-block terms (wire-prefix.ts). Only the break causes and the
 * trims (new elisions) come from the session log, as the issue asks.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf, LogEvent } from '../../../src/core/events.js';
import { parseMessagesRequest } from '../../../src/sim/anthropic/request.js';
import { renderRequest } from '../../../src/sim/anthropic/render.js';
import { codexConfig } from './codex-config.js';
import { checkSignatures } from '../../../src/sim/anthropic/signature.js';
import { parseChatRequest } from '../../../src/sim/request.js';
import { parseResponsesRequest } from '../../../src/sim/responses/request.js';
import { parseGenerateRequest } from '../../../src/sim/gemini-native/request.js';
import { renderPrompt as renderGeminiPrompt } from '../../../src/sim/gemini-native/render.js';
import { renderResponsesPrompt } from '../../../src/sim/responses/render.js';
import { renderPrompt, TOKEN_BYTES } from '../../../src/sim/tokens.js';
import { readLogFiles, type LogFile } from '../agent-session.js';
import { replayAll, startTap, type CliResult, type Tap, type TappedRequest } from '../harness.js';
import { cacheableTokens, prefixSteps, type PrefixStep, type RenderedRequest } from '../wire-prefix.js';
import { responsesReasoning, sseData, startWiresWorld, type WiresWorld } from '../wires-world.js';

export type AgentKind = 'claude-code' | 'codex' | 'qwen-code' | 'opencode' | 'cline' | 'gemini-cli';
export type Wire = 'anthropic' | 'chat' | 'responses' | 'gemini';

const BIN = join(process.cwd(), 'node_modules', '.bin');

/** Steps of the tool loop: the issue asks for at least 40. */
export const STEPS = 42;
/** Bytes of each step file. */
export const STEP_BYTES = 6 * 1024;

export interface AgentSpec {
  kind: AgentKind;
  /** The model name the agent asks for: the proxy route. */
  route: string;
  /** Where the route's provider sends it, under the simulator. */
  upstreamPath: string;
  wire: Wire;
  /** The binary (node_modules/.bin or the package's own). */
  binary: string;
  /**
   * The `[models.ROUTE]` table; providers `an`, `rs`, `oa` come from wires-world.ts. A function of
   * the upstream's origin for a route that needs a provider of its own.
   */
  routeToml: string | ((origin: string) => string);
  /** The directive that makes the agent read `file` (an absolute path in the workspace). */
  readCall(file: string, ws: string): string;
  /** Spawns the agent on `prompt` in `ws`, pointed at `base` (the front tap's origin). */
  command(o: { prompt: string; ws: string; home: string; base: string; scratch: string; steps: number; settings?: Record<string, unknown> }): Promise<{ args: string[]; env: Record<string, string>; outFile?: string }>;
}

/**
 * Window of a route on which the agent's 42 steps cross high water at least twice. The proxy
 * estimates bytes / 3; a step adds ~6.3 KB (~2.1K estimated tokens), so high - low = 14K is ~7
 * steps between crossings. High water sits ~20K above each agent's head (tools, system, first
 * message) so the first crossing comes near step 10. The result cap is set above a step's size
 * so the files go upstream whole.
 */
function windowToml(head: number): string {
  const high = head + 20_000;
  const low = high - 14_000;
  const reserve = 8_000;
  return `context = ${high + reserve + 8_000}
output_reserve = ${reserve}
high_water = ${high}
low_water = ${low}
max_result_tokens = 4096`;
}

const call = (name: string, input: object): string => `[[call ${name} ${JSON.stringify(input)}]]`;

const offlineBase: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };

export const AGENTS: Record<AgentKind, AgentSpec> = {
  'claude-code': {
    kind: 'claude-code',
    route: 'cc-long',
    upstreamPath: '/anthropic/v1/messages',
    wire: 'anthropic',
    binary: join(process.cwd(), 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe'),
    // Anthropic preset at the simulator's /anthropic/v1 (provider `an`), its defaults otherwise; a
    // model that binds signed thinking to its prefix, as the simulator plays every model.
    routeToml: `[models.cc-long]
provider = "an"
model = "claude-sonnet-5-5"
${windowToml(16_000)}`,
    readCall: (file) => call('Read', { file_path: file }),
    async command({ prompt, home, base, steps }) {
      return {
        args: ['-p', prompt, '--output-format', 'json', '--model', 'cc-long', '--allowedTools', 'Read', 'Bash', '--max-turns', String(steps + 8), '--dangerously-skip-permissions'],
        env: {
          ...offlineBase, HOME: home, ANTHROPIC_BASE_URL: base, ANTHROPIC_API_KEY: 'sk-ant-proxy-test',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1',
          DISABLE_ERROR_REPORTING: '1', DISABLE_BUG_COMMAND: '1', CLAUDE_CODE_ENABLE_TELEMETRY: '0', IS_SANDBOX: '1',
        },
      };
    },
  },
  codex: {
    kind: 'codex',
    route: 'codex-long',
    upstreamPath: '/v1/responses',
    wire: 'responses',
    binary: join(BIN, 'codex'),
    // openai-responses preset at the simulator's /v1 (provider `rs`); keep_reasoning left to its
    // default (as the client asks: Codex asks for encrypted reasoning).
    routeToml: `[models.codex-long]
provider = "rs"
model = "gpt-sim"
${windowToml(9_500)}`,
    readCall: (file) => call('exec_command', { cmd: `cat ${file.split('/').at(-1)!}` }),
    async command({ prompt, ws, home, base, scratch }) {
      await writeFile(join(home, 'config.toml'), codexConfig('codex-long', base));
      const outFile = join(scratch, 'codex-last.txt');
      return {
        args: ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', ws, '-o', outFile, prompt],
        env: { ...offlineBase, HOME: home, CODEX_HOME: home, PREFIX_PROXY_KEY: 'sk-local', RUST_LOG: 'error' },
        outFile,
      };
    },
  },
  'qwen-code': {
    kind: 'qwen-code',
    route: 'qwen-long',
    upstreamPath: '/openai/v1/chat/completions',
    wire: 'chat',
    binary: join(BIN, 'qwen'),
    // generic preset at the simulator's /openai/v1 (provider `oa`).
    routeToml: `[models.qwen-long]
provider = "oa"
model = "sim-model"
${windowToml(25_500)}`,
    readCall: (file) => call('read_file', { file_path: file }),
    async command({ prompt, home, base, steps, settings }) {
      await mkdir(join(home, '.qwen'), { recursive: true });
      await writeFile(join(home, '.qwen', 'settings.json'), JSON.stringify({
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true, enableAutoUpdate: false },
        ...settings,
      }));
      return {
        args: ['--yolo', '--auth-type', 'openai', '--output-format', 'json', '--max-session-turns', String(steps + 8), prompt],
        env: { ...offlineBase, HOME: home, OPENAI_BASE_URL: `${base}/v1`, OPENAI_API_KEY: 'sk-local', OPENAI_MODEL: 'qwen-long', QWEN_CODE_NO_RELAUNCH: '1' },
      };
    },
  },
  opencode: {
    kind: 'opencode',
    route: 'opencode-long',
    upstreamPath: '/openai/v1/chat/completions',
    wire: 'chat',
    binary: join(BIN, 'opencode'),
    routeToml: `[models.opencode-long]
provider = "oa"
model = "sim-model"
${windowToml(10_500)}`,
    readCall: (file) => call('read', { filePath: file }),
    async command({ prompt, home, base }) {
      const config = {
        $schema: 'https://opencode.ai/config.json',
        autoupdate: false,
        share: 'disabled',
        provider: {
          pp: {
            npm: '@ai-sdk/openai-compatible',
            name: 'prefix-proxy',
            options: { baseURL: `${base}/v1`, apiKey: 'sk-local' },
            models: { 'opencode-long': { name: 'opencode-long' } },
          },
        },
      };
      // A registry nothing listens on: the plugin install opencode tries at start fails at once.
      const closed = 'http://127.0.0.1:9';
      return {
        // `opencode run` joins its message words with spaces after quoting (JSON) each word that holds
        // a space: pass the prompt word by word so that it arrives as written.
        args: ['run', '--format', 'json', '--pure', '-m', 'pp/opencode-long', ...prompt.split(' ')],
        env: {
          ...offlineBase, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local', 'share'),
          XDG_CACHE_HOME: join(home, '.cache'), XDG_STATE_HOME: join(home, '.local', 'state'),
          OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
          OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
          OPENCODE_DISABLE_DEFAULT_PLUGINS: '1', OPENCODE_DISABLE_SHARE: '1', OPENCODE_DISABLE_CLAUDE_CODE: '1',
          OPENCODE_DISABLE_EXTERNAL_SKILLS: '1', OPENCODE_DISABLE_EMBEDDED_WEB_UI: '1', OPENCODE_DISABLE_PROJECT_CONFIG: '1',
          npm_config_registry: closed, BUN_CONFIG_REGISTRY: closed, npm_config_offline: 'true',
        },
      };
    },
  },
  cline: {
    kind: 'cline',
    route: 'cline-long',
    upstreamPath: '/openai/v1/chat/completions',
    wire: 'chat',
    // The compiled binary alone, which scripts/test-agents.sh (npm's pretest) installs: the lock
    // file cannot hold the `cline` package (the script says why).
    binary: join(process.cwd(), 'node_modules', '.cache', 'agents', 'cline', 'node_modules', '@cline', `cli-${clinePlatform()}`, 'bin', 'cline'),
    routeToml: `[models.cline-long]
provider = "oa"
model = "sim-model"
${windowToml(8_000)}`,
    readCall: (file) => call('read_files', { files: [{ path: file }] }),
    async command({ prompt, ws, home, base, settings }) {
      // What `cline auth -p openai -b BASE -k KEY -m MODEL` writes: the OpenAI Compatible provider
      // (`settings` go into it: `contextWindow`, say).
      const dir = join(home, '.cline', 'data', 'settings');
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'providers.json'), JSON.stringify({
        version: 1,
        lastUsedProvider: 'openai-compatible',
        modes: {},
        providers: {
          'openai-compatible': {
            settings: { provider: 'openai-compatible', apiKey: 'sk-local', model: 'cline-long', baseUrl: `${base}/v1`, ...settings },
            updatedAt: new Date(0).toISOString(),
            tokenSource: 'manual',
          },
        },
      }));
      return {
        args: ['--json', '-P', 'openai-compatible', '-m', 'cline-long', '-c', ws, prompt],
        env: { ...offlineBase, HOME: home },
      };
    },
  },
  'gemini-cli': {
    kind: 'gemini-cli',
    route: 'gemini-long',
    // streamGenerateContent of the route's model (the task router's requests go to another model).
    upstreamPath: '/v1beta/models/gemini-3.1-pro-preview:',
    wire: 'gemini',
    binary: process.execPath,
    // The gemini preset at the simulator's native Gemini API, strict about thought signatures. The
    // models Gemini CLI asks beside its own have routes too: its task router's (gemini-cli.test.ts)
    // and the one it asks whether a long run is looping (past 30 turns).
    routeToml: (origin) => `[providers.gn]
preset = "gemini"
base_url = "${origin}/v1beta"
api_key_env = ""

[models.gemini-long]
provider = "gn"
model = "gemini-3.1-pro-preview"
${windowToml(9_000)}

[models."gemini-3.5-flash-lite"]
provider = "gn"
model = "gemini-3.5-flash-lite"

[models."gemini-3-flash-preview"]
provider = "gn"
model = "gemini-3-flash-preview"`,
    readCall: (file) => call('read_file', { file_path: file }),
    async command({ prompt, home, base }) {
      await mkdir(join(home, '.gemini'), { recursive: true });
      await writeFile(join(home, '.gemini', 'settings.json'), JSON.stringify({
        security: { auth: { selectedType: 'gemini-api-key' } },
        privacy: { usageStatisticsEnabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        telemetry: { enabled: false },
      }));
      return {
        args: [join(process.cwd(), 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js'), '-p', prompt, '--output-format', 'json', '--model', 'gemini-long'],
        env: { ...offlineBase, HOME: home, GEMINI_API_KEY: 'gm-proxy-test', GOOGLE_GEMINI_BASE_URL: base, GEMINI_CLI_TRUST_WORKSPACE: 'true' },
      };
    },
  },
};

/** Cline's name for this platform in its binary packages' names. */
function clinePlatform(): string {
  const os = ({ linux: 'linux', darwin: 'darwin', win32: 'windows' } as Record<string, string>)[process.platform] ?? process.platform;
  return `${os}-${process.arch}`;
}

/** Deterministic filler text: lines of words, no `[[` (nothing the simulator reads as a directive). */
function filler(seed: number, bytes: number): string {
  const words = ['alpha', 'bravo', 'cache', 'delta', 'prefix', 'window', 'token', 'block', 'trim', 'log', 'replay', 'digest', 'route', 'wire', 'session', 'head'];
  let x = seed >>> 0 || 1;
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % words.length;
  };
  const lines: string[] = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    let line = `${String(n).padStart(3, '0')}:`;
    while (line.length < 72) line += ` ${words[next()]!}${next()}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/** The step files: step N's first line reads step N+1; the last says done. Returns the first prompt. */
export async function writeSteps(spec: AgentSpec, ws: string, tagText: string, steps = STEPS): Promise<{ prompt: string; done: string; marks: string[] }> {
  const done = `All ${steps} steps are done (${tagText}).`;
  const marks: string[] = [];
  for (let i = 1; i <= steps; i++) {
    const next = i === steps ? `[[say ${done}]]` : spec.readCall(join(ws, `step${i + 1}.txt`), ws);
    const head = `Step ${i} of ${steps} (${tagText}). Next: ${next}\n`;
    const body = filler(i * 7919 + tagText.length, STEP_BYTES - head.length - 40);
    // The last line names the step too: seen upstream, it shows the whole file went.
    const last = `End of step ${i} of ${steps} (${tagText}).`;
    marks.push(last);
    await writeFile(join(ws, `step${i}.txt`), `${head}${body}\n${last}\n`);
  }
  return { prompt: `Follow the steps in the files, one at a time (${tagText}). ${spec.readCall(join(ws, 'step1.txt'), ws)}`, done, marks };
}

export interface AgentRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Codex's `-o` file. */
  out: string;
  ms: number;
}

/**
 * Runs the agent with its stdout in a file: qwen-code exits before a pipe has taken a long JSON
 * transcript (it was cut at 256 KB), while writes to a file are synchronous.
 */
export async function runAgent(spec: AgentSpec, args: string[], env: Record<string, string>, cwd: string, timeoutMs: number, stdoutFile: string, outFile?: string): Promise<AgentRun> {
  const t0 = Date.now();
  const fd = openSync(stdoutFile, 'w');
  const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve, reject) => {
    const child = spawn(spec.binary, args, { cwd, env, stdio: ['ignore', fd, 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  }).finally(() => closeSync(fd));
  const stdout = await readFile(stdoutFile, 'utf8');
  const out = outFile === undefined ? '' : await readFile(outFile, 'utf8').catch(() => '');
  return { ...ended, stdout, out, ms: Date.now() - t0 };
}

/** A request as the simulator renders it, with its head: tools, system and the first user message. */
export interface Rendered extends RenderedRequest {
  /** Bytes of the tools, the system prompt and everything up to the end of the first user message. */
  firstBytes: number;
}

export function render(wire: Wire, req: TappedRequest): Rendered {
  const text = JSON.stringify(req.body);
  if (wire === 'anthropic') {
    const beta = req.headers['anthropic-beta'];
    const betas = (Array.isArray(beta) ? beta.join(',') : beta ?? '').split(',').map((b) => b.trim());
    const parsed = parseMessagesRequest(text, { betas });
    // What the model reads: without the thinking blocks a "drop_block" request has the API drop.
    const segments = parsed.thinking?.prefixMismatch === 'drop_block' ? checkSignatures(parsed, renderRequest(parsed)).segments : renderRequest(parsed);
    const lenOf = (keep: (where: string) => boolean): number => Buffer.byteLength(segments.filter((s) => keep(s.where)).map((s) => s.text).join(''), 'utf8');
    const isHead = (where: string): boolean => where.startsWith('tools.') || where.startsWith('system.');
    return {
      bytes: Buffer.from(segments.map((s) => s.text).join(''), 'utf8'),
      headBytes: lenOf(isHead),
      firstBytes: lenOf((where) => isHead(where) || where.startsWith('messages.0.')),
      messageKey: parsed.messageCacheKey,
    };
  }
  if (wire === 'chat') {
    const parsed = parseChatRequest(text);
    const firstUser = parsed.messages.findIndex((m) => m.role === 'user');
    const system = parsed.messages.findIndex((m) => m.role !== 'system' && m.role !== 'developer');
    return {
      bytes: Buffer.from(renderPrompt(parsed.tools, parsed.messages), 'utf8'),
      headBytes: Buffer.byteLength(renderPrompt(parsed.tools, parsed.messages.slice(0, system < 0 ? parsed.messages.length : system)), 'utf8'),
      firstBytes: Buffer.byteLength(renderPrompt(parsed.tools, parsed.messages.slice(0, firstUser + 1)), 'utf8'),
      messageKey: '',
    };
  }
  if (wire === 'gemini') {
    const parsed = parseGenerateRequest(text);
    const upTo = (n: number): number => Buffer.byteLength(renderGeminiPrompt({ tools: parsed.tools, systemInstruction: parsed.systemInstruction, contents: parsed.contents.slice(0, n) }), 'utf8');
    return {
      bytes: Buffer.from(renderGeminiPrompt(parsed), 'utf8'),
      headBytes: upTo(0),
      firstBytes: upTo(parsed.contents.findIndex((c) => c.role === 'user') + 1),
      messageKey: '',
    };
  }
  const parsed = parseResponsesRequest(text);
  const firstUser = parsed.input.findIndex((i) => i.type === 'message' && i.role === 'user');
  const system = parsed.input.findIndex((i) => !(i.type === 'message' && (i.role === 'system' || i.role === 'developer')));
  const upTo = (n: number): number => Buffer.byteLength(renderResponsesPrompt({ ...parsed, input: parsed.input.slice(0, n) }), 'utf8');
  return {
    bytes: Buffer.from(renderResponsesPrompt(parsed), 'utf8'),
    headBytes: upTo(system < 0 ? parsed.input.length : system),
    firstBytes: upTo(firstUser + 1),
    messageKey: '',
  };
}

/** The upstream's usage as it answered (SSE or JSON), in prompt and cached-read tokens. */
export function upstreamUsage(wire: Wire, ex: TappedRequest): { prompt: number; cached: number } | undefined {
  const payloads = ex.response.trimStart().startsWith('{') ? [JSON.parse(ex.response) as Record<string, unknown>] : sseData(ex.response);
  let found: { prompt: number; cached: number } | undefined;
  for (const p of payloads) {
    if (wire === 'anthropic') {
      const u = ((p.message as Record<string, unknown> | undefined)?.usage ?? (p.type === 'message' ? p.usage : undefined)) as Record<string, number> | undefined;
      if (u !== undefined && p.type !== 'message_delta') {
        const cached = u.cache_read_input_tokens ?? 0;
        found = { prompt: (u.input_tokens ?? 0) + cached + (u.cache_creation_input_tokens ?? 0), cached };
      }
    } else if (wire === 'gemini') {
      const u = p.usageMetadata as { promptTokenCount?: number; cachedContentTokenCount?: number } | undefined;
      if (u?.promptTokenCount !== undefined) found = { prompt: u.promptTokenCount, cached: u.cachedContentTokenCount ?? 0 };
    } else if (wire === 'chat') {
      const u = p.usage as { prompt_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | undefined | null;
      if (u?.prompt_tokens !== undefined) found = { prompt: u.prompt_tokens, cached: u.prompt_tokens_details?.cached_tokens ?? 0 };
    } else {
      const r = (p.type === 'response.completed' ? p.response : p.object === 'response' ? p : undefined) as { usage?: { input_tokens: number; input_tokens_details?: { cached_tokens?: number } } } | undefined;
      if (r?.usage !== undefined) found = { prompt: r.usage.input_tokens, cached: r.usage.input_tokens_details?.cached_tokens ?? 0 };
    }
  }
  return found;
}

type LlmReq = EventOf<'llm.req'>;

export interface Figures {
  agent: AgentKind;
  /** Upstream requests of the main conversation (and of all, side requests included). */
  requests: number;
  allRequests: number;
  /** Upstream answers with a 4xx (all requests). */
  refused: number;
  /** Requests whose window elided something new (llm.req `elided`), by index. */
  trims: number[];
  /** Requests whose cause is not first or none, by index, with the cause. */
  breaks: { at: number; cause: string }[];
  /** Per trim request: tokens read from the cache against the unchanged head's whole blocks. */
  headAtTrims: { at: number; read: number; head: number }[];
  /** Sum of cached reads over sum of what the unchanged prefix allows (requests after the first). */
  efficiency: number;
  read: number;
  ideal: number;
  /** Requests that read less than 90% of what they allowed, for the failure message. */
  short: string[];
  /** Upstream prompt sizes that differ from the rendering (the measure's own check). */
  renderMismatch: number;
  /** Bytes of the main session's log, and of all logs. */
  logBytes: number;
  allLogBytes: number;
  /** client.rewrite lines in the main session. */
  rewrites: number;
  /** Agent requests (index among those with tools) that hold a cleared tool result of the agent's own, and the first. */
  clientCleared: number;
  firstCleared: number;
  /** Upstream requests that still show such a cleared result (the proxy passed the clearing on). */
  upstreamCleared: number;
  seconds: number;
}

export interface LongRun {
  spec: AgentSpec;
  run: AgentRun;
  done: string;
  tagText: string;
  /** The last line of each step file, and those no upstream request held (a file cut short). */
  marks: string[];
  unseen: string[];
  world: WiresWorld;
  front: Tap;
  /** Upstream exchanges of the main conversation (those with tools), in order. */
  upstream: TappedRequest[];
  /** Everything the upstream tap saw on the route's path. */
  allUpstream: TappedRequest[];
  /** Everything the agent sent the proxy. */
  asked: TappedRequest[];
  events: LogEvent[];
  reqs: LlmReq[];
  files: LogFile[];
  main: LogFile | undefined;
  steps: PrefixStep[];
  rendered: Rendered[];
  figures: Figures;
}

export interface LongWorld {
  world: WiresWorld;
  front: Tap;
  scratch: string;
  close(): Promise<void>;
}

export async function startLongWorld(spec: AgentSpec, extraToml = ''): Promise<LongWorld> {
  const world = await startWiresWorld({ models: (origin) => `${typeof spec.routeToml === 'string' ? spec.routeToml : spec.routeToml(origin)}\n${extraToml}` });
  const front = await startTap(new URL(world.proxy.url).origin);
  const scratch = await mkdtemp(join(tmpdir(), `pp-long-${spec.kind}-`));
  return {
    world, front, scratch,
    async close() {
      await front.close();
      await world.close();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

/** Runs the agent's long session and measures it. */
export async function longSession(lw: LongWorld, spec: AgentSpec, o: { steps?: number; timeoutMs?: number; settings?: Record<string, unknown> } = {}): Promise<LongRun> {
  const { world, front, scratch } = lw;
  const tagText = `long-${spec.kind}-${process.pid}`;
  const ws = join(scratch, 'ws');
  const home = join(scratch, 'home');
  await Promise.all([mkdir(ws, { recursive: true }), mkdir(home, { recursive: true })]);
  const stepCount = o.steps ?? STEPS;
  const { prompt, done, marks } = await writeSteps(spec, ws, tagText, stepCount);
  const { args, env, outFile } = await spec.command({ prompt, ws, home, base: front.origin, scratch, steps: stepCount, ...(o.settings === undefined ? {} : { settings: o.settings }) });
  const run = await runAgent(spec, args, env, ws, o.timeoutMs ?? 240_000, join(scratch, 'stdout.txt'), outFile);

  const allUpstream = world.tap.requests.filter((r) => r.path.startsWith(spec.upstreamPath));
  const upstream = allUpstream.filter((r) => Array.isArray(r.body?.tools) && r.body.tools.length > 0);
  const files = await readLogFiles(world);
  const count = (f: LogFile): number => f.lines.filter((l) => l.event.type === 'llm.req').length;
  const main = [...files].sort((a, b) => count(b) - count(a))[0];
  const events = main?.lines.map((l) => l.event) ?? [];
  const reqs = events.filter((e): e is LlmReq => e.type === 'llm.req');
  const rendered = upstream.map((r) => render(spec.wire, r));
  const steps = prefixSteps(rendered);
  const usage = upstream.map((r) => upstreamUsage(spec.wire, r));
  const read = usage.map((u) => u?.cached ?? 0);

  const trims = reqs.map((r, i) => (r.elided.length > 0 ? i : -1)).filter((i) => i >= 0);
  const breaks = reqs.map((r, i) => ({ at: i, cause: r.cause ?? 'unset' })).filter((b) => b.cause !== 'first' && b.cause !== 'none');
  const headAtTrims = trims.map((at) => {
    const cur = rendered[at];
    const prev = rendered[at - 1];
    if (cur === undefined || prev === undefined) return { at, read: read[at] ?? 0, head: -1 };
    const unchanged = Math.min(commonBytes(prev.bytes, cur.bytes), cur.firstBytes, prev.firstBytes);
    return { at, read: read[at] ?? 0, head: cacheableTokens(unchanged) };
  });
  const ideal = steps.slice(1).reduce((n, s) => n + s.ideal, 0);
  const got = read.slice(1).reduce((n, x) => n + x, 0);
  const short = steps.map((s, i) => (i > 0 && s.ideal > 0 && read[i]! < s.ideal * 0.9 ? `#${i} ${read[i]}/${s.ideal}` : '')).filter((x) => x !== '');
  // What an agent puts in place of an old tool result it clears itself (qwen-code, Claude Code).
  const cleared = front.requests.filter((x) => Array.isArray(x.body?.tools) && x.body.tools.length > 0).map((x) => JSON.stringify(x.body).includes('Old tool result content cleared'));
  const renderMismatch = usage.filter((u, i) => u !== undefined && u.prompt !== Math.ceil(rendered[i]!.bytes.length / TOKEN_BYTES)).length;
  const figures: Figures = {
    agent: spec.kind,
    requests: upstream.length,
    allRequests: allUpstream.length,
    refused: world.tap.requests.filter((r) => r.status >= 400 && r.status < 500).length,
    trims,
    breaks,
    headAtTrims,
    efficiency: ideal === 0 ? 1 : got / ideal,
    read: got,
    ideal,
    short,
    renderMismatch,
    logBytes: main?.bytes ?? 0,
    allLogBytes: files.reduce((n, f) => n + f.bytes, 0),
    rewrites: events.filter((e) => e.type === 'client.rewrite').length,
    clientCleared: cleared.filter((c) => c).length,
    firstCleared: cleared.indexOf(true),
    upstreamCleared: upstream.filter((x) => JSON.stringify(x.body).includes('Old tool result content cleared')).length,
    seconds: Math.round(run.ms / 100) / 10,
  };
  const bodies = upstream.map((x) => JSON.stringify(x.body));
  const unseen = marks.filter((m) => !bodies.some((b) => b.includes(m)));
  return { spec, run, done, tagText, marks, unseen, world, front, upstream, allUpstream, asked: [...front.requests], events, reqs, files, main, steps, rendered, figures };
}

function commonBytes(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** What the agent printed as its final answer holds the done line. */
export function finished(r: LongRun): boolean {
  return `${r.run.out}\n${r.run.stdout}`.includes(r.done);
}

/**
 * Codex's encrypted reasoning, per main request k: what the upstream made (one item per reply),
 * what Codex got back from the proxy, what Codex sent, and what the proxy sent upstream.
 */
export interface ReasoningTrail {
  made: string[];
  /** Per front exchange: the encrypted items the proxy's reply gave Codex. */
  got: string[][];
  /** Per front request: the encrypted items Codex sent back, in order. */
  echoed: string[][];
  /** Per upstream request: the encrypted items the proxy sent, in order. */
  sent: string[][];
}

export function reasoningTrail(r: LongRun): ReasoningTrail {
  const enc = (items: unknown): string[] => (Array.isArray(items) ? items : [])
    .filter((i: { type?: string; encrypted_content?: unknown }) => i.type === 'reasoning' && typeof i.encrypted_content === 'string')
    .map((i: { encrypted_content: string }) => i.encrypted_content);
  const front = r.asked.filter((x) => x.path.startsWith('/v1/responses') && Array.isArray(x.body?.tools) && x.body.tools.length > 0);
  return {
    made: r.upstream.map((x) => enc(responsesReasoning(x.response))[0] ?? ''),
    got: front.map((x) => enc(responsesReasoning(x.response))),
    echoed: front.map((x) => enc(x.body.input)),
    sent: r.upstream.map((x) => enc(x.body.input)),
  };
}

/** `proxy replay --all` over the world (the built CLI: `npm run build` first). */
export function replay(lw: LongWorld): Promise<CliResult> {
  return replayAll(lw.world);
}

export function binaryInstalled(spec: AgentSpec): boolean {
  return existsSync(spec.binary);
}

/** One line of figures for the report. */
export function figureLine(f: Figures): string {
  const head = f.headAtTrims.map((h) => `${h.read}/${h.head}`).join(' ');
  return `${f.agent}: ${f.requests} requests (${f.allRequests} upstream), ${f.refused} refused, trims at ${JSON.stringify(f.trims)}, `
    + `breaks ${JSON.stringify(f.breaks.map((b) => `${b.at}:${b.cause}`))}, head read at trims ${head}, `
    + `efficiency ${f.efficiency.toFixed(4)} (${f.read}/${f.ideal}), log ${f.logBytes} B (all ${f.allLogBytes} B), rewrites ${f.rewrites}, `
    + `agent-cleared requests ${f.clientCleared} (first ${f.firstCleared}; upstream ${f.upstreamCleared}), `
    + `render mismatches ${f.renderMismatch}, ${f.seconds} s`;
}

/** The checks of issue 29's first "Must show" bullet, one test each. */
export type Check = 'completes' | 'refused' | 'trims' | 'breaks' | 'head' | 'efficiency' | 'reasoning' | 'replay';

export interface SuiteOptions {
  /**
   * Checks that fail for a known reason another change is fixing, with that reason: the test
   * then expects the failure (`it.fails`) and its figure is still printed. Remove the entry when
   * the fix lands (the test then fails as a reminder).
   */
  known?: Partial<Record<Check, string>>;
  /** Extra TOML for the world's config. */
  extraToml?: string;
  /** Tool steps (default STEPS). */
  steps?: number;
  /** Merged into the agent's own settings (qwen-code's ~/.qwen/settings.json, Cline's provider). */
  settings?: Record<string, unknown>;
  /** Names this run in the describe title, when a file holds more than one. */
  label?: string;
  /** The agent clears old tool results itself in this run: check that it did (else the run shows nothing of it). */
  clientClears?: boolean;
  /** The agent's own checks, on the same run (called inside the describe; `run()` is set once beforeAll ends). */
  more?: (run: () => LongRun) => void;
}

/** The whole suite for one agent: one long session in beforeAll, then one test per check. */
export function longSessionSuite(kind: AgentKind, opts: SuiteOptions = {}): void {
  const spec = AGENTS[kind];
  const test = (check: Check): typeof it => (opts.known?.[check] === undefined ? it : (it.fails as unknown as typeof it));
  let lw: LongWorld | undefined;
  let r: LongRun;
  const steps = opts.steps ?? STEPS;

  describe(`${kind}${opts.label === undefined ? '' : ` (${opts.label})`}, headless through the proxy: ${steps} tool steps of ~6 KB on a route that trims`, () => {
    beforeAll(async () => {
      expect(binaryInstalled(spec), spec.binary).toBe(true);
      lw = await startLongWorld(spec, opts.extraToml);
      r = await longSession(lw, spec, { steps, ...(opts.settings === undefined ? {} : { settings: opts.settings }) });
      console.log(`[long-session] ${figureLine(r.figures)}`);
    }, 300_000);
    afterAll(async () => {
      await lw?.close();
    });

    const why = (c: Check): string => (opts.known?.[c] === undefined ? '' : ` (known failure: ${opts.known[c]})`);

    test('completes')(`completes: exit 0, the last step's answer, ${steps} tool calls, each file whole upstream${why('completes')}`, () => {
      const diag = `${r.run.signal ?? ''} ${r.run.stderr.slice(-1500)}\n${r.run.stdout.slice(-1500)}`;
      expect(r.run.code, diag).toBe(0);
      expect(finished(r), diag).toBe(true);
      const calls = r.events.flatMap((e) => (e.type === 'llm.resp' ? e.reply.tool_calls ?? [] : []));
      expect(calls.length).toBeGreaterThanOrEqual(steps);
      expect(r.upstream.length).toBeGreaterThanOrEqual(steps + 1);
      // Every step file went upstream to its last line: nothing cut it short.
      expect(r.unseen).toEqual([]);
      // The proxy logged one llm.req per upstream request of the conversation.
      expect(r.reqs).toHaveLength(r.upstream.length);
    });

    test('refused')(`nothing refused: no 4xx upstream or to the agent${why('refused')}`, () => {
      const bad = (xs: readonly TappedRequest[]): string[] => xs.filter((x) => x.status >= 400 && x.status < 500).map((x) => `${x.status} ${x.path} ${x.response.slice(0, 300)}`);
      expect(bad(r.world.tap.requests)).toEqual([]);
      expect(bad(r.front.requests)).toEqual([]);
      expect(r.world.tap.requests.every((x) => x.status === 200), JSON.stringify(r.world.tap.requests.map((x) => x.status))).toBe(true);
    });

    test('trims')(`the window trims at least twice, and the wire shows new elisions exactly there${why('trims')}`, () => {
      expect(r.figures.trims.length, figureLine(r.figures)).toBeGreaterThanOrEqual(2);
      expect(r.steps.map((s, i) => (s.trimmed ? i : -1)).filter((i) => i >= 0)).toEqual(r.figures.trims);
    });

    test('breaks')(`the prefix breaks only at trims, at most once per trim (llm.req cause)${why('breaks')}`, () => {
      const f = r.figures;
      expect(r.reqs[0]?.cause).toBe('first');
      const trims = new Set(f.trims);
      expect(f.breaks.filter((b) => !trims.has(b.at)), figureLine(f)).toEqual([]);
      expect(f.breaks.length, figureLine(f)).toBeLessThanOrEqual(f.trims.length);
    });

    test('head')(`each trim request reads at least 90% of the unchanged head (tools, system, first message) from the cache${why('head')}`, () => {
      const f = r.figures;
      expect(f.headAtTrims.length).toBeGreaterThanOrEqual(2);
      for (const h of f.headAtTrims) {
        expect(h.head, `trim at request ${h.at}: nothing of the head was cacheable`).toBeGreaterThan(0);
        expect(h.read, `trim at request ${h.at}: read ${h.read} of an unchanged head of ${h.head} tokens; ${figureLine(f)}`).toBeGreaterThanOrEqual(0.9 * h.head);
      }
    });

    test('efficiency')(`reads at least 0.99 of what the unchanged prefix allows over the session${why('efficiency')}`, () => {
      const f = r.figures;
      // The measure's own check: the simulator counted each prompt as rendered here.
      expect(f.renderMismatch).toBe(0);
      expect(f.ideal).toBeGreaterThan(0);
      expect(f.efficiency, `read ${f.read} of ${f.ideal}; short: ${f.short.length} (${f.short.slice(0, 8).join(', ')})`).toBeGreaterThanOrEqual(0.99);
    });

    opts.more?.(() => r);

    if (opts.clientClears === true) {
      it('the agent cleared old tool results itself during the session', () => {
        expect(r.figures.firstCleared, figureLine(r.figures)).toBeGreaterThan(0);
        expect(r.figures.firstCleared).toBeLessThan(r.figures.requests - 1);
      });
    }

    if (spec.wire === 'responses') {
      test('reasoning')(`encrypted reasoning: made upstream, given to the agent, sent back unchanged until a trim drops it${why('reasoning')}`, () => {
        const trail = reasoningTrail(r);
        const trims = new Set(r.figures.trims);
        expect(trail.made.every((m) => /^[A-Za-z0-9_-]{40,}$/.test(m)), JSON.stringify(trail.made.map((m) => m.slice(0, 12)))).toBe(true);
        expect(trail.got).toHaveLength(trail.made.length);
        expect(trail.echoed).toHaveLength(trail.made.length);
        const dropped = new Set<string>();
        trail.made.forEach((made, k) => {
          // What the agent got is what the upstream made; it sent every earlier one back as it got it.
          expect(trail.got[k], `reply ${k}`).toEqual([made]);
          expect(trail.echoed[k], `request ${k}`).toEqual(trail.made.slice(0, k));
          const before = trail.made.slice(0, k);
          const sent = trail.sent[k]!;
          if (trims.has(k)) before.filter((m) => !sent.includes(m)).forEach((m) => dropped.add(m));
          // Unchanged, in order; one dropped only at a trim, and it stays dropped.
          expect(sent, `upstream request ${k} (trim: ${trims.has(k)})`).toEqual(before.filter((m) => !dropped.has(m)));
        });
        // Between trims the upstream got reasoning back: every request but the first and the trims
        // sent its predecessor's reply's reasoning.
        trail.made.forEach((_, k) => {
          if (k > 0 && !trims.has(k)) expect(trail.sent[k], `upstream request ${k}`).toContain(trail.made[k - 1]);
        });
      });
    }

    test('replay')(`proxy replay --all passes${why('replay')}`, async () => {
      const result = await replay(lw!);
      expect(result.code, result.stderr + result.stdout.slice(0, 2000)).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ failed: 0 });
    }, 60_000);
  });
}
