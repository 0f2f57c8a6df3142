/**
 * The soak: `proxy serve` (a child process, its built-in simulator) under agent load for a set time,
 * its RSS and open file descriptors read from /proc every 10 s; both must stay flat once warm. A
 * leak that a short benchmark hides (a file handle per session, a map that only grows) shows here.
 * Part of `npm run bench` (section `soak`, 10 minutes); `npm run bench -- --only soak --minutes 1`
 * measures it alone.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { mulberry32 } from '../src/core/prng.js';
import { createSim } from '../src/sim/server.js';
import { AgentClient, REAL_CLIENT } from '../test/e2e/agent-client.js';
import { chatWithRetries } from '../test/e2e/retrying-client.js';
import { PROXY_MAIN, childOptions, waitFor } from './peers/targets.js';
import { rssMb } from './peers/proc.js';
import { fmt, median } from './stats.js';

export interface SoakOptions {
  minutes: number;
  /** Conversations at once; each is replaced by a new one when it ends. */
  concurrency?: number;
  sampleSeconds?: number;
  log?: (line: string) => void;
}

export interface Sample {
  /** Seconds since the load began. */
  at: number;
  rssMb: number;
  /** V8 heap in use (the proxy's own `nodejs_heap_size_used_bytes`): RSS that grows while this does not is not live objects. */
  heapMb: number;
  fds: number;
  /** Requests answered so far. */
  requests: number;
}

export interface Soak {
  samples: Sample[];
  requests: number;
  conversations: number;
  streamed: number;
  /** Streams the client gave up on after a few chunks, then asked again. */
  aborted: number;
  /** Requests sent again after their answer, marked as retries (the SDK after a lost answer). */
  resent: number;
  /** Requests the proxy's own request lines say it answered from the log. */
  fromLog: number;
  /** Request lines with a status of 400 or more. */
  errors: number;
  maxLive: number;
}

/** Live sessions the proxy keeps: small, so sessions leave memory (and close their logs) all the time. */
const MAX_LIVE = 32;

export async function runSoak(opts: SoakOptions): Promise<Soak> {
  const concurrency = opts.concurrency ?? 8;
  const log = opts.log ?? ((line) => process.stderr.write(`soak: ${line}\n`));
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-soak-'));
  // The simulator runs here, so the proxy's figures are its own (`proxy serve` would start one inside itself).
  const sim = await createSim({ host: '127.0.0.1', port: 0 });
  const config = join(dir, 'config.toml');
  await writeFile(config, `[providers.sim]\npreset = "sim"\nbase_url = "${sim.url}"\n\n[sessions]\nmax_live = ${MAX_LIVE}\n`);
  const child = spawn(process.execPath, [PROXY_MAIN, 'serve', '--config', config, '--data-dir', join(dir, 'data'), '--port', '0'], childOptions());
  const counts = { fromLog: 0, errors: 0 };
  let pending = '';
  try {
    const origin = (await waitFor(child, /listening on (http:\/\/127\.0\.0\.1:\d+)\/v1/, 'prefix-proxy'))[1]!;
    child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop()!;
      for (const l of lines) {
        if (l.includes('"from_log":true')) counts.fromLog++;
        if (/"status":[45]\d\d/.test(l)) counts.errors++;
      }
    });
    const pid = child.pid!;
    const soak: Soak = { samples: [], requests: 0, conversations: 0, streamed: 0, aborted: 0, resent: 0, fromLog: 0, errors: 0, maxLive: MAX_LIVE };
    const started = performance.now();
    const deadline = started + opts.minutes * 60_000;
    const sample = async () => {
      // /proc first, at one instant; the heap figure comes over HTTP a moment later.
      const at = Math.round((performance.now() - started) / 1000);
      const proc = { rssMb: rssMb(pid), fds: openFds(pid), requests: soak.requests };
      const s = { at, ...proc, heapMb: await heapUsedMb(origin) };
      soak.samples.push(s);
      log(`${s.at} s: ${s.requests} requests, RSS ${fmt(s.rssMb)} MiB, heap ${fmt(s.heapMb)} MiB, ${s.fds} fds`);
    };
    await sample();
    const sampler = setInterval(() => void sample(), (opts.sampleSeconds ?? 10) * 1000);
    try {
      await Promise.all(Array.from({ length: concurrency }, (_, slot) => slotLoop(slot, origin, deadline, soak)));
    } finally {
      clearInterval(sampler);
    }
    if (performance.now() - started - soak.samples.at(-1)!.at * 1000 > 2000) await sample();
    soak.fromLog = counts.fromLog;
    soak.errors = counts.errors;
    return soak;
  } finally {
    await stopChild(child);
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** One slot: conversation after conversation until the deadline, each of 6 to 40 requests. */
async function slotLoop(slot: number, origin: string, deadline: number, soak: Soak): Promise<void> {
  const rng = mulberry32(1000 + slot);
  for (let n = 0; performance.now() < deadline; n++) {
    const tag = `soak-${slot}-${n}`;
    const agent = new AgentClient(slot * 100_000 + n, tag, { ...REAL_CLIENT, slowMs: 1 });
    const headers: Record<string, string> = rng() < 0.5 ? { 'x-session-id': tag } : {};
    const length = 6 + Math.floor(rng() * 35);
    soak.conversations++;
    for (let i = 0; i < length && performance.now() < deadline; i++) {
      const stream = rng() < 0.6;
      const { messages, tools } = agent.request();
      const body = JSON.stringify({ model: 'sim/soak', stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages, tools });
      const abort = stream && rng() < 0.03;
      const got = await chatWithRetries(body, { origin: () => origin, stream, headers, attempts: 3, ...(abort ? { abortFirstAfter: 2 } : {}) });
      if (rng() < 0.03) {
        // The answer was lost on the way: the same request again, marked as the SDK marks a retry.
        await chatWithRetries(body, { origin: () => origin, stream, headers, attempts: 3, startAt: 1 });
        soak.resent++;
      }
      agent.receive(got.answer);
      soak.requests++;
      if (stream) soak.streamed++;
      if (abort) soak.aborted++;
      // An agent runs its tools and thinks between requests.
      await sleep(20 + Math.floor(rng() * 80));
    }
  }
}

async function heapUsedMb(origin: string): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('nodejs_heap_size_used_bytes '));
  return line === undefined ? NaN : Number(line.split(' ').at(-1)) / 2 ** 20;
}

