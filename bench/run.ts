/**
 * `npm run bench`: every benchmark in one run, side by side, written to bench/RESULTS.md.
 * The machine is shared and noisy: figures are medians, and comparisons are ratios measured in
 * the same run. `npm run bench -- --only peers,window` measures only the sections named and puts
 * them in place of their old text in RESULTS.md, keeping the others; `--drop-caches` drops the page
 * cache before each startup measurement (root only); `--minutes N` sets how long the soak runs (10);
 * `--baseline CHECKOUT` adds the peers-baseline section (prefix-proxy from another built checkout beside this one), and
 * that build's figures beside this one's in the wires and redaction sections.
 */
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SONNET, measureAnthropicCache } from './anthropic-cache.js';
import { anthropicTrimsSection } from './anthropic-trims.js';
import { measureCache, measureSharedCache } from './cache.js';
import { measureEncode } from './encode.js';
import { geminiCacheSection } from './gemini-cache.js';
import { measureInbound } from './inbound.js';
import { foldsSection } from './folds.js';
import { inspectorSection } from './inspector.js';
import { inspectorPageSection } from './inspector-page.js';
import { longSessionSection } from './long-session.js';
import { metricCallsSection } from './metric-calls.js';
import { headMemoSection } from './head-memo.js';
import { itemReferencesSection } from './item-references.js';
import { measureOverhead } from './overhead.js';
import { baselineMain, measurePeers, renderPeers } from './peers.js';
import { measureReplicas, renderReplicas } from './replicas.js';
import { redactionSection } from './redaction.js';
import { measureWires, renderWires } from './wires.js';
import { sessionFilesSection } from './session-files.js';
import { logGrowthSection, liveMemorySection, startupSection, type Line } from './session-sections.js';
import { soakSection } from './soak.js';
import { storedSessionsSection } from './stored-sessions.js';
import { pruneSection } from './prune.js';
import { fmt, pct } from './stats.js';
import { measureTracing } from './tracing.js';
import { measureWindowCost } from './window-cost.js';

const { values: flags } = parseArgs({
  options: { only: { type: 'string' }, 'drop-caches': { type: 'boolean', default: false }, minutes: { type: 'string', default: '10' }, baseline: { type: 'string' } },
});

/** Each section writes its text and says whether it kept its budget (false fails the run). */
const SECTIONS: Record<string, (line: Line) => Promise<boolean>> = {
  window: windowSection,
  'long-session': longSessionSection,
  folds: foldsSection,
  encode: encodeSection,
  inbound: inboundSection,
  cache: cacheSection,
  anthropic: anthropicSection,
  'anthropic-trims': anthropicTrimsSection,
  'gemini-cache': geminiCacheSection,
  overhead: overheadSection,
  tracing: tracingSection,
  'log-growth': logGrowthSection,
  startup: (line) => startupSection(line, { dropCaches: flags['drop-caches'] }),
  'live-memory': liveMemorySection,
  'session-files': sessionFilesSection,
  'stored-sessions': storedSessionsSection,
  prune: pruneSection,
  'metric-calls': metricCallsSection,
  'head-memo': headMemoSection,
  'item-references': itemReferencesSection,
  redaction: (line) => redactionSection(line, flags.baseline === undefined ? {} : { baseline: resolve(flags.baseline), baselineName: gitRev(resolve(flags.baseline)) }),
  peers: peersSection,
  'peers-baseline': peersBaselineSection,
  wires: wiresSection,
  inspector: inspectorSection,
  'inspector-page': inspectorPageSection,
  replicas: async (line) => {
    for (const l of renderReplicas(await measureReplicas())) line(l);
    return true;
  },
  soak: (line) => soakSection(line, soakMinutes()),
};

/** `--minutes N`: how long the soak runs (default 10). */
function soakMinutes(): number {
  const minutes = Number(flags.minutes);
  if (!(minutes > 0)) throw new Error(`bench: --minutes expects a number of minutes > 0, got "${flags.minutes}"`);
  return minutes;
}

