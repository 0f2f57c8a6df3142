/**
 * The peers side by side: the fake upstream alone, the bare pipe, the durable floor, Portkey's gateway and prefix-proxy,
 * each its own process, under the same workloads, in rounds whose target order rotates.
 * Part of `npm run bench`; alone, printing its tables without writing RESULTS.md:
 *   node dist-bench/bench/peers.js [--workload agent,deep-1m] [--targets pipe,prefix-proxy] [--rounds N] [--cpu-prof DIR] [--quick]
 *     [--baseline CHECKOUT] (prefix-proxy from another built checkout as the `baseline` target: a before and after in one run)
 */
import { existsSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CPU_JUDGED, renderWorkload, type Runs, type WorkloadReport } from './peers/report.js';
import { PORTKEY_VERSION } from './peers/portkey.js';
import { createCost, dataParent, removeDataDirs } from './data-dirs.js';
import { freshMemoryCost, type FreshMemoryCost } from './peers/fresh-memory.js';
import { fileSystemOf, PROXY_MAIN, startTarget, startUpstream, TARGET_NAMES, type Target, type TargetName } from './peers/targets.js';
import { agentLoad, deepLoad, liveSessionsLoad, newConversationLoad, quickSizes, SIZES, WORKLOAD_KEYS, type RunResult, type WorkloadKey } from './peers/workloads.js';

interface WorkloadSpec {
  title: string;
  /** Read when the report is written, so it describes the sizes the run used. */
  about: () => string[];
  rounds: number;
  run: (target: Target, tag: string) => Promise<RunResult>;
}

const { agent, newConversation, deep, live } = SIZES;

const WORKLOADS: Record<WorkloadKey, WorkloadSpec> = {
  agent: {
    title: '(a) Agent load, not streamed',
    about: () => [`${agent.concurrency} conversations at once on an undici Pool, each request the whole history plus a ~${agent.turnBytes / 1024} KB user turn,`,
      `the reply appended as the target gave it; ${agent.turns} turns each (~${Math.round((agent.turns * (agent.turnBytes + 100)) / 1024)} KB bodies at the end), then a new conversation:`,
      `${agent.conversations} conversations, ${agent.conversations * agent.turns} measured requests per run.`],
    rounds: 5,
    run: (t, tag) => agentLoad(t, tag, false),
  },
  'agent-stream': {
    title: '(a) Agent load, streamed',
    about: () => ['The same load with `"stream": true` (SSE: a role chunk, three content chunks, a finish chunk, a usage chunk, `[DONE]`);',
      'latency is to the last byte.'],
    rounds: 5,
    run: (t, tag) => agentLoad(t, tag, true),
  },
  'agent-head': {
    title: '(a) Agent load with a coding agent\'s head, not streamed',
    about: () => ['The (a) load with the head a coding agent repeats on every request: a ~16 KB system prompt, 30 tools (~30 KB)',
      'and a ~13 KB first user message of context files, ~60 KB in all before the conversation\'s own turns.'],
    rounds: 5,
    run: (t, tag) => agentLoad(t, tag, false, 'agent'),
  },
  'new-conversation': {
    title: '(b) A new conversation on every request',
    about: () => [`autocannon, ${newConversation.connections} connections, ${newConversation.seconds} s per run, each request a one-message conversation of ~1.6 KB with a unique`,
      'user message (through prefix-proxy: a new session and log file per request). Latency percentiles are autocannon\'s (whole ms).'],
    rounds: 5,
    run: newConversationLoad,
  },
  'deep-256k': {
    title: '(c) 256 KB requests deep in a session',
    about: () => [`One conversation already grown to 256 KB (a resumed transcript of ${deep.results} tool results of 64 KB), then requests one at a time,`,
      `each adding one ~2 KB turn: ${deep.requests} measured after 3 unmeasured. "Added" is the median over rounds of the target's p50 less the`,
      'upstream\'s (or the pipe\'s) p50 in the same round.'],
    rounds: 3,
    run: (t, tag) => deepLoad(t, tag, 256 * 1024),
  },
  'deep-1m': {
    title: '(c) 1 MB requests deep in a session',
    about: () => [`As above, grown to 1 MB (${deep.results} tool results of 256 KB).`],
    rounds: 3,
    run: (t, tag) => deepLoad(t, tag, 1024 * 1024),
  },
  'live-sessions': {
    title: '(d) 1,000 live sessions',
    about: () => [`${live.conversations.toLocaleString('en')} conversations of ~${Math.round((live.turns * live.turnBytes) / 1000)} KB (${live.turns} requests each adding a ~${live.turnBytes / 1000} KB turn), 8 at once, driven to completion;`,
      'prefix-proxy runs with `[sessions] max_live = 2000`, so all of them stay live. The first columns and RSS are for that load.',
      'Then one session of 1,005 small requests (~200 bytes added each; the body grows to ~200 KB), one at a time. Its requests',
      '996-1,005 ("request 1000") go in alternation with requests 6-15 of a new session ("request 10"), so both are measured under',
      'the same machine load; "own request 10" is the long session\'s own requests 6-15, sent ~1,000 requests earlier. Medians,',
      'end-to-end latency. One round: the memory figure needs the whole load in one process.'],
    rounds: 1,
    run: liveSessionsLoad,
  },
};

