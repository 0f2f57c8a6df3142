/**
 * What the log's redaction (src/log/redact.ts) costs on the texts an agent's events hold: a user
 * turn, a file it read, prose, a tool result as JSON text, a `.env` with credentials in it, a
 * reasoning blob, a digest. Beside it, the one pass over the text that finds the rules' literals
 * (src/log/needles.ts), which any text pays: what is above it is the rules' own pre-checks and
 * regexes. With `--baseline CHECKOUT`, that build's redaction on the same texts in the same rounds.
 * In one process, interleaved rounds, medians: µs per text.
 * docs/decisions/0022-caseless-literals-in-the-one-pass.md.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NeedleScan } from '../src/log/needles.js';
import { redactText } from '../src/log/redact.js';
import { RULES } from '../src/log/redact-rules.js';
import { fileContent } from './agent.js';
import { envFile } from './planted-credentials.js';
import type { Line } from './session-sections.js';
import { median } from './stats.js';

const ROUNDS = 9;
/** Bytes of text redacted per kind and round, so a round is long enough to time. */
const BYTES_PER_ROUND = 2 ** 20;

interface Kind {
  name: string;
  /** Distinct texts (strings over 32 characters are not memoised, so repeating one costs as a new one). */
  texts: string[];
}

/** A flat string, as JSON.parse gives the proxy its texts (a concatenation would be flattened on first read). */
const flat = (s: string): string => JSON.parse(JSON.stringify(s)) as string;

function kinds(): Kind[] {
  const many = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => flat(make(i)));
  return [
    { name: "a user turn pasting code, 2 KB (the peers bench's (a))", texts: many(64, (i) => `Conversation b-${i}, turn 3: review this and apply the fix.\n${fileContent(i + 1, 3, 0, 2000)}`) },
    { name: 'a file read, 20 KB of code', texts: many(16, (i) => fileContent(i + 7, 1, 1, 20_000)) },
    { name: "the peers bench's (b) message, 1.6 KB", texts: many(64, (i) => `question b-${i}: ${'context '.repeat(200)}`) },
    { name: 'prose, 2 KB', texts: many(64, (i) => `Turn ${i}: ${'The change reads the file, then writes the config and runs the tests again. '.repeat(27)}`) },
    { name: 'a tool result as JSON text, 8 KB', texts: many(16, (i) => JSON.stringify({ path: `src/part${i}.ts`, lines: 120, content: fileContent(i + 3, 2, 0, 8000) })) },
    { name: 'a .env with four credentials', texts: many(64, (i) => envFile(i + 1).text) },
    { name: 'a reasoning blob, 16 KB of base64', texts: many(8, (i) => Buffer.alloc(12_000, `signature-${i}`).toString('base64')) },
    { name: 'a SHA-256 digest', texts: many(512, (i) => createHash('sha256').update(String(i)).digest('hex')) },
  ];
}

/** CPU µs per text for one pass over about BYTES_PER_ROUND of the kind. */
function timePass(texts: readonly string[], run: (t: string) => unknown): number {
  const bytes = texts.reduce((n, t) => n + t.length, 0);
  const repeats = Math.max(1, Math.round(BYTES_PER_ROUND / bytes));
  const start = process.cpuUsage();
  for (let r = 0; r < repeats; r++) for (const t of texts) run(t);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (texts.length * repeats);
}

/** The baseline checkout's redactText (its built dist/), or undefined without one. */
async function baselineRedact(checkout: string | undefined): Promise<((text: string) => unknown) | undefined> {
  if (checkout === undefined) return undefined;
  const mod = (await import(pathToFileURL(resolve(checkout, 'dist', 'log', 'redact.js')).href)) as { redactText: (text: string) => unknown };
  return mod.redactText;
}

export async function redactionSection(line: Line, opts: { baseline?: string; baselineName?: string } = {}): Promise<boolean> {
  const scan = new NeedleScan([...new Set(RULES.flatMap((r) => r.needles ?? []))], [...new Set(RULES.flatMap((r) => r.caseless ?? []))]);
  const baseline = await baselineRedact(opts.baseline);
  line('## Redaction: what the log\'s credential rules cost per text');
  line('');
  line('Texts an agent\'s events hold, each kind redacted by src/log/redact.ts (`redactText`), beside the one pass that finds every rule\'s');
  line('literals (src/log/needles.ts) and which every text pays: the rest is the rules\' own pre-checks and regexes, which should run only');
  line(`where a rule's literal is. ${ROUNDS} interleaved rounds in one process, each ~1 MB of the kind, medians of CPU per text.`);
  if (baseline !== undefined) line(`"Baseline" is \`${opts.baselineName ?? opts.baseline}\`'s redaction on the same texts in the same rounds.`);
  line('');
  line(`| text | mean (KB) | one pass (µs) | redaction (µs) | redaction / one pass |${baseline === undefined ? '' : ' baseline (µs) | redaction / baseline |'}`);
  line(`|---|---:|---:|---:|---:|${baseline === undefined ? '' : '---:|---:|'}`);
  for (const kind of kinds()) {
    const ways: [number[], (t: string) => unknown][] = [[[], (t) => scan.scan(t)], [[], redactText]];
    if (baseline !== undefined) ways.push([[], baseline]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [into, run] of round % 2 === 0 ? ways : [...ways].reverse()) into.push(timePass(kind.texts, run));
      await new Promise((r) => setImmediate(r));
    }
    const [pass, own, base] = ways.map(([times]) => median(times));
    const kb = kind.texts.reduce((n, t) => n + t.length, 0) / kind.texts.length / 1024;
    const cells = [kind.name, kb.toFixed(kb < 1 ? 2 : 1), pass!.toFixed(2), own!.toFixed(2), `${(own! / pass!).toFixed(2)}x`];
    if (base !== undefined) cells.push(base.toFixed(2), `${(own! / base).toFixed(2)}x`);
    line(`| ${cells.join(' | ')} |`);
  }
  line('');
  return true;
}
