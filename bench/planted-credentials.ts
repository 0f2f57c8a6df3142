/**
 * Files an agent reads that hold credentials, seeded: a project's `.env` with an OpenAI project
 * key, an AWS secret, a GitHub token and a JWT, each freshly drawn. Shapes the log's redaction
 * knows (src/log/redact-rules.ts), so each must be gone from the log.
 */
import { mulberry32 } from '../src/core/prng.js';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const B64URL = `${ALNUM}-_`;

export interface PlantedFile {
  text: string;
  /** The secret parts, to check that none reached the log. */
  secrets: string[];
}

export function envFile(seed: number): PlantedFile {
  const rand = mulberry32(seed);
  const pick = (alphabet: string, n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
    return s;
  };
  // Random keys mix digits and both cases; forced, so a short draw cannot miss one.
  const openai = `sk-proj-Qx9${pick(B64URL, 153)}`;
  const aws = `aZ7${pick(`${ALNUM}/+`, 37)}`;
  const github = `ghp_aZ7${pick(ALNUM, 33)}`;
  const header = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');
  const payload = Buffer.from(`{"sub":"${pick('0123456789', 10)}","role":"service","iat":1716239022}`).toString('base64url');
  const jwt = `${header}.${payload}.${pick(B64URL, 43)}`;
  const text = [
    '# .env — local development settings (do not commit)',
    'NODE_ENV=development',
    'PORT=8080',
    'LOG_LEVEL=debug',
    `OPENAI_API_KEY=${openai}`,
    'AWS_REGION=eu-west-1',
    `AWS_SECRET_ACCESS_KEY=${aws}`,
    `GITHUB_TOKEN=${github}`,
    `SERVICE_JWT=${jwt}`,
    'FEATURE_FLAGS=fast-path,new-ui',
    '',
  ].join('\n');
  return { text, secrets: [openai.slice(8), aws, github.slice(4), jwt.slice(jwt.lastIndexOf('.') + 1)] };
}