/** Open file descriptors of a process: the entries of /proc/<pid>/fd, read at one instant. */
function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

async function stopChild(child: ReturnType<typeof spawn>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The lowest heap-in-use sample: what survived the last collection before it, near enough. */
function heapFloor(samples: readonly Sample[]): number {
  return Math.min(...samples.map((s) => s.heapMb));
}

/** RSS may grow this much from the middle third to the last (medians) and still be flat. */
const RSS_GROWTH = 0.1;
/** Open descriptors may vary this much once warm: sockets and the live sessions' logs come and go. */
const FD_SPREAD = 24;

export async function soakSection(line: (s?: string) => void, minutes: number): Promise<boolean> {
  const started = new Date();
  const soak = await runSoak({ minutes });
  const total = soak.samples.at(-1)!.at;
  const warm = soak.samples.filter((s) => s.at >= total / 3);
  const middle = warm.filter((s) => s.at < (2 * total) / 3);
  const last = warm.filter((s) => s.at >= (2 * total) / 3);
  const growth = median(last.map((s) => s.rssMb)) / median(middle.map((s) => s.rssMb)) - 1;
  const fds = warm.map((s) => s.fds);
  const spread = Math.max(...fds) - Math.min(...fds);
  const rssFlat = growth <= RSS_GROWTH;
  const fdsFlat = spread <= FD_SPREAD;
  line(`## Soak: ${minutes} minute${minutes === 1 ? '' : 's'} of agent load`);
  line();
  line(`\`proxy serve\` in a child process, \`[sessions] max_live = ${soak.maxLive}\` (so sessions leave memory and close their logs all the`);
  line('time), the simulator in the bench process (so the figures are the proxy\'s own). Eight conversations at once');
  line('(test/e2e/agent-client.ts: tool rounds, credentials, images, reserialised history), each of 6 to 40 requests and replaced');
  line('by a new one when it ends; 60% streamed; 3% of streams abandoned after two chunks and asked again; 3% of answers asked');
  line('again marked as a retry (`x-stainless-retry-count: 1`); 20-100 ms between requests. VmRSS and the entries of');
  line('/proc/<pid>/fd of the proxy process every 10 s, and its V8 heap in use (its own `/metrics`); per minute, min / median /');
  line('max of the samples in it. The machine is shared: other work moves the figures.');
  line(`Measured ${started.toISOString()} (\`npm run bench -- --only soak\` measures this section again and keeps the others).`);
  line();
  line(`${soak.requests} requests (${soak.streamed} streamed, ${soak.aborted} abandoned and asked again, ${soak.resent} resent as retries, ${soak.fromLog} answered`);
  line(`from the log), ${soak.conversations} conversations, ${soak.errors} answers with a status of 400 or more.`);
  line();
  line('| minute | requests | RSS min (MiB) | RSS median | RSS max | heap used min (MiB) | heap used median | fds min | fds median | fds max |');
  line('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  let before = 0;
  // A sample at 60 s closes the first minute.
  const minuteOf = (s: Sample) => Math.max(0, Math.ceil(s.at / 60) - 1);
  for (let m = 0; m <= minuteOf(soak.samples.at(-1)!); m++) {
    const inMinute = soak.samples.filter((s) => minuteOf(s) === m);
    if (inMinute.length === 0) continue;
    const rss = inMinute.map((s) => s.rssMb);
    const fd = inMinute.map((s) => s.fds);
    const done = inMinute.at(-1)!.requests;
    const heap = inMinute.map((s) => s.heapMb);
    line(`| ${m + 1} | ${done - before} | ${fmt(Math.min(...rss))} | ${fmt(median(rss))} | ${fmt(Math.max(...rss))} | ${fmt(Math.min(...heap))} | ${fmt(median(heap))} | ${Math.min(...fd)} | ${median(fd)} | ${Math.max(...fd)} |`);
    before = done;
  }
  line();
  line(`After the first third (warm-up): RSS median of the last third ${fmt(median(last.map((s) => s.rssMb)))} MiB against ${fmt(median(middle.map((s) => s.rssMb)))} MiB in the middle third`);
  line(`(${growth >= 0 ? '+' : ''}${fmt(growth * 100)}%; flat: at most +${RSS_GROWTH * 100}%) — ${rssFlat ? 'flat' : 'GROWING'}; open descriptors ${Math.min(...fds)} to ${Math.max(...fds)}`);
  line(`(spread ${spread}; flat: at most ${FD_SPREAD}) — ${fdsFlat ? 'flat' : 'GROWING'}; ${soak.errors === 0 ? 'no errors' : `${soak.errors} ERRORS`}.`);
  line(`The heap's floor (its lowest sample, the nearest the samples come to what a collection left) in the last third ${fmt(heapFloor(last))} MiB against ${fmt(heapFloor(middle))} MiB in the middle third:`);
  line('live objects that pile up raise the floor; RSS that grows while the floor does not is V8 letting its heap grow between');
  line('collections (it sizes the next limit from the live size and how fast the process allocates) and keeping the pages after.');
  line();
  return rssFlat && fdsFlat && soak.errors === 0;
}
