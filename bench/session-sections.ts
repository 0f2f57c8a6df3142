/**
 * The results sections for the session room: the log's size against the conversation, startup
 * with many stored sessions, memory with many live ones. Each writes its table and a verdict
 * against its budget, and returns false when over it.
 */
import { measureLiveMemory } from './live-memory.js';
import { measureLogGrowth } from './log-growth.js';
import { measureStartup } from './startup.js';
import { fmt } from './stats.js';

export type Line = (s?: string) => void;

const KIB = 1024;
const MIB = 2 ** 20;

export async function logGrowthSection(line: Line): Promise<boolean> {
  const reps = 3;
  const rows = await measureLogGrowth([40, 120], 10, reps);
  line('## Log: bytes on disk against the conversation, credentials in the files read');
  line();
  line('An agent that keeps its history unredacted and resends all of it each request (bench/resending-agent.ts, official `openai`');
  line('client), re-serialising the tool-call arguments it holds (other key order, other spacing) every time. In the planted runs one');
  line('file read in 10 is an `.env` holding an OpenAI project key, an AWS secret, a GitHub token and a JWT, which the log redacts.');
  line('Conversation: each message once, as the client first sent it, plus each reply (JSON bytes); the log also holds each request\'s');
  line(`record (\`llm.req\`), the reply's metadata and the session start. Medians of ${reps} runs.`);
  line();
  line('| requests | .env files / tool results | log (KiB) | conversation (KiB) | log / conversation | client.msg | client.rewrite | sessions | credentials in the log |');
  line('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    line(`| ${r.requests} | ${r.planted} / ${r.toolResults} | ${fmt(r.logBytes / KIB)} | ${fmt(r.conversationBytes / KIB)} | ${fmt(r.logBytes / r.conversationBytes, 2)}x | ${r.clientMsgs} | ${r.rewrites} | ${r.sessions} | ${r.leaked} |`);
  }
  const planted = rows.filter((r) => r.plantEvery > 0);
  const ratio = Math.max(...planted.map((r) => r.logBytes / r.conversationBytes));
  const rewrites = planted.reduce((n, r) => n + r.rewrites, 0);
  const leaked = rows.reduce((n, r) => n + r.leaked, 0);
  const ok = ratio <= 1.2 && rewrites === 0 && leaked === 0 && planted.every((r) => r.sessions === 1);
  line();
  line(`With credentials planted: log at most ${fmt(ratio, 2)}x the conversation (budget: 1.2x), ${rewrites} rewrites (budget: 0), ${leaked} credentials in the log — ${ok ? 'within budget' : 'OVER BUDGET'}.`);
  line();
  return ok;
}

export async function startupSection(line: Line, opts: { dropCaches: boolean }): Promise<boolean> {
  const count = 10_000;
  const reps = 3;
  const rows = await measureStartup(count, reps, opts);
  const warm = rows.find((r) => r.mode === 'warm')!;
  line(`## Startup: ${count.toLocaleString('en-US')} stored sessions`);
  line();
  line(`\`SessionManager.init()\` over ${count.toLocaleString('en-US')} generated session logs (test/window/gen-session.ts, 3 to 10 requests each, in the log's`);
  line('line format), each start in a fresh process. Cold: no sidecars, every log read whole (and its sidecar written to the journal,');
  line(`\`sessions/sidecars.ndjson\`); warm: the sidecars the cold start wrote. Medians of ${reps} starts each; CPU of every thread of the process; RSS after a full GC. Page cache ${warm.dropped ? 'dropped before each start' : 'not dropped (the files are warm in memory)'}.`);
  line();
  line('| start | sessions | read whole | logs (MiB) | sidecars (MiB) | init (ms) | init CPU (ms) | RSS before (MiB) | RSS after (MiB) | heap after (MiB) |');
  line('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    line(`| ${r.mode} | ${r.sessions} | ${r.readWhole} | ${fmt(r.logBytes / MIB)} | ${fmt(r.sidecarBytes / MIB)} | ${fmt(r.initMs, 0)} | ${fmt(r.cpuMs, 0)} | ${fmt(r.rssBeforeMb)} | ${fmt(r.rssMb)} | ${fmt(r.heapMb)} |`);
  }
  const ok = warm.initMs < 1000 && warm.readWhole === 0 && warm.sessions === count;
  line();
  line(`Warm start: ${fmt(warm.initMs, 0)} ms (budget: under 1,000 ms) — ${ok ? 'within budget' : 'OVER BUDGET'}.`);
  line();
  return ok;
}

export async function liveMemorySection(line: Line): Promise<boolean> {
  const conversations = 1000;
  const rows = await measureLiveMemory(conversations, 100_000, [{ maxLive: 1024, maxLiveMb: 1024 }, { maxLive: 1024, maxLiveMb: 32 }]);
  line(`## Memory: ${conversations.toLocaleString('en-US')} live sessions of ~100 KB conversations`);
  line();
  line('The proxy alone in a process of its own; the simulator and the clients (undici, 4 at a time) in another. Each conversation is two');
  line('requests: a user message with ~45 KB of pasted output asking for two files, then the two files (~25 KB each). Measured after a');
  line('full GC once every conversation has ended; "before" is the same process after start, before any session. Conversation held:');
  line('each message of the sessions still live once, as sent, and each reply. One run each.');
  line();
  line('| [sessions] limits | live sessions | conversation held (MiB) | RSS before (MiB) | RSS (MiB) | added per live session (KiB) | heap used (MiB) | external (MiB) | time (s) |');
  line('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const added = r.live > 0 ? (r.after.rss - r.baseline.rss) / r.live / KIB : NaN;
    line(`| max_live = ${r.maxLive}, max_live_mb = ${r.maxLiveMb} | ${r.live} | ${fmt(r.heldBytes / MIB)} | ${fmt(r.baseline.rss / MIB)} | ${fmt(r.after.rss / MIB)} | ${fmt(added)} | ${fmt(r.after.heapUsed / MIB)} | ${fmt(r.after.external / MIB)} | ${fmt(r.seconds)} |`);
  }
  const all = rows[0]!;
  const low = rows[1]!;
  const budget = 300e6;
  const fits = all.live === conversations && all.after.rss < budget;
  const holds = low.heldBytes <= low.maxLiveMb * MIB;
  line();
  line(`${all.live} live sessions: RSS ${fmt(all.after.rss / MIB)} MiB (budget: under 300 MB, ${fmt(budget / MIB)} MiB) — ${fits ? 'within budget' : 'OVER BUDGET'}.`);
  line(`max_live_mb = ${low.maxLiveMb}: ${low.live} sessions live holding ${fmt(low.heldBytes / MIB)} MiB of conversation — ${holds ? 'the limit holds' : 'THE LIMIT DOES NOT HOLD'}.`);
  line();
  const ok = fits && holds;
  return ok;
}