async function windowSection(line: Line): Promise<boolean> {
  measureWindowCost([100], 3); // warm the JIT before measuring
  const rows = measureWindowCost([10, 100, 1000], 15);
  const base = rows[0]!;
  line('## Window: the next request as the session grows');
  line();
  line('Applying the new client messages, then building and digesting the next request, as the live loop does (state carried over);');
  line('"cold" folds every event from the start instead (what replaying one request does). Medians of 15 generated sessions each;');
  line('32K-token window (high water 22,937, low water 14,336), so the long sessions sit at high water and trim.');
  line();
  line('| session | events | next request (µs) | vs 10 | cold rebuild (µs) | request messages (KiB) | heap (MiB) |');
  line('|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    line(`| ${r.requests} requests | ${r.events} | ${fmt(r.nextUs)} | ${fmt(r.nextUs / base.nextUs, 2)}x | ${fmt(r.coldUs)} | ${fmt(r.requestKb)} | ${fmt(r.heapMb)} |`);
  }
  const ratio = rows[2]!.nextUs / base.nextUs;
  line();
  line(`1000-request next request costs ${fmt(ratio, 2)}x the 10-request one (budget: under 3x) — ${ratio < 3 ? 'within budget' : 'OVER BUDGET'}.`);
  line();
  return ratio < 3;
}

async function encodeSection(line: Line): Promise<boolean> {
  const rows = measureEncode(2000, 100);
  line('## Encode: one upstream request of a 2,000-message conversation, per wire');
  line();
  line('The conversation grows by a tool call and its result per request, as an agent\'s does; each of 100 requests is encoded');
  line('with the memos carried over from the requests before it (the proxy\'s default bounds, `wire_cache_mb = 4`) and again');
  line('without any (the first request after a restart, or `wire_cache_mb = 0`), timed to the UTF-8 bytes that go upstream;');
  line('both give the same bytes (the bench checks). Beside them, one JSON.stringify of the same body to bytes: how Anthropic,');
  line('Responses and Ollama encoded every request before they kept their serialisations (less building the wire objects).');
  line('Anthropic with breakpoints serialises the message whose marker moved again. Medians, in one run.');
  line();
  line('| wire | messages | body (KiB) | whole-body JSON.stringify (ms) | without memos (ms) | with memos (ms) | stringify / with memos |');
  line('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    line(`| ${r.wire} | ${r.messages} | ${fmt(r.bodyKb, 0)} | ${fmt(r.wholeMs, 2)} | ${fmt(r.plainMs, 2)} | ${fmt(r.memoMs, 2)} | ${fmt(r.wholeMs / r.memoMs, 1)}x |`);
  }
  line();
  return true;
}

/** Through the memo, a request of a 2,000-message conversation reads at most this share of what it costs from scratch. */
const INBOUND_BUDGET = 1 / 3;

async function inboundSection(line: Line): Promise<boolean> {
  const rows = measureInbound(2000, 60);
  line('## Inbound: reading one client request of a 2,000-message conversation, per wire');
  line();
  line('The body parsed, checked and converted to neutral messages, as the proxy does before it looks for the session. The');
  line('conversation grows by a tool call and its result per request; each of 60 requests is read through the body memo carried');
  line('over from the requests before it (the proxy\'s path: repeated elements taken as parsed, their checks and conversions');
  line('reused), from scratch (JSON.parse of the whole body, every message checked and converted: a body under 16 KB, or any');
  line('with the memo off), and with only the parse taken from the memo (what a body of 256 KB or more cost before the checks');
  line('and conversions were kept; smaller bodies were read from scratch). The memo\'s path must give the same messages as');
  line('a read from scratch (the bench checks). Medians, in one run.');
  line();
  line('| wire | list elements | body (KiB) | from scratch (ms) | parse only from the memo (ms) | through the memo (ms) | memo / scratch |');
  line('|---|---:|---:|---:|---:|---:|---:|');
  let ok = true;
  for (const r of rows) {
    line(`| ${r.wire} | ${r.messages} | ${fmt(r.bodyKb, 0)} | ${fmt(r.wholeMs, 2)} | ${fmt(r.parseOnlyMs, 2)} | ${fmt(r.memoMs, 2)} | ${fmt(r.memoMs / r.wholeMs, 2)} |`);
    ok &&= r.memoMs <= INBOUND_BUDGET * r.wholeMs;
  }
  line();
  line(`Through the memo every wire reads a request at most a third of the cost from scratch: ${ok ? 'within budget' : 'OVER BUDGET'}.`);
  line();
  return ok;
}

