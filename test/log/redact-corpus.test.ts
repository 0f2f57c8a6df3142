/**
 * The redaction corpora (test/log/corpus): every credential case loses its secrets, every
 * innocent case comes through byte for byte, as text, as a JSON string and as a JSON value.
 * Prints both rates. Also: redaction stays linear on adversarial input (1 MB in < 200 ms).
 */
import { describe, expect, it } from 'vitest';
import { redactDeep, redactText } from '../../src/log/redact.js';
import { credentialCases, type CredentialCase } from './corpus/credentials.js';
import { innocentCases } from './corpus/innocent.js';

const SEEDS = [1, 2, 3];
const WINDOW = 10;

/** The first stretch of WINDOW characters of a secret still found in `text`, if any. */
function leak(text: string, secrets: string[]): string | undefined {
  for (const secret of secrets) {
    const n = Math.min(WINDOW, secret.length);
    for (let i = 0; i + n <= secret.length; i++) {
      const part = secret.slice(i, i + n);
      if (text.includes(part)) return part;
    }
  }
  return undefined;
}

/** Each way a case reaches the redactor: as text, inside a JSON string, as a member of a value. */
function forms(text: string): [string, () => string][] {
  return [
    ['text', () => redactText(text).text],
    ['json string', () => redactText(JSON.stringify({ content: text })).text],
    ['value', () => JSON.stringify(redactDeep({ role: 'tool', content: [{ type: 'text', text }] }).value)],
  ];
}

describe('credential corpus', () => {
  const cases = SEEDS.flatMap((seed) => credentialCases(seed).map((c): [number, CredentialCase] => [seed, c]));

  it('has at least 60 shapes, each with a secret that the unredacted text holds', () => {
    expect(credentialCases().length).toBeGreaterThanOrEqual(60);
    for (const [, c] of cases) {
      expect(c.secrets.length).toBeGreaterThan(0);
      for (const s of c.secrets) expect(c.text, c.name).toContain(s);
    }
  });

  it('misses nothing: no 10-character stretch of a secret survives, in any form', () => {
    const misses: string[] = [];
    for (const [seed, c] of cases) {
      for (const [form, run] of forms(c.text)) {
        const out = run();
        const part = leak(out, c.secrets);
        if (part !== undefined) misses.push(`${c.name} (seed ${seed}, ${form}): "${part}" in ${out.slice(0, 300)}`);
      }
    }
    console.log(`credential corpus: ${cases.length} cases x 3 forms, ${misses.length} missed (${((100 * misses.length) / (cases.length * 3)).toFixed(1)}%)`);
    expect(misses).toEqual([]);
  });

  it('is deterministic and idempotent', () => {
    for (const [, c] of cases) {
      const once = redactText(c.text);
      expect(redactText(c.text)).toEqual(once);
      expect(once.hits.length, c.name).toBeGreaterThan(0);
      for (const kind of once.hits) expect(once.text).toContain(`[redacted:${kind}]`);
      expect(redactText(once.text), c.name).toEqual({ text: once.text, hits: [] });
    }
  });
});

describe('innocent corpus', () => {
  const cases = SEEDS.flatMap((seed) => innocentCases(seed));

  it('changes nothing: each case byte for byte, in any form', () => {
    const changed: string[] = [];
    for (const c of cases) {
      const value = { role: 'tool', content: [{ type: 'text', text: c.text }] };
      const asText = redactText(c.text);
      if (asText.text !== c.text || asText.hits.length > 0) changed.push(`${c.name}: ${asText.text}`);
      else if (redactText(JSON.stringify(value)).text !== JSON.stringify(value)) changed.push(`${c.name} (in a JSON string)`);
      else if (redactDeep(value).value !== value) changed.push(`${c.name} (as a value)`);
    }
    // A JSON case is also read as a value, so its keys are judged as keys (`"token": "Hello"`).
    for (const c of cases) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(c.text);
      } catch {
        continue;
      }
      if (redactDeep(parsed).value !== parsed) changed.push(`${c.name} (parsed)`);
    }
    console.log(`innocent corpus: ${cases.length} cases, ${changed.length} changed (${((100 * changed.length) / cases.length).toFixed(1)}%)`);
    expect(changed).toEqual([]);
  });
});

describe('cost on adversarial input', () => {
  const MB = 1 << 20;
  const fill = (unit: string): string => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  const inputs: [string, string][] = [
    ['a= runs', fill('a=')],
    ['colons', fill(':')],
    ['base64 characters', fill('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/')],
    ['password= runs', fill('password=')],
    ['key: runs', fill('key: ')],
    ['token=a runs', fill('token=a')],
    ['DB_PASSWORD=x&y', fill('DB_PASSWORD=x&y')],
    ['one long identifier before a keyword', 'a_'.repeat(MB / 2 - 10) + 'password=1'],
    ['private key headers without an END', fill('-----BEGIN PRIVATE KEY-----\n')],
    ['a private key header, then base64', '-----BEGIN PRIVATE KEY-----\n' + fill('QUJD')],
    ['Cookie: runs', fill('Cookie: a=')],
    ['curl with no -u', 'curl ' + fill('x ')],
    ['scheme:// runs', fill('ab://c:')],
    ['Bearer runs', fill('Bearer ')],
    ['sk- runs', fill('sk-')],
    ['eyJ runs', fill('eyJ.')],
  ];

  /**
   * CPU time of the best of three runs: the machines tests run on are shared, and wall time there
   * measures the neighbours. A catastrophic pattern costs seconds of CPU whatever the load.
   */
  function cpuMs(text: string): number {
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const start = process.cpuUsage();
      redactText(text);
      const used = process.cpuUsage(start);
      best = Math.min(best, (used.user + used.system) / 1000);
    }
    return best;
  }

  for (const [name, text] of inputs) {
    it(`1 MB of ${name} in under 200 ms`, () => {
      const ms = cpuMs(text);
      console.log(`redact 1 MB of ${name}: ${ms.toFixed(0)} ms CPU`);
      expect(ms).toBeLessThan(200);
    });
  }
});
