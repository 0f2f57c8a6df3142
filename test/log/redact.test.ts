import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_EVENT_DEPTH, redactDeep, redactText } from '../../src/log/redact.js';
import { ALPHA, fakeCredentials, picker, seeded } from './fake-credentials.js';

const creds = fakeCredentials();

const embeddings: [string, (t: string) => string][] = [
  ['prose', (t) => `Here is the value you asked for: ${t}. Please keep it somewhere safe.`],
  ['json text', (t) => JSON.stringify({ env: { TOKEN: t }, note: 'rotated on Monday' })],
  ['shell', (t) => `export DEPLOY_VALUE="${t}" && ./deploy.sh --verbose`],
  ['header', (t) => `X-Debug-Value: ${t}\r\nAccept: application/json\r\n`],
];

describe('redactText: every known shape goes', () => {
  it('has a corpus of at least 25 shapes', () => {
    expect(creds.length).toBeGreaterThanOrEqual(25);
    expect(new Set(creds.map((c) => c.kind)).size).toBeGreaterThanOrEqual(25);
  });

  for (const cred of creds) {
    for (const [where, embed] of embeddings) {
      it(`${cred.kind} (${cred.text.slice(0, 14)}...) in ${where}`, () => {
        const input = embed(cred.text);
        expect(input).toContain(cred.core);
        const { text, hits } = redactText(input);
        expect(text).not.toContain(cred.core);
        expect(text).toContain(`[redacted:${cred.kind}]`);
        expect(hits).toEqual([cred.kind]);
        // A second pass finds nothing: markers are not themselves secrets.
        expect(redactText(text)).toEqual({ text, hits: [] });
      });
    }
  }

  it('keeps the context around a secret', () => {
    const url = creds.find((c) => c.kind === 'url_password')!;
    expect(redactText(url.text).text).toBe('postgres://admin:[redacted:url_password]@db.internal.example.com:5432/app');
    const bearer = redactText('curl -H "Authorization: Bearer abcDEF1234567890xyz" https://api.example.com');
    expect(bearer.text).toBe('curl -H "Authorization: Bearer [redacted:bearer]" https://api.example.com');
    expect(redactText('Authorization: Basic dXNlcjpwYXNzd29yZA==').text).toBe('Authorization: Basic [redacted:basic_auth]');
    expect(redactText('OPENAI_API_KEY=abc123def456ghi789jkl').text).toBe('OPENAI_API_KEY=[redacted:api_key]');
  });

  it('finds a secret after an escaped newline in double-encoded JSON', () => {
    const gh = creds.find((c) => c.kind === 'github')!;
    const { text, hits } = redactText(String.raw`{"content":"line one\n${gh.text}\nline three"}`);
    expect(hits).toEqual(['github']);
    expect(text).not.toContain(gh.core);
  });

  it('removes an unterminated private key block up to its last base64 line', () => {
    const { text } = redactText('-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n(output truncated) done');
    expect(text).toBe('[redacted:private_key](output truncated) done');
  });
});

