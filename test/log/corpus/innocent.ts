/**
 * Text a coding agent's log is full of that holds no credential, however much it looks like one:
 * source code naming passwords and tokens without a literal value, hashes, UUIDs, lockfiles,
 * base64 images and wasm, minified JS, prose, and placeholders. Redaction must leave each byte
 * for byte (docs/decisions.md, Redaction by shape, never by entropy).
 *
 * Left out on purpose: a JWT literal in a test file (`const fixture = "eyJ..."`). A JWT is
 * redacted wherever it appears, because a fixture and a live token cannot be told apart by
 * their text; docs/decisions.md says so.
 */
import { ALPHA, picker, seeded } from '../fake-credentials.js';

export interface InnocentCase {
  name: string;
  text: string;
}

type Pick = (alphabet: string, n: number) => string;

const FIXED: [string, string][] = [
  ['TypeScript interface with password and token fields', `export interface LoginRequest {
  username: string;
  password: string;
  token?: string;
  secret: Secret<string>;
  apiKey: string | undefined;
}
`],
  ['TypeScript: password from a getter, token from a tokenizer', `const password = await getPassword(user);
let token = tokenizer.next();
while (token !== undefined) { tokens.push(token); token = tokenizer.next(); }
if (password.length < 8) throw new Error("password: too short");
const headers = { Authorization: \`Bearer \${token}\` };
`],
  ['TypeScript: options object passing identifiers', `const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY, baseURL: config.baseUrl });
await db.connect({ user: cfg.user, password: cfg.password, host, port });
login({ username, password: form.password, token: session.token });
const secret = opts.secret ?? defaultSecret;
`],
  ['Python: type hints and environment look-ups', `import os

def check_password(password: str, hashed: bytes) -> bool:
    return bcrypt.checkpw(password.encode(), hashed)

SECRET_KEY = os.environ.get("SECRET_KEY")
api_key = os.environ["ANTHROPIC_API_KEY"]
token = tokenizer.next()
self.password = password
client = Client(token=token, api_key=api_key)
password = input("Password: ")
`],
  ['Python: a dataclass and a getpass prompt', `@dataclass
class Credentials:
    username: str
    password: Optional[str] = None
    token: str = field(default_factory=str)

pw = getpass.getpass(prompt="password: ")
`],
  ['Go: struct tags and a token from a function', `type Config struct {
	Password string \`json:"password" yaml:"password"\`
	Token    string \`json:"token,omitempty"\`
}

func (c *Client) Login(ctx context.Context) error {
	token, err := auth.GetToken(ctx)
	secret := os.Getenv("APP_SECRET")
	if password == "" || token == nil {
		return errors.New("missing credentials")
	}
	return nil
}
`],
  ['Rust: secrets read from the environment', `pub struct Settings {
    pub password: Option<String>,
    pub api_key: SecretString,
}

let secret = std::env::var("API_SECRET")?;
let token = self.tokens.next().ok_or(Error::Eof)?;
let password: String = prompt_password("Password: ")?;
`],
  ['Rust: a token enum in a lexer', `match token {
    Token::Ident(name) => names.push(name),
    Token::Secret => return Err(ParseError::Reserved),
    _ => {}
}
`],
  ['GitHub Actions workflow with secrets references', `jobs:
  deploy:
    runs-on: ubuntu-latest
    env:
      API_TOKEN: \${{ secrets.API_TOKEN }}
      DB_PASSWORD: \${{ secrets.DB_PASSWORD }}
    steps:
      - run: ./deploy.sh --password "$DB_PASSWORD" --token "$API_TOKEN"
`],
  ['Kubernetes secret references', `env:
  - name: DB_PASSWORD
    valueFrom:
      secretKeyRef:
        name: db-credentials
        key: password
volumes:
  - name: certs
    secret:
      secretName: tls-secret
`],
  ['docker-compose with secrets files and variable references', `services:
  db:
    environment:
      POSTGRES_PASSWORD_FILE: /run/secrets/db_password
      POSTGRES_USER: \${POSTGRES_USER}
    secrets:
      - db_password
`],
  ['Terraform with variables', `resource "aws_db_instance" "main" {
  username = var.db_username
  password = var.db_password
  sensitive = true
}
`],
  ['.env.example with placeholders', `OPENAI_API_KEY=<YOUR_API_KEY>
ANTHROPIC_API_KEY=\${ANTHROPIC_API_KEY}
DB_PASSWORD=
SECRET_KEY=your-secret-key-here
GITHUB_TOKEN=xxxxxxxxxxxxxxxxxxxx
STRIPE_KEY=sk-...
REDIS_PASSWORD=********
`],
  ['README with placeholder keys', `Set your key before running:

    export OPENAI_API_KEY="sk-..."
    curl https://api.openai.com/v1/models -H "Authorization: Bearer $OPENAI_API_KEY"

Or put \`api_key: "your_api_key_here"\` in config.yaml. Never commit \`process.env.OPENAI_API_KEY\` values.
`],
  ['Templated config', `password: "{{ .Values.db.password }}"
token: '%(token)s'
secret = "%SECRET%"
api_key: <redacted>
`],
  ['OpenAI logprobs', JSON.stringify({ logprobs: { content: [
    { token: 'Hello', logprob: -0.31, bytes: [72, 101, 108, 108, 111] },
    { token: ' world', logprob: -1.2, bytes: [32, 119] },
    { token: 'Unfortunately', logprob: -2.5, bytes: [] },
  ] } })],
  ['usage counters and token limits', `{"usage":{"prompt_tokens":1234,"completion_tokens":56,"total_tokens":1290},"max_tokens":4096}
MAX_TOKENS=8192
x-ratelimit-remaining-tokens: 149984
`],
  ['SQL with token hashes', 'SELECT id, created_at FROM sessions WHERE token_hash = $1 AND expires_at > now(); -- see migration 0042_auth_tokens\nUPDATE users SET password_hash = $2 WHERE id = $1;'],
  ['shell session with pwd and env', `$ pwd
/home/dev/project
$ env | grep PWD
PWD=/home/dev/project
OLDPWD=/home/dev
$ cat /etc/passwd | head -1
root:x:0:0:root:/root:/bin/bash
`],
  ['docker run with a user and group', 'docker run --rm -u 1000:1000 -v "$PWD":/src -w /src node:20 npm test'],
  ['prose about credentials', `Rotate the password every ninety days and never paste a token into a chat. The secret: keep keys in a
vault, not in the repository. A bearer token is sent as \`Authorization: Bearer <token>\`; the Cookie header carries
the session. Passwords must be at least twelve characters; the password: field is required. Basic authentication is
disabled for the API, and the api_key parameter is deprecated in favour of OAuth client credentials.`],
  ['long English prose', Array.from({ length: 40 }, (_, i) => `Paragraph ${i + 1}. The migration moved the session store to PostgreSQL and kept the cache in Redis; the team measured latency before and after, found the p99 improved by a third, and wrote down what broke along the way so the next person does not trip over the same connection pool settings.`).join('\n\n')],
  ['CSS with colors', `:root { --primary: #1a73e8; --accent: #ff00aa; --muted: #9e9e9e80; }
.token { color: #d73a49; background: rgba(27, 31, 35, 0.05); }
.secret-banner { border: 1px solid #e1e4e8; }
`],
  ['npm lockfile excerpt', `{
  "name": "app",
  "lockfileVersion": 3,
  "packages": {
    "node_modules/js-tokens": {
      "version": "4.0.0",
      "resolved": "https://registry.npmjs.org/js-tokens/-/js-tokens-4.0.0.tgz",
      "integrity": "sha512-RdJUflcE3cUzKiMqQgsCu06FPu9UdIJO0beYbPhHN4k6apgJtifcoCtT9bcxOpYBtpD2kCM6Sbzg4CausW/PKQ=="
    }
  }
}`],
  ['yarn.lock excerpt', `"@babel/code-frame@^7.0.0":
  version "7.24.2"
  resolved "https://registry.yarnpkg.com/@babel/code-frame/-/code-frame-7.24.2.tgz#5a3d5b1e6f7c8a9b0c1d2e3f4a5b6c7d8e9f0a1b"
  integrity sha512-y5+tLQyV8pg3fsiln67BVLD1P13Eg4lh5RW9mF0zUuvLrv9uIQ4MCL+CRT+FTsBlBjcIan6PGsLcBN0m3ClUyQ==
`],
  ['Cargo.lock and go.sum excerpts', `[[package]]
name = "tokio"
version = "1.37.0"
checksum = "1adbebffeca75fcfd058afa480fb6c0b81e165a0323f9c9d39c9697e37c46787"

golang.org/x/crypto v0.22.0 h1:g1v0xeRhjcugydODzvb3mEM9SQ0HGp9s/nh3COQ/C30=
`],
  ['sha256sum and md5sum output', `$ sha256sum dist/*.tar.gz
e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  dist/app-1.2.3.tar.gz
$ md5sum README.md
d41d8cd98f00b204e9800998ecf8427e  README.md
`],
  ['minified JS', '!function(e,t){"object"==typeof exports?module.exports=t():e.lib=t()}(this,function(){var e={token:null,secret:void 0};function t(t,n){return e.token=t,e.password=n,{token:e.token,password:n}}var n=function(e){return e.split("=").map(function(e){return e.trim()})};return{login:t,parse:n,key:function(e){return"key-"+e}}});'],
  ['placeholders in prose and code', 'Use `sk-...` or `<YOUR_API_KEY>` here; the SDK reads ${API_KEY} or process.env.OPENAI_API_KEY. A key looks like `sk-proj-XXXXXXXX`.'],
  ['URLs without passwords', 'git@github.com:owner/repo.git\nssh://git@gitlab.com:22/group/project.git\nhttps://user@example.com/path\nredis://localhost:6379/0\nhttp://localhost:8080/@admin'],
  ['Authorization headers with variables', 'headers["Authorization"] = f"Bearer {token}"\nreq.headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;'],
];

