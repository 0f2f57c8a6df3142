/**
 * The functions V8 CPU profiles spent most of their own time in (self time, not counting callees),
 * with file:line (mapped back to the TypeScript source where a .js.map sits beside the built file).
 * Usage: node dist-bench/bench/profile-top.js FILE.cpuprofile|DIR [--top N=25] [--skip-ms MS]
 * A directory: every .cpuprofile in it, added up (e.g. what `peers.js --cpu-prof DIR` left there,
 * one per round). --skip-ms leaves out the first MS ms of each profile: the process's start-up.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { originalPosition } from './source-map.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface SelfTime {
  name: string;
  where: string;
  ms: number;
}

/**
 * Adds each sample's time (until the next sample) to its function, by name and place; `(idle)` is
 * left out, so what is counted is the time the process was busy.
 */
export function addSelfTimes(profile: CpuProfile, into: Map<string, SelfTime>, skipMs = 0): void {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const frame = byNode.get(profile.samples[i]!)!;
    if (at - profile.startTime < skipMs * 1000 || frame.functionName === '(idle)') continue;
    const where = place(frame);
    const key = `${frame.functionName}@${where}`;
    const entry = into.get(key) ?? { name: frame.functionName === '' ? '(anonymous)' : frame.functionName, where, ms: 0 };
    entry.ms += (profile.timeDeltas[i + 1] ?? 0) / 1000;
    into.set(key, entry);
  }
}

function place(frame: CallFrame): string {
  if (frame.url === '') return '';
  if (!frame.url.startsWith('file://')) return `${frame.url}:${frame.lineNumber + 1}`;
  const file = fileURLToPath(frame.url);
  const original = originalPosition(file, frame.lineNumber, frame.columnNumber);
  return original === undefined ? `${relative(process.cwd(), file)}:${frame.lineNumber + 1}` : `${relative(process.cwd(), original.file)}:${original.line}`;
}

function main(): void {
  const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' }, 'skip-ms': { type: 'string', default: '0' } }, allowPositionals: true });
  const arg = positionals[0];
  if (arg === undefined) {
    process.stderr.write('usage: node dist-bench/bench/profile-top.js FILE.cpuprofile|DIR [--top N=25] [--skip-ms MS]\n');
    process.exitCode = 2;
    return;
  }
  const files = statSync(arg).isDirectory() ? readdirSync(arg).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(arg, f)) : [arg];
  if (files.length === 0) throw new Error(`profile-top: no .cpuprofile in ${arg}`);
  const skipMs = Number(values['skip-ms']);
  const totals = new Map<string, SelfTime>();
  let profiled = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    profiled += (profile.endTime - profile.startTime) / 1000;
    addSelfTimes(profile, totals, skipMs);
  }
  const all = [...totals.values()].sort((a, b) => b.ms - a.ms);
  const busy = all.reduce((t, s) => t + s.ms, 0);
  const skipped = skipMs > 0 ? `, the first ${skipMs} ms of each left out` : '';
  process.stdout.write(`${files.length} profile(s), ${(profiled / 1000).toFixed(1)} s${skipped}; ${(busy / 1000).toFixed(1)} s busy in what is counted (shares are of that)\n\n`);
  process.stdout.write('| # | self (ms) | share | function | file:line |\n|---:|---:|---:|---|---|\n');
  all.slice(0, Number(values.top)).forEach((t, i) => {
    process.stdout.write(`| ${i + 1} | ${t.ms.toFixed(1)} | ${((100 * t.ms) / busy).toFixed(1)}% | ${t.name} | ${t.where} |\n`);
  });
}

main();
