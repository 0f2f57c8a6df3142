/**
 * What a generated coding session's messages hold, deterministic for a seeded rng: file reads and
 * command output (some with a credential in them, as real tool results have: an .env file, a token
 * in a log line, a key block in a JSON config), user requests in several scripts with pasted
 * tokens and images, and the tool-call arguments a model writes. Used by agent-client.ts.
 */
import { fakeCredentials, type FakeCredential } from '../log/fake-credentials.js';

export type Rng = () => number;

/** The credential shapes real tool results and user messages carry most (see src/log/redact-rules.ts). */
const SHAPES = new Set([
  'openai', 'anthropic', 'aws_access_key_id', 'aws_secret_access_key', 'github', 'jwt', 'private_key', 'url_password', 'bearer',
  'openrouter', 'google_api_key', 'slack',
]);

export function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[Math.floor(rng() * xs.length)]!;
}

export function int(rng: Rng, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

/** Fresh credentials of every shape for one session (its own seed), and the text around them. */
export class Credentials {
  readonly #all: FakeCredential[];
  /** Every credential planted so far (their `core` must never reach the log). */
  readonly planted: FakeCredential[] = [];

  constructor(seed: number) {
    this.#all = fakeCredentials(seed).filter((c) => SHAPES.has(c.kind));
  }

  /** One credential in one of the places tool output holds them. */
  inToolOutput(rng: Rng): string {
    const c = this.#take(rng);
    const bare = c.kind !== 'aws_secret_access_key' && c.kind !== 'bearer' && c.kind !== 'private_key' && c.kind !== 'url_password';
    const forms = bare
      ? [
          `# .env\nNODE_ENV=production\n${c.kind.toUpperCase()}_TOKEN=${c.text}\nLOG_LEVEL=debug\n`,
          `2026-11-30T12:00:01.123Z INFO  client.ts:88 using key ${c.text} for api.example.com\n`,
          `{\n  "name": "deploy",\n  "token": ${JSON.stringify(c.text)},\n  "retries": 3\n}\n`,
          `$ export API_TOKEN=${c.text}\n$ ./deploy.sh --region eu-west-1\n`,
        ]
      : [
          `# config dump\n${c.text}\n# end\n`,
          `{"service":"db","secret":${JSON.stringify(c.text)}}\n`,
          `2026-11-30T12:00:02.001Z DEBUG request headers: ${c.text.replace(/\n/g, ' ')}\n`,
        ];
    return pick(rng, forms);
  }

  /** A credential the user pastes into a message. */
  inUserText(rng: Rng): string {
    const c = this.#take(rng);
    return pick(rng, [
      `my token is ${c.text} — can you check why it fails?`,
      `here is the failing config:\n${c.text}\n`,
      `(the key ${c.text} was rotated yesterday)`,
    ]);
  }

  /** A credential in a project's instructions, as agents put them into the system prompt. */
  inSystemText(rng: Rng): string {
    return `Staging credentials for the integration tests (do not print them): ${this.#take(rng).text}`;
  }

  #take(rng: Rng): FakeCredential {
    const c = pick(rng, this.#all);
    this.planted.push(c);
    return c;
  }
}

/** Text in several scripts: accents, CJK, RTL, combining marks, emoji with joiners, astral symbols. */
const UNICODE = [
  'größe', 'naïve café', '日本語のテスト', 'пример', 'שלום עולם', 'e\u0301te\u0301', '👩‍💻 🚀', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', 'ﬁle', '\u200bzero-width', 'tab\there',
];
const WORDS = ['parse', 'config', 'loader', 'cache', 'window', 'retry', 'token', 'stream', 'error', 'module', 'build', 'test'];

export function phrase(rng: Rng, words: number, unicode: boolean): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(unicode && rng() < 0.15 ? pick(rng, UNICODE) : pick(rng, WORDS));
  return out.join(' ');
}

/** About `bytes` bytes of a file read: numbered lines of code, comments in other scripts. */
export function fileRead(rng: Rng, bytes: number, name: string, unicode: boolean): string {
  const lines: string[] = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    const line = unicode && n % 7 === 0
      ? `${String(n).padStart(4)}  // ${phrase(rng, 4, true)}`
      : `${String(n).padStart(4)}  export const ${name}_${n} = ${pick(rng, WORDS)}(${int(rng, 0, 999)}, "${pick(rng, WORDS)}");`;
    lines.push(line);
    size += Buffer.byteLength(line) + 1;
  }
  return lines.join('\n') + '\n';
}

/** A small PNG (header and IHDR, enough for its size) unique to `salt`, as a data URL. */
export function pngDataUrl(width: number, height: number, salt: string): string {
  const head = Buffer.alloc(33);
  head.writeUInt32BE(0x89504e47, 0);
  head.writeUInt32BE(0x0d0a1a0a, 4);
  head.writeUInt32BE(13, 8);
  head.write('IHDR', 12, 'latin1');
  head.writeUInt32BE(width, 16);
  head.writeUInt32BE(height, 20);
  return `data:image/png;base64,${Buffer.concat([head, Buffer.from(salt)]).toString('base64')}`;
}

/** Arguments a model writes for a call: nested objects and arrays, so key order and spacing can change. */
export function callArguments(rng: Rng, tool: string, step: string, unicode: boolean): Record<string, unknown> {
  switch (tool) {
    case 'read_file':
      return { path: `src/${step}/${pick(rng, WORDS)}.ts`, range: { start: int(rng, 1, 50), end: int(rng, 60, 400) }, encoding: 'utf8' };
    case 'grep':
      return {
        pattern: unicode ? phrase(rng, 1, true) : pick(rng, WORDS), path: 'src',
        options: { ignore_case: rng() < 0.5, context: int(rng, 0, 3) }, globs: ['*.ts', '!*.d.ts'],
      };
    default:
      return { cmd: `npm test -- ${step}`, cwd: '/repo', env: { CI: '1', FORCE_COLOR: '0' }, timeout_ms: 60_000 };
  }
}

/**
 * `value` as JSON text in one of the ways clients write it back: keys in another order, and compact,
 * indented, or with a space after each separator.
 */
export function reserialise(rng: Rng, value: unknown): string {
  const shuffled = shuffleKeys(rng, value);
  switch (int(rng, 0, 3)) {
    case 0:
      return JSON.stringify(shuffled);
    case 1:
      return JSON.stringify(shuffled, null, 2);
    case 2:
      return spaced(shuffled);
    default:
      return JSON.stringify(shuffled, null, '\t');
  }
}

/** A copy of `xs` in another order (Fisher-Yates). */
export function shuffled<T>(rng: Rng, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** `value` with the keys of every object in another order; arrays keep theirs. */
export function shuffleKeys(rng: Rng, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(rng, v));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(shuffled(rng, Object.keys(value)).map((k) => [k, shuffleKeys(rng, (value as Record<string, unknown>)[k])]));
}

/** `{"a": 1, "b": [1, 2]}`: the layout Python's json.dumps writes. */
function spaced(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spaced).join(', ')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${spaced(v)}`).join(', ')}}`;
}