async function cacheSection(line: Line): Promise<boolean> {
  const cache = [...(await measureCache(50, 7, 4)), ...(await measureCache(50, 7, 16)), ...(await measureSharedCache(8, 50, 4, 1000))];
  line('## Cache: a 50-request agent session, simulator replicas with caches of their own, random routing without a key');
  line();
  line('The same deterministic agent (bench/agent.ts, official `openai` client, streaming) through the proxy and direct.');
  line('Ideal: each request reads its predecessor\'s whole prompt from the cache, rounded down to 128 tokens (prompts of 1024+).');
  line('Direct, a request lands on a replica that last saw the conversation a few requests earlier and reads only that older');
  line('prefix: with N replicas chosen at random it lags N requests on average, so the loss grows with the replica count.');
  line('Replicas also serve other traffic: the last rows run 8 sessions at once on 4 replicas whose caches hold 1,000 blocks');
  line('(128,000 tokens) each; keyed, each session keeps to one replica; keyless, every replica holds every session and evicts.');
  line();
  line('| path | requests | prompt tokens | cached tokens | ideal cached | of ideal | token cache rate |');
  line('|---|---:|---:|---:|---:|---:|---:|');
  for (const c of cache) {
    line(`| ${c.path} | ${c.requests} | ${c.prompt} | ${c.cached} | ${c.ideal} | ${pct(c.cached, c.ideal)} | ${pct(c.cached, c.prompt)} |`);
  }
  line();
  return true;
}

async function anthropicSection(line: Line): Promise<boolean> {
  const anthropic = await measureAnthropicCache(60, 11);
  line('## Cache: Anthropic-style upstream (caches only when asked), a 60-request agent trace');
  line();
  line('The simulator\'s Anthropic wire: nothing is cached without `cache_control`; reads and writes are exact prefixes at block');
  line('boundaries. Ideal: each request reads its predecessor\'s whole prompt. Cost at Claude Sonnet list prices');
  line(`($${SONNET.input} input, $${SONNET.cache_read} cache read, $${SONNET.cache_write} cache write, $${SONNET.output} output per million tokens).`);
  line();
  line('| path | requests | prompt tokens | cached | written | ideal cached | of ideal | cost (USD) |');
  line('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const a of anthropic) {
    line(`| ${a.path} | ${a.requests} | ${a.prompt} | ${a.cached} | ${a.written} | ${a.ideal} | ${pct(a.cached, a.ideal)} | ${fmt(a.cost, 4)} |`);
  }
  line();
  const withCc = anthropic[0]!;
  const direct = anthropic[2]!;
  line(`With cache_control the proxy's trace costs ${fmt(withCc.cost, 4)} USD against ${fmt(direct.cost, 4)} USD sent direct without it (${fmt(direct.cost / withCc.cost, 2)}x).`);
  line();
  return true;
}

async function overheadSection(line: Line): Promise<boolean> {
  const overhead = await measureOverhead(100, 3000);
  line('## Overhead: the simulator alone against the proxy in front of it');
  line();
  line('Agent session: 100 requests of one conversation, one at a time, through the official client (wall time per request;');
  line('through the proxy this includes session matching, the window, the log synced before each answer).');
  line('Load: autocannon, 10 connections, 3000 requests, each a new one-message conversation of ~1.6 KB (through the proxy:');
  line('a new session and log file per request).');
  line();
  line('| path | agent p50 (ms) | agent p99 (ms) | load req/s | load p50 (ms) | load p99 (ms) |');
  line('|---|---:|---:|---:|---:|---:|');
  for (const o of overhead) line(`| ${o.path} | ${fmt(o.agentP50, 2)} | ${fmt(o.agentP99, 2)} | ${fmt(o.rps, 0)} | ${fmt(o.p50, 1)} | ${fmt(o.p99, 1)} |`);
  line();
  line(`Added per agent request at the median: ${fmt(overhead[1]!.agentP50 - overhead[0]!.agentP50, 2)} ms.`);
  line();
  return true;
}

async function tracingSection(line: Line): Promise<boolean> {
  const rows = await measureTracing(50, 9);
  const [off, on] = rows as [typeof rows[0], typeof rows[0]];
  line('## Tracing: CPU per request with OpenTelemetry off and on');
  line();
  line('The same 50-request agent session through two proxies in one process, one with tracing off and one exporting every');
  line('request\'s 5 spans (sample ratio 1) as OTLP/HTTP JSON to a receiver in a child process; 9 rounds, alternating which goes');
  line('first. CPU is this process\'s (client, simulator and proxy) per request: the difference is what tracing adds. Off, the');
  line('pipeline calls one shared no-op object, so off costs what the proxy cost before tracing, within the spread shown.');
  line();
  line('| tracing | CPU per request, median (µs) | fastest round (µs) | slowest round (µs) | wall per request (ms) |');
  line('|---|---:|---:|---:|---:|');
  for (const r of rows) line(`| ${r.tracing} | ${fmt(r.cpuUs, 0)} | ${fmt(r.minUs, 0)} | ${fmt(r.maxUs, 0)} | ${fmt(r.wallMs, 2)} |`);
  line();
  line(`Tracing on adds ${fmt(on.cpuUs - off.cpuUs, 0)} µs of CPU per request at the median (${fmt(((on.cpuUs - off.cpuUs) / off.cpuUs) * 100, 1)}%).`);
  line();
  return true;
}