export interface PeersOptions {
  workloads?: WorkloadKey[];
  targets?: TargetName[];
  /** Overrides every workload's round count. */
  rounds?: number;
  cpuProfDir?: string;
  /** Another build's `dist/cli/main.js`, run as the `baseline` target. */
  baseline?: string;
  log?: (line: string) => void;
}

/** The workloads measured, and what creating a file cost when they began (µs of CPU, bench/data-dirs.ts). */
export interface PeersReport {
  workloads: WorkloadReport[];
  createCostUs: number;
  /** What a fresh MiB of memory cost when they began (bench/peers/fresh-memory.ts). */
  freshMemory: FreshMemoryCost;
  /** Whether the data directories' parent took the top-directory flag. */
  topDir: boolean;
}

export async function measurePeers(opts: PeersOptions = {}): Promise<PeersReport> {
  if (!existsSync(PROXY_MAIN)) throw new Error(`peers: ${PROXY_MAIN} is missing; run \`npm run build\` first`);
  const log = opts.log ?? ((line) => process.stderr.write(`peers: ${line}\n`));
  const targets = opts.targets ?? TARGET_NAMES.filter((t) => t !== 'baseline' || opts.baseline !== undefined);
  if (targets.includes('baseline') && opts.baseline === undefined) throw new Error('peers: the baseline target needs --baseline PATH');
  const createCostUs = createCost();
  log(`a file create in ${dataParent().dir}${dataParent().topDir ? ' (a top directory)' : ''} costs ${createCostUs.toFixed(0)} µs of CPU`);
  const freshMemory = freshMemoryCost();
  log(`a fresh MiB written costs ${freshMemory.usPerMib.toFixed(0)} µs of CPU and ${freshMemory.faultsPerMib.toFixed(0)} page faults`);
  try {
    return { workloads: await measureWorkloads(opts, targets, log), createCostUs, freshMemory, topDir: dataParent().topDir };
  } finally {
    await removeDataDirs();
  }
}

async function measureWorkloads(opts: PeersOptions, targets: TargetName[], log: (line: string) => void): Promise<WorkloadReport[]> {
  const reports: WorkloadReport[] = [];
  for (const key of opts.workloads ?? WORKLOAD_KEYS) {
    const spec = WORKLOADS[key];
    // The floor on the proxy's stack is read only where CPU is judged (report.ts, aboveFloor).
    const here = targets.filter((t) => t !== 'stack-floor' || CPU_JUDGED.includes(key));
    const runs: Runs = Object.fromEntries(here.map((t) => [t, []]));
    const rounds = opts.rounds ?? spec.rounds;
    for (let round = 0; round < rounds; round++) {
      const upstream = await startUpstream();
      try {
        for (const name of rotate(here, round)) {
          const tag = `${key}-${round}-${name}`;
          let target: Target | undefined;
          try {
            target = name === 'upstream' ? upstream : await startTarget(name, upstream, { ...(opts.cpuProfDir === undefined ? {} : { cpuProfDir: opts.cpuProfDir }), ...(opts.baseline === undefined ? {} : { baselineMain: opts.baseline }) });
            const result = await spec.run(target, tag);
            runs[name]!.push(result);
            log(`${key} round ${round + 1}/${rounds} ${name}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, CPU ${result.cpuPerRequest.toFixed(3)} ms/req, RSS ${result.rssMb.toFixed(0)} MiB${Object.entries(result.extra).map(([k, v]) => `, ${k} ${v.toFixed(2)}`).join('')}`);
          } catch (err) {
            const said = target?.errors().slice(0, 2) ?? [];
            const message = (err instanceof Error ? err.message : String(err)) + (said.length === 0 ? '' : ` — its log: ${said.join(' / ')}`);
            runs[name]!.push(message);
            log(`${key} round ${round + 1}/${rounds} ${name}: FAILED: ${message.slice(0, 300)}`);
          } finally {
            if (target !== undefined && target !== upstream) await target.stop();
          }
        }
      } finally {
        await upstream.stop();
      }
    }
    reports.push({ key, title: spec.title, about: spec.about(), runs });
  }
  return reports;
}