describe('redactDeep', () => {
  it('redacts strings at any depth, object keys too, and keeps key order', () => {
    const gh = creds.find((c) => c.kind === 'github')!;
    const ant = creds.find((c) => c.kind === 'anthropic')!;
    const input = { a: 1, b: [{ c: `token ${gh.text}` }, null, true], [ant.text]: 'x', z: 'plain' };
    const { value, hits } = redactDeep(input);
    expect(Object.keys(value)).toEqual(['a', 'b', '[redacted:anthropic]', 'z']);
    expect(value.b[0]).toEqual({ c: 'token [redacted:github]' });
    expect(hits.sort()).toEqual(['anthropic', 'github']);
    // The input is not mutated; untouched branches are shared.
    expect((input.b[0] as { c: string }).c).toContain(gh.text);
    const untouched = { k: [1, 2] };
    const wrapped = { x: untouched, y: gh.text };
    expect(redactDeep(wrapped).value.x).toBe(untouched);
  });

  it('returns the same reference when nothing is secret', () => {
    const value = { role: 'user', content: [{ type: 'text', text: 'hello' }], n: 3 };
    const out = redactDeep(value);
    expect(out.value).toBe(value);
    expect(out.hits).toEqual([]);
  });

  it('treats header-like keys as secrets whatever the value shape', () => {
    const { value, hits } = redactDeep({ headers: { Authorization: 'tok', 'x-api-key': 'abc', accept: 'json' } });
    expect(value.headers).toEqual({ Authorization: '[redacted:authorization]', 'x-api-key': '[redacted:api_key]', accept: 'json' });
    expect(hits).toEqual(['authorization', 'api_key']);
  });

  it('takes an object redacted before from its first redaction, hits included, without reading it again', () => {
    const gh = creds.find((c) => c.kind === 'github')!;
    let reads = 0;
    const msg = { role: 'user' } as Record<string, unknown>;
    Object.defineProperty(msg, 'content', { enumerable: true, get: () => (reads++, `use ${gh.text} here`) });
    const first = redactDeep(msg);
    expect(first.hits).toEqual(['github']);
    const readsOnce = reads;
    // The event the log writes holds the same message: its hits come again, its text is not read.
    const event = redactDeep({ type: 'client.msg', msg });
    expect(reads).toBe(readsOnce);
    expect(event.hits).toEqual(['github']);
    expect(event.value.msg).toBe(first.value);
    // What a redaction returned is redacted as it stands.
    expect(redactDeep({ again: first.value })).toStrictEqual({ value: { again: first.value }, hits: [] });
  });

  it('an event holding values redacted before reads the same, with the same hits, as one holding fresh copies', () => {
    const text = fc.oneof(fc.string(), fc.constantFrom(...creds.map((c) => c.text)), fc.constantFrom(...creds.map((c) => `note: ${c.text} end`)));
    const { value: json } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.constant(null), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('authorization', 'password', 'content')), tie('value'), { maxKeys: 4 })),
    }));
    fc.assert(fc.property(fc.array(json, { minLength: 1, maxLength: 4 }), fc.array(fc.nat({ max: 3 }), { maxLength: 4 }), (parts, seen) => {
      // Some of the parts were redacted before (as a new message is, to be keyed), some twice.
      for (const i of seen) if (i < parts.length) redactDeep(parts[i]);
      const event = redactDeep({ type: 'client.msg', parts });
      const fresh = redactDeep({ type: 'client.msg', parts: structuredClone(parts) });
      // What the log writes of each.
      expect(JSON.stringify(event.value)).toBe(JSON.stringify(fresh.value));
      expect([...event.hits].sort()).toStrictEqual([...fresh.hits].sort());
    }), { numRuns: 300 });
  });

  it('keeps a "__proto__" key as a plain member', () => {
    const gh = creds.find((c) => c.kind === 'github')!;
    const input = JSON.parse(`{"__proto__":{"polluted":true},"t":"${gh.text}"}`) as Record<string, unknown>;
    const { value } = redactDeep(input);
    expect(JSON.stringify(value)).toBe('{"__proto__":{"polluted":true},"t":"[redacted:github]"}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('redactDeep on deep values', () => {
  /** `levels` containers, alternating arrays and objects, around `leaf`. */
  function nested(levels: number, leaf: unknown): unknown {
    let v = leaf;
    for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { k: v };
    return v;
  }

  it('redacts a secret at the deepest level allowed', () => {
    const gh = creds.find((c) => c.kind === 'github')!;
    const { value, hits } = redactDeep(nested(MAX_EVENT_DEPTH, gh.text));
    expect(hits).toEqual(['github']);
    expect(JSON.stringify(value)).toBe(JSON.stringify(nested(MAX_EVENT_DEPTH, '[redacted:github]')));
  });

  it('one level deeper, or 100,000 deeper, is json_too_deep naming the limit, not a stack overflow', () => {
    for (const levels of [MAX_EVENT_DEPTH + 1, 100_000]) {
      expect(() => redactDeep(nested(levels, 'x'))).toThrow(expect.objectContaining({
        code: 'json_too_deep',
        message: `A log event nests deeper than ${MAX_EVENT_DEPTH} levels, the most the proxy reads.`,
      }));
    }
  });
});

describe('what must come through unchanged', () => {
  const rand = seeded(7);
  const pick = picker(rand);
  // Prefixes that are valid base64url (or base64) text and so can occur inside a blob by chance.
  const urlPrefixes = ['sk-', 'sk-proj-', 'sk-ant-api03-', 'hf_', 'ghp_', 'gsk_', 'npm_', 'glpat-', 'xai-', 'csk-', 'dckr_pat_', 'sk_live_', 'AIza', 'AKIA', 'eyJ', 'xoxb-', 'pypi-AgEI', 'shpat_', 'dop_v1_'];
  const stdPrefixes = ['AIza', 'AKIA', 'ASIA', 'eyJ', 'SK', 'ya29'];

  function randomBytes(n: number): Buffer {
    const buf = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i += 4) {
      const word = Math.floor(rand() * 4294967296);
      buf[i] = word & 255;
      if (i + 1 < n) buf[i + 1] = (word >>> 8) & 255;
      if (i + 2 < n) buf[i + 2] = (word >>> 16) & 255;
      if (i + 3 < n) buf[i + 3] = word >>> 24;
    }
    return buf;
  }

  /** A 16 KB blob; every one has prefixes spliced in mid-blob, every fifth starts with one. */
  function blob(i: number): string {
    const variant = i % 3;
    // base64 (padded), base64url padded by hand, base64url unpadded.
    const bytes = randomBytes(variant === 2 ? 12286 : 12287);
    let text = variant === 0 ? bytes.toString('base64') : bytes.toString('base64url');
    if (variant === 1) text += '='.repeat((4 - (text.length % 4)) % 4);
    const prefixes = variant === 0 ? stdPrefixes : urlPrefixes;
    for (let k = 0; k < 3; k++) {
      const p = prefixes[Math.floor(rand() * prefixes.length)]!;
      const at = 100 + Math.floor(rand() * (text.length - 400));
      const tail = pick(variant === 0 ? ALPHA.b64 : ALPHA.b64url, 60);
      text = text.slice(0, at) + p + tail + text.slice(at + p.length + tail.length);
    }
    if (i % 5 === 0) {
      const p = prefixes[i % prefixes.length]!;
      text = p + text.slice(p.length);
    }
    return text;
  }

  it('500 random 16 KB blobs in reasoning_details arrays', () => {
    for (let i = 0; i < 500; i++) {
      const data = blob(i);
      expect(data.length).toBeGreaterThanOrEqual(16382);
      if (i % 3 !== 2) expect(data.endsWith('=')).toBe(true);
      const details = [
        { type: 'reasoning.summary', summary: 'Looked at the failing test and the stack trace; the bug is in parse().', id: null, format: 'openai-responses-v1', index: 0 },
        { type: 'reasoning.encrypted', data, id: `rs_${i}`, format: 'openai-responses-v1', index: 1 },
      ];
      const { value, hits } = redactDeep(details);
      if (value !== details || hits.length > 0) {
        throw new Error(`blob ${i} was changed: hits ${hits.join(',')}`);
      }
      // And as raw JSON text (a tool result or a wire body holding the array).
      const text = JSON.stringify(details);
      expect(redactText(text).text === text).toBe(true);
    }
  });

  it('git SHAs, UUIDs and hex digests', () => {
    for (let i = 0; i < 200; i++) {
      const sha = pick(ALPHA.hex, 40);
      const uuid = `${pick(ALPHA.hex, 8)}-${pick(ALPHA.hex, 4)}-4${pick(ALPHA.hex, 3)}-a${pick(ALPHA.hex, 3)}-${pick(ALPHA.hex, 12)}`;
      const digest = pick(ALPHA.hex, 64);
      const text = `commit ${sha}\nMerge: ${sha.slice(0, 7)}\nrequest ${uuid} digest sha256:${digest} {"id":"${uuid}","sha":"${sha}"}`;
      expect(redactText(text)).toEqual({ text, hits: [] });
      expect(redactText(uuid.toUpperCase()).hits).toEqual([]);
    }
  });

  const prose = [
    'We switched to bearer tokens last spring. The Bearer token must be sent as `Bearer <token>` in the Authorization header; Basic authentication is disabled.',
    'Install sk-learn-compatible estimators with pip; the task-management-system-v2 uses hf_hub_download to fetch models. The AKIA prefix marks an AWS access key.',
    'Email me at jane.doe@example.com or see https://example.com/docs/api-keys?lang=en#rotation and git@github.com:owner/repo.git for the code.',
    'Scoped packages live at https://registry.npmjs.org:443/@types/node and redis://localhost:6379/0; the server listens on http://localhost:8080/@admin.',
    'Set the api_key parameter to your key. The authorization: required flag is documented. Use api-key: YOUR_KEY_HERE as a placeholder.',
    'Version 1.2.3-beta.4 of the SDK, build 2024-05-01T12:00:00Z, ticket ABC-1234, SKU SK-77, eyJ is how base64 JSON starts.',
    'In the Telegram docs, tokens look like 123456:ABC-DEF; that short one is an example, not a key. Discord.js v14.14.1 is out.',
  ];

  it('prose paragraphs', () => {
    for (const p of prose) expect(redactText(p)).toEqual({ text: p, hits: [] });
  });

  const code = [
    'const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY, baseURL: "http://localhost:4000/v1" });\nconst headers = { Authorization: `Bearer ${token}` };',
    'api_key = os.environ["ANTHROPIC_API_KEY"]\nresponse = requests.post(url, headers={"Authorization": "Bearer " + api_key}, timeout=30)',
    'export function sk_proj_helper(task_id: string): string {\n  return `task-${task_id}-${Date.now()}`;\n}\nconst b64 = Buffer.from(data).toString("base64url");',
    'img = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="',
    'for (let i = 0; i < keys.length; i++) { if (keys[i] === "sk-") continue; map.set(keys[i], hashes[i]); }',
    'SELECT id, created_at FROM sessions WHERE token_hash = $1 AND expires_at > now(); -- see migration 0042_auth_tokens',
  ];

  it('source code', () => {
    for (const c of code) expect(redactText(c)).toEqual({ text: c, hits: [] });
  });
});
