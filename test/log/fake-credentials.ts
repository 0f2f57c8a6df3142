/**
 * Realistic fake credentials, one or more per shape, from a seeded generator (deterministic).
 * Each entry says which kind the redactor must report and which part must vanish (`core`: a
 * random stretch that survives JSON escaping, so it can be searched in any embedding).
 */
import { mulberry32 as seeded } from '../../src/core/prng.js';

export { seeded };

export const ALPHA = {
  upper: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  lower: 'abcdefghijklmnopqrstuvwxyz',
  digits: '0123456789',
  hex: '0123456789abcdef',
  alnum: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
  b64: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/',
  b64url: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_',
};

export function picker(rand: () => number) {
  return (alphabet: string, n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
    return s;
  };
}

export interface FakeCredential {
  kind: string;
  /** The credential as it appears in text, with its context when the shape needs one. */
  text: string;
  /** A random stretch of the secret that must not survive redaction. */
  core: string;
}

export function fakeCredentials(seed = 42): FakeCredential[] {
  const pick = picker(seeded(seed));
  // Random keys mix digits and both cases; force it so a short draw cannot miss one.
  const mixedAlnum = (n: number): string => 'aZ7' + pick(ALPHA.alnum, n - 3);
  const out: FakeCredential[] = [];
  const add = (kind: string, prefix: string, body: string, suffix = ''): void => {
    out.push({ kind, text: prefix + body + suffix, core: body.slice(0, 16) });
  };

  add('openai', 'sk-', mixedAlnum(20) + 'T3BlbkFJ' + mixedAlnum(20));
  add('openai', 'sk-proj-', 'Qx9' + pick(ALPHA.b64url, 153));
  add('openai', 'sk-svcacct-', 'Mv4' + pick(ALPHA.b64url, 153));
  add('anthropic', 'sk-ant-api03-', pick(ALPHA.b64url, 93), 'AA');
  add('anthropic', 'sk-ant-admin01-', pick(ALPHA.b64url, 93), 'AA');
  add('openrouter', 'sk-or-v1-', pick(ALPHA.hex, 64));
  add('google_api_key', 'AIza', 'Sy' + pick(ALPHA.b64url, 33));
  add('google_oauth', 'ya29.', 'a0AfB_by' + pick(ALPHA.b64url, 140));
  add('aws_access_key_id', 'AKIA', pick(ALPHA.upper + '234567', 16));
  add('aws_access_key_id', 'ASIA', pick(ALPHA.upper + '234567', 16));
  add('aws_secret_access_key', 'aws_secret_access_key = ', pick(ALPHA.alnum + '/+', 40));
  for (const p of ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_']) add('github', p, mixedAlnum(36));
  add('github', 'github_pat_', '11A' + pick(ALPHA.alnum, 19) + '_' + pick(ALPHA.alnum, 59));
  add('gitlab', 'glpat-', pick(ALPHA.b64url, 20));
  add('slack', 'xoxb-', pick(ALPHA.digits, 12) + '-' + pick(ALPHA.digits, 13) + '-' + pick(ALPHA.alnum, 24));
  add('slack', 'xoxp-', pick(ALPHA.digits, 12) + '-' + pick(ALPHA.digits, 12) + '-' + pick(ALPHA.digits, 13) + '-' + pick(ALPHA.hex, 32));
  add('slack', 'xapp-1-', 'A0' + pick(ALPHA.upper + ALPHA.digits, 9) + '-' + pick(ALPHA.digits, 13) + '-' + pick(ALPHA.hex, 64));
  add('slack_webhook', 'https://hooks.slack.com/', `services/T0${pick(ALPHA.upper + ALPHA.digits, 8)}/B0${pick(ALPHA.upper + ALPHA.digits, 8)}/${pick(ALPHA.alnum, 24)}`);
  add('stripe', 'sk_live_', '51H' + pick(ALPHA.alnum, 96));
  add('stripe', 'rk_live_', '51H' + pick(ALPHA.alnum, 96));
  add('stripe', 'sk_test_', '4eC39HqLyjWDarjtT1zdp7dc' + pick(ALPHA.alnum, 8));
  add('bearer', 'Authorization: Bearer ', mixedAlnum(40));
  add('bearer', 'Bearer ', mixedAlnum(24) + '.' + pick(ALPHA.alnum, 20));
  const jwtHeader = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');
  const jwtPayload = Buffer.from(`{"sub":"${pick(ALPHA.digits, 10)}","name":"Jane Doe","iat":1716239022}`).toString('base64url');
  add('jwt', '', `${jwtHeader}.${jwtPayload}.${pick(ALPHA.b64url, 43)}`);
  const pemBody = Array.from({ length: 6 }, () => pick(ALPHA.b64, 64)).join('\n');
  out.push({ kind: 'private_key', text: `-----BEGIN RSA PRIVATE KEY-----\nMIIEow${pemBody}\n-----END RSA PRIVATE KEY-----`, core: pemBody.slice(65, 81) });
  const pem2 = Array.from({ length: 4 }, () => pick(ALPHA.b64, 70)).join('\n');
  out.push({ kind: 'private_key', text: `-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn${pem2}\n-----END OPENSSH PRIVATE KEY-----`, core: pem2.slice(71, 87) });
  add('npm', 'npm_', mixedAlnum(36));
  add('huggingface', 'hf_', 'Ab' + pick(ALPHA.upper + ALPHA.lower, 32));
  add('groq', 'gsk_', mixedAlnum(52));
  add('xai', 'xai-', mixedAlnum(80));
  add('cerebras', 'csk-', 'x9' + pick(ALPHA.lower + ALPHA.digits, 46));
  add('digitalocean', 'dop_v1_', pick(ALPHA.hex, 64));
  add('sendgrid', 'SG.', pick(ALPHA.b64url, 22) + '.' + pick(ALPHA.b64url, 43));
  add('twilio', 'SK', '7' + pick(ALPHA.hex, 31));
  add('pypi', 'pypi-AgEIcHlwaS5vcmc', pick(ALPHA.b64url, 160));
  add('docker', 'dckr_pat_', pick(ALPHA.b64url, 27));
  add('shopify', 'shpat_', pick(ALPHA.hex, 32));
  add('telegram', '', `${pick('123456789', 1)}${pick(ALPHA.digits, 9)}:AA${pick(ALPHA.b64url, 33)}`);
  const discordId = Buffer.from('1' + pick(ALPHA.digits, 17)).toString('base64url');
  add('discord', '', `${discordId}.${pick(ALPHA.b64url, 6)}.${pick(ALPHA.b64url, 38)}`);
  const password = 'S3cr' + pick(ALPHA.alnum, 14);
  out.push({ kind: 'url_password', text: `postgres://admin:${password}@db.internal.example.com:5432/app`, core: password });
  return out;
}