function rotate<T>(xs: readonly T[], by: number): T[] {
  const k = by % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

export function renderPeers(report: PeersReport, started: Date, heading: string[] = ['## Peers: the upstream alone, a bare pipe, the durable floor, Portkey and prefix-proxy under the same load']): string[] {
  return [
    ...heading,
    '',
    `Measured ${started.toISOString()} by bench/peers.ts; Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}).`,
    'Every target is its own process; CPU is that process\'s user + system time from /proc (with any child it waited for: prefix-proxy\'s checkpoint runs `sync -f`) over the measured requests only',
    '(10 ms ticks), divided by the requests; RSS is its VmRSS at the end of the run. The targets forward to one fake',
    'OpenAI-compatible upstream process (node:http, answers at once with a fixed 12-token reply and usage, parses nothing),',
    'measured alone as the first row. The bare pipe is node:http in, an undici Pool out, bodies streamed, nothing parsed.',
    'The durable floor (bench/peers/floor.ts) is the pipe plus what the log\'s durability policy asks of any gateway and nothing',
    'else: it parses the body, appends the last message to the conversation\'s own file, sends the body serialised again, parses',
    'the reply (streamed: passes it on and keeps its text), appends it and waits for an fdatasync before the answer\'s last byte.',
    '"Durable floor, prefix-proxy\'s stack" (bench/peers/stack-floor.ts; in (a) and (b) only) does the same work on prefix-proxy\'s own stack:',
    'fastify in, undici out, the upstream always asked to stream as prefix-proxy asks it, the events read into one JSON body for a client that did not stream.',
    `Portkey is \`@portkey-ai/gateway\` ${PORTKEY_VERSION} (\`build/start-server.js --headless\`, provider openai, custom host the upstream);`,
    'prefix-proxy is `dist/cli/main.js serve` with a generic-preset route to the upstream (no cache hints, a window large enough',
    `that nothing is trimmed or elided), its data directory in the system temp directory (${fileSystemOf(tmpdir())}; its log is synced before each answer);`,
    '"prefix-proxy, data on tmpfs" is the same build with its data directory on /dev/shm: the same file calls, none of them',
    'costing the disk anything (a new file allocates no blocks, fdatasync returns at once), so its gap to prefix-proxy is what the disk costs.',
    'A workload runs in rounds, each with a fresh upstream and running every target once in a rotating order; each run starts',
    `a fresh target process and warms it with ${SIZES.warmUpMs / 1000} s of agent requests, 4 conversations at once (under autocannon, 500 requests more),`,
    `then runs the measured workload itself ${SIZES.settleRuns} times unmeasured (other conversations) before the run it measures (but (d)):`,
    'a fresh process compiles its hot path for seconds, and the short conversations of the warm-up leave a target\'s first run of',
    '(a) at ~1.4x the CPU per request of its third, the pipe\'s too (docs/decisions.md, Peers measured warm). Figures are medians over rounds.',
    'The clients (the agent driver, autocannon) run in the bench process on the same cores, so the machine\'s 2 cores are shared',
    'by client, target and upstream, and by whatever else runs there: compare ratios, not absolute figures.',
    `The floor and prefix-proxy create a file for each conversation, in directories under one parent ${report.topDir ? 'marked' : 'that could not be marked'} a top directory`,
    '(`chattr +T`; marked, ext4 spreads them over its block groups, away from the files earlier runs removed, which on ext4 without a',
    'journal made each create in the same group cost up to ~900 µs for minutes after: bench/data-dirs.ts); all are removed at the end.',
    `A create there cost ${report.createCostUs.toFixed(0)} µs of CPU when this run began (300 made one after another).`,
    `A MiB of memory the process had not touched, allocated and written once, cost ${report.freshMemory.usPerMib.toFixed(0)} µs of CPU and ${report.freshMemory.faultsPerMib.toFixed(0)} page faults`,
    '(64 in a row, each collected before the next: bench/peers/fresh-memory.ts): the floor and prefix-proxy write such buffers for every',
    'large body (the pipe streams), so (c) moves with this figure from one machine to another.',
    '',
    ...report.workloads.flatMap(renderWorkload),
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      workload: { type: 'string' },
      targets: { type: 'string' },
      rounds: { type: 'string' },
      'cpu-prof': { type: 'string' },
      baseline: { type: 'string' },
      quick: { type: 'boolean' },
    },
  });
  if (values.quick === true) quickSizes();
  const list = <T extends string>(value: string | undefined, allowed: readonly T[], what: string): T[] | undefined => {
    if (value === undefined) return undefined;
    const names = value.split(',');
    for (const n of names) if (!allowed.includes(n as T)) throw new Error(`peers: unknown ${what} "${n}" (one of ${allowed.join(', ')})`);
    return names as T[];
  };
  const started = new Date();
  const report = await measurePeers({
    workloads: list(values.workload, WORKLOAD_KEYS, 'workload'),
    targets: list(values.targets, TARGET_NAMES, 'target'),
    ...(values.rounds === undefined ? {} : { rounds: Number(values.rounds) }),
    ...(values['cpu-prof'] === undefined ? {} : { cpuProfDir: resolve(values['cpu-prof']) }),
    ...(values.baseline === undefined ? {} : { baseline: baselineMain(values.baseline) }),
  });
  process.stdout.write(renderPeers(report, started).join('\n') + '\n');
}

/** `--baseline` names a checkout (built) or its `dist/cli/main.js`. */
export function baselineMain(path: string): string {
  const main = path.endsWith('.js') ? resolve(path) : resolve(path, 'dist', 'cli', 'main.js');
  if (!existsSync(main)) throw new Error(`peers: ${main} is missing; build that checkout first (npm run build)`);
  return main;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