/** Cases with random parts (hashes, UUIDs, blobs) drawn from `seed`. */
function generated(pick: Pick): [string, string][] {
  const uuid = (): string => `${pick(ALPHA.hex, 8)}-${pick(ALPHA.hex, 4)}-4${pick(ALPHA.hex, 3)}-a${pick(ALPHA.hex, 3)}-${pick(ALPHA.hex, 12)}`;
  const bytes = (n: number): Buffer => Buffer.from(Buffer.from(pick(ALPHA.b64, n), 'latin1').map((b, i) => (b * 31 + i) & 255));
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), bytes(3000)]).toString('base64');
  const wasm = Buffer.concat([Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]), bytes(6000)]).toString('base64');
  const sha1 = pick(ALPHA.hex, 40);
  return [
    ['git log with SHAs', `commit ${sha1}\nMerge: ${pick(ALPHA.hex, 7)} ${pick(ALPHA.hex, 7)}\nAuthor: Jane <jane@example.com>\n\n    Fix token refresh (${sha1.slice(0, 12)})\n`],
    ['hex digests in JSON', JSON.stringify({ sha256: pick(ALPHA.hex, 64), md5: pick(ALPHA.hex, 32), etag: `"${pick(ALPHA.hex, 32)}"`, commit: pick(ALPHA.hex, 40) })],
    ['UUIDs in a log', `request ${uuid()} session ${uuid().toUpperCase()} trace_id=${pick(ALPHA.hex, 32)} span_id=${pick(ALPHA.hex, 16)}`],
    ['a base64 PNG data URL', `<img src="data:image/png;base64,${png}" alt="chart">`],
    ['a base64 wasm module', `const wasm = Uint8Array.from(atob("${wasm}"), (c) => c.charCodeAt(0));`],
    ['an image block in a message', JSON.stringify({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } })],
    ['a sourcemap excerpt', JSON.stringify({ version: 3, sources: ['src/auth/token.ts'], names: ['token', 'password', 'secret'], mappings: 'AAAA,SAASA,EAAMC;AACf,IAAIC,KAAK,GAAG' + pick('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/,;', 400) })],
  ];
}

export function innocentCases(seed = 1): InnocentCase[] {
  const pick = picker(seeded(seed));
  return [...FIXED, ...generated(pick)].map(([name, text]) => ({ name, text }));
}