/** The peers report their targets met or not in their text; a target missed does not fail the run. */
/**
 * `--baseline CHECKOUT`: the peers' workloads with prefix-proxy from another built checkout beside
 * this one and the pipe, in the same rounds: what a change did, measured side by side. Run only
 * when a baseline is given.
 */
async function peersBaselineSection(line: Line): Promise<boolean> {
  if (flags.baseline === undefined) throw new Error('bench: the peers-baseline section needs --baseline CHECKOUT');
  const main = baselineMain(flags.baseline);
  const rev = gitRev(dirname(dirname(dirname(main))));
  const started = new Date();
  const report = await measurePeers({ targets: ['pipe', 'baseline', 'prefix-proxy'], baseline: main });
  const heading = [
    '## Peers: prefix-proxy against its baseline build, side by side',
    '',
    `"prefix-proxy, baseline build" is \`${rev}\`, built in another checkout and run as \`proxy serve\` the same way; the runs below`,
    'interleave it with this build and the bare pipe in every round. The Targets lines judge this build.',
  ];
  for (const l of renderPeers(report, started, heading)) line(l);
  return true;
}

/** The checkout's commit, for naming a baseline; its path when it is not a git checkout. */
function gitRev(root: string): string {
  try {
    return execFileSync('git', ['-C', root, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim().slice(0, 100);
  } catch {
    return root;
  }
}

/** Each inbound wire with an agent's head and a small one; with `--baseline`, that build in the same rounds. */
async function wiresSection(line: Line): Promise<boolean> {
  const started = new Date();
  const main = flags.baseline === undefined ? undefined : baselineMain(flags.baseline);
  const report = await measureWires(main === undefined ? {} : { baseline: main });
  for (const l of renderWires(report, started, main === undefined ? undefined : gitRev(dirname(dirname(dirname(main)))))) line(l);
  return true;
}

async function peersSection(line: Line): Promise<boolean> {
  const started = new Date();
  for (const l of renderPeers(await measurePeers(), started)) line(l);
  return true;
}

const open = (name: string) => `<!-- bench:${name} -->`;
const close = (name: string) => `<!-- /bench:${name} -->`;

/** Puts a section's new text in place of its old one (between its markers), or at the end when it has none yet. */
function mergeSection(doc: string, name: string, text: string): string {
  const block = `${open(name)}\n${text}${close(name)}\n`;
  const from = doc.indexOf(open(name));
  const to = doc.indexOf(close(name));
  if (from < 0 || to < from) return `${doc.trimEnd()}\n\n${block}`;
  return doc.slice(0, from) + block + doc.slice(to + close(name).length + 1);
}

async function main(): Promise<void> {
  const names = flags.only?.split(',').map((n) => n.trim()).filter((n) => n !== '') ?? Object.keys(SECTIONS).filter((n) => n !== 'peers-baseline' || flags.baseline !== undefined);
  for (const name of names) if (!Object.hasOwn(SECTIONS, name)) throw new Error(`bench: unknown section "${name}" (one of ${Object.keys(SECTIONS).join(', ')})`);
  const file = join(import.meta.dirname, '..', '..', 'bench', 'RESULTS.md');
  const started = new Date();
  let doc = flags.only === undefined
    ? `# Benchmark results\n\nWritten by \`npm run bench\` (bench/run.ts) on ${started.toISOString()}; Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}). Do not edit by hand.\n`
    : await readFile(file, 'utf8');
  let ok = true;
  for (const name of names) {
    const out: string[] = [];
    ok = (await SECTIONS[name]!((s = '') => out.push(s))) && ok;
    const text = out.join('\n') + '\n';
    process.stdout.write(text);
    doc = mergeSection(doc, name, text);
    // Written after each section: one that fails later keeps what was measured before it.
    await writeFile(file, doc);
  }
  if (!ok) process.exitCode = 1;
}

await main();
