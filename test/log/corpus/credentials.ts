/**
 * Credentials in the surroundings they turn up in: a `.env` dump, a shell `export`, JSON and YAML
 * config, a curl command, a stack trace, a git remote, a connection string, a source line. Every
 * secret is drawn at test time from a seeded generator, and prefixes a host's secret scanner
 * knows are split in the source, so no file here holds anything that looks like a live secret.
 *
 * `secrets` lists each random part that must be gone after redaction; the test also checks that
 * no 10-character stretch of one survives (so a half-redacted value is a miss too).
 */
import { ALPHA, picker, seeded } from '../fake-credentials.js';

export interface CredentialCase {
  name: string;
  text: string;
  secrets: string[];
}

type Pick = (alphabet: string, n: number) => string;

const HEX = ALPHA.hex;
const ALNUM = ALPHA.alnum;
const B64 = ALPHA.b64;
const B64URL = ALPHA.b64url;
const SYMBOLS = '!#%^*+=?~@';
const BEGIN = '-----BEGIN ';
const END = '-----END ';
const PK = 'PRIVATE KEY-----';

/** A PEM block whose body starts with the format's real leading bytes (`MII` for DER, ...). */
function pem(pick: Pick, label: string, magic: string, lines: number, width = 64, sep = '\n'): { block: string; body: string } {
  const body = Array.from({ length: lines }, () => pick(B64, width)).join(sep);
  return { block: `${BEGIN}${label}${PK}${sep}${magic}${body}${sep}${END}${label}${PK}`, body };
}

function jwt(pick: Pick, payload: object): string {
  const enc = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(payload)}.${pick(B64URL, 43)}`;
}

/** Builds one case: `make` gets a generator and returns the text and its secrets. */
type Maker = (pick: Pick, mixed: (n: number) => string) => [string, string[]];

const MAKERS: [string, Maker][] = [
  // --- key=value credentials, by their key ---
  ['DB_PASSWORD in a .env dump', (p) => {
    const pw = 'Qz7' + p(ALNUM + SYMBOLS, 17);
    return [`# database\nDB_HOST=db.internal\nDB_PORT=5432\nDB_USER=app\nDB_PASSWORD=${pw}\nDB_NAME=app\n`, [pw]];
  }],
  ['POSTGRES_PASSWORD of letters only in docker-compose environment', (p) => {
    const pw = p(ALPHA.lower, 14);
    return [`services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: ${pw}\n      POSTGRES_DB: app\n`, [pw]];
  }],
  ['SECRET_KEY in a Django .env', (p) => {
    const key = 'django-insecure-' + p(ALPHA.lower + ALPHA.digits + '!@#%^&*(-_=+)', 50);
    return [`DEBUG=False\nSECRET_KEY=${key}\nALLOWED_HOSTS=example.com\n`, [key.slice(16)]];
  }],
  ['SECRET_KEY as a Python settings literal', (p) => {
    const key = p(ALNUM, 12) + '-' + p(ALNUM, 30);
    return [`# settings.py\nSECRET_KEY = '${key}'\nDEBUG = False\n`, [key]];
  }],
  ['"password" in a JSON config', (p) => {
    const pw = 'h4' + p(ALNUM + SYMBOLS, 14);
    return [JSON.stringify({ database: { host: 'db', user: 'app', password: pw, pool: 10 } }, null, 2), [pw]];
  }],
  ['"password" of letters in a JSON config file read by a tool', (p) => {
    const pw = p(ALPHA.lower, 10);
    return [`$ cat config/database.json\n{\n  "username": "app",\n  "password": "${pw}",\n  "host": "localhost"\n}`, [pw]];
  }],
  ['password in YAML', (p) => {
    const pw = p(ALNUM, 6) + '9' + p(ALNUM, 8);
    return [`spring:\n  datasource:\n    url: jdbc:postgresql://db:5432/app\n    username: app\n    password: ${pw}\n`, [pw]];
  }],
  ['password quoted in YAML', (p) => {
    const pw = p(ALPHA.lower, 12);
    return [`smtp:\n  user: mailer\n  password: "${pw}"\n  port: 587\n`, [pw]];
  }],
  ['client_secret in an OAuth form body', (p) => {
    const secret = p(ALNUM, 8) + '7' + p(ALNUM + '-_', 23);
    const refresh = '1//0' + p(B64URL, 60);
    return [`curl -s https://oauth2.example.com/token -d "client_id=12345.apps.example.com&client_secret=${secret}&refresh_token=${refresh}&grant_type=refresh_token"`, [secret, refresh.slice(4)]];
  }],
  ['client_secret in YAML', (p) => {
    const secret = p(HEX, 40);
    return [`oauth:\n  client_id: web-app\n  client_secret: ${secret}\n`, [secret]];
  }],
  ['Google OAuth client secret (GOCSPX-) in a client_secret.json', (p) => {
    const secret = 'GOCSPX-' + p(B64URL, 28);
    return [JSON.stringify({ installed: { client_id: '1234-abc.apps.googleusercontent.com', client_secret: secret, redirect_uris: ['http://localhost'] } }), [secret.slice(7)]];
  }],
  ['AWS credentials file: key id, secret and session token', (p) => {
    const id = 'ASIA' + p(ALPHA.upper + '234567', 16);
    const secret = p(ALNUM + '/+', 40);
    const session = 'IQoJb3JpZ2luX2Vj' + p(B64, 300) + '==';
    return [`[default]\naws_access_key_id = ${id}\naws_secret_access_key = ${secret}\naws_session_token = ${session}\nregion = eu-west-1\n`, [id.slice(4), secret, session.slice(16)]];
  }],
  ['AWS STS assume-role JSON output', (p) => {
    const id = 'ASIA' + p(ALPHA.upper + '234567', 16);
    const secret = p(ALNUM + '/+', 40);
    const session = 'FwoGZXIvYXdzE' + p(B64, 280);
    return [JSON.stringify({ Credentials: { AccessKeyId: id, SecretAccessKey: secret, SessionToken: session, Expiration: '2025-01-01T00:00:00Z' } }, null, 4), [id.slice(4), secret, session.slice(13)]];
  }],
  ['AWS_SESSION_TOKEN in a shell export', (p) => {
    const session = 'FwoGZXIvYXdzE' + p(B64, 200) + '=';
    const secret = p(ALNUM + '/+', 40);
    return [`export AWS_ACCESS_KEY_ID=AKIA${p('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}\nexport AWS_SECRET_ACCESS_KEY=${secret}\nexport AWS_SESSION_TOKEN=${session}\n`, [session.slice(13), secret]];
  }],
  ['Azure Ocp-Apim-Subscription-Key header in curl', (p) => {
    const key = p(HEX, 32);
    return [`curl -X POST "https://westeurope.api.cognitive.microsoft.com/vision/v3.2/analyze" -H "Ocp-Apim-Subscription-Key: ${key}" -H "Content-Type: application/json"`, [key]];
  }],
  ['AZURE_OPENAI_API_KEY in a .env', (p) => {
    const key = p(HEX, 32);
    return [`AZURE_OPENAI_ENDPOINT=https://my-res.openai.azure.com/\nAZURE_OPENAI_API_KEY=${key}\nAZURE_OPENAI_DEPLOYMENT=gpt-4o\n`, [key]];
  }],
  ['Azure api-key header as JSON', (p) => {
    const key = p(HEX, 32);
    return [`{"headers": {"api-key": "${key}", "Content-Type": "application/json"}}`, [key]];
  }],
  ['Azure storage connection string AccountKey', (p) => {
    const key = p(B64, 86) + '==';
    return [`AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=prodstore;AccountKey=${key};EndpointSuffix=core.windows.net"`, [key]];
  }],
  ['X-Auth-Token header in curl', (p) => {
    const token = `${p(HEX, 8)}-${p(HEX, 4)}-${p(HEX, 4)}-${p(HEX, 4)}-${p(HEX, 12)}`;
    return [`curl -H "X-Auth-Token: ${token}" https://identity.example.com/v3/projects`, [token]];
  }],
  ['PRIVATE-TOKEN header (GitLab API) in curl', (p) => {
    const token = p(ALNUM, 10) + '4' + p(ALNUM, 9);
    return [`curl --header "PRIVATE-TOKEN: ${token}" "https://gitlab.example.com/api/v4/projects"`, [token]];
  }],
  ['generic api_key in Python source', (p, m) => {
    const key = m(32);
    return [`import requests\n\napi_key = "${key}"\nresp = requests.get(URL, params={"key": api_key})\n`, [key]];
  }],
  ['generic apikey in YAML', (p, m) => {
    const key = m(40);
    return [`weather:\n  provider: openweather\n  apikey: ${key}\n`, [key]];
  }],
  ['generic token in YAML', (p) => {
    const token = p(ALNUM, 20) + '3' + p(ALNUM, 19);
    return [`registry:\n  url: https://registry.example.com\n  token: ${token}\n`, [token]];
  }],
  ['auth token as a JS object literal', (p, m) => {
    const token = m(48);
    return [`const client = new Client({\n  authToken: '${token}',\n  region: 'us-east-1',\n});`, [token]];
  }],
  ['secret in a Rust source line', (p, m) => {
    const secret = m(40);
    return [`let signing_secret = "${secret}";\nlet mac = Hmac::<Sha256>::new_from_slice(signing_secret.as_bytes())?;`, [secret]];
  }],
  ['password in a Go struct literal', (p) => {
    const pw = 'Xy8' + p(ALNUM + SYMBOLS, 13);
    return [`cfg := mysql.Config{\n\tUser:   "app",\n\tPasswd: "${pw}",\n\tAddr:   "db:3306",\n}`, [pw]];
  }],
  ['password in a .NET connection string', (p) => {
    const pw = 'P9' + p(ALNUM + '!#%', 14);
    return [`"ConnectionStrings": { "Default": "Server=sql.internal;Database=app;User Id=sa;Password=${pw};TrustServerCertificate=True" }`, [pw]];
  }],
  ['password in a libpq DSN inside a Python traceback', (p) => {
    const pw = p(ALNUM, 8) + '5' + p(ALNUM, 5);
    return [`Traceback (most recent call last):\n  File "app.py", line 12, in <module>\n    conn = psycopg2.connect("host=db user=app password=${pw} dbname=app")\npsycopg2.OperationalError: could not connect to server`, [pw]];
  }],
  ['password in a JDBC URL in a Java stack trace', (p) => {
    const pw = p(ALNUM, 7) + '2' + p(ALNUM, 6);
    return [`java.sql.SQLException: Access denied for user 'app'@'10.0.0.4'\n\tat com.mysql.cj.jdbc.ConnectionImpl.<init>(jdbc:mysql://db:3306/app?user=app&password=${pw}&useSSL=true)\n\tat java.base/java.lang.Thread.run(Thread.java:833)`, [pw]];
  }],
  ['password in a .netrc', (p) => {
    const pw = p(ALNUM + SYMBOLS, 18);
    return [`machine ftp.example.com\n  login deploy\n  password ${pw}\n`, [pw]];
  }],
  ['curl -u user:password', (p) => {
    const pw = p(ALNUM, 16);
    return [`curl -u admin:${pw} https://jenkins.example.com/api/json`, [pw]];
  }],
  ['PyPI token as the password in a .pypirc', (p) => {
    const token = 'pypi-AgEIcHlwaS5vcmc' + p(B64URL, 150);
    return [`[pypi]\n  username = __token__\n  password = ${token}\n`, [token.slice(20)]];
  }],
  ['Vault token (hvs.) in a shell export', (p, m) => {
    const token = 'hvs.' + m(91);
    return [`export VAULT_ADDR=https://vault.example.com:8200\nexport VAULT_TOKEN=${token}\nvault kv get secret/app`, [token.slice(4)]];
  }],
  // --- private keys and cookies ---
  ['PGP private key block', (p) => {
    const body = Array.from({ length: 8 }, () => p(B64, 64)).join('\n');
    return [`gpg --export-secret-keys --armor me@example.com\n${BEGIN}PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF${body}\n=${p(B64, 4)}\n${END}PGP PRIVATE KEY BLOCK-----\n`, [body]];
  }],
  ['PGP private key block cut short', (p) => {
    const body = Array.from({ length: 5 }, () => p(B64, 64)).join('\n');
    return [`${BEGIN}PGP PRIVATE KEY BLOCK-----\nComment: exported\n\nlQOYBF${body}\n... (output truncated)`, [body]];
  }],
  ['RSA private key in a cat output', (p) => {
    const { block, body } = pem(p, 'RSA ', 'MIIEow', 12);
    return [`$ cat ~/.ssh/id_rsa\n${block}\n`, [body]];
  }],
  ['EC private key', (p) => {
    const { block, body } = pem(p, 'EC ', 'MHcCAQEEI', 3);
    return [`key.pem:\n${block}`, [body]];
  }],
  ['OpenSSH private key', (p) => {
    const { block, body } = pem(p, 'OPENSSH ', 'b3BlbnNzaC1rZXktdjEAAAAA', 7, 70);
    return [block, [body]];
  }],
  ['encrypted PKCS#8 private key', (p) => {
    const { block, body } = pem(p, 'ENCRYPTED ', 'MIIFHzBJBgkqhkiG9w0BBQ0w', 10);
    return [block, [body]];
  }],
  ['GCP service-account JSON private_key', (p) => {
    const { block, body } = pem(p, '', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 20, 64, '\\n');
    return [`{\n  "type": "service_account",\n  "project_id": "my-proj",\n  "private_key_id": "${p(HEX, 40)}",\n  "private_key": "${block}\\n",\n  "client_email": "svc@my-proj.iam.gserviceaccount.com"\n}`, [body.slice(0, 200), body.slice(-200)]];
  }],
  ['Cookie header in curl', (p) => {
    const sid = p(ALNUM, 32);
    const csrf = p(ALNUM, 32);
    return [`curl 'https://app.example.com/api/me' -H 'Accept: application/json' -H 'Cookie: sessionid=${sid}; csrftoken=${csrf}'`, [sid, csrf]];
  }],
  ['Set-Cookie in an HTTP response dump', (p) => {
    const sid = p(B64URL, 40);
    return [`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nSet-Cookie: __Host-session=${sid}; Path=/; Secure; HttpOnly; SameSite=Lax\r\n\r\n`, [sid]];
  }],
  // --- Authorization headers ---
  ['Authorization: Bearer in curl', (p, m) => {
    const token = m(48);
    return [`curl https://api.example.com/v1/items -H "Authorization: Bearer ${token}"`, [token]];
  }],
  ['Authorization: Basic in an HTTP request dump', (p) => {
    const cred = Buffer.from(`deploy:${p(ALNUM, 16)}`).toString('base64');
    return [`GET /private HTTP/1.1\r\nHost: repo.example.com\r\nAuthorization: Basic ${cred}\r\n\r\n`, [cred]];
  }],
  ['JWT in an Authorization header of an axios error', (p) => {
    const token = jwt(p, { sub: p(ALPHA.digits, 8), role: 'admin', exp: 1893456000 });
    return [`AxiosError: Request failed with status code 401\n    config: { headers: { Accept: 'application/json', Authorization: 'Bearer ${token}' } }`, [token.split('.')[2]!, token.split('.')[1]!]];
  }],
  // --- vendor prefixes ---
  // OpenAI's keys carry `T3BlbkFJ` (base64 of "OpenAI") mid-key.
  ['OpenAI sk- in Python source', (p, m) => {
    const key = 'sk-' + m(20) + 'T3Blbk' + 'FJ' + m(20);
    return [`from openai import OpenAI\nclient = OpenAI(api_key="${key}")\n`, [key.slice(3)]];
  }],
  ['OpenAI sk-proj- in a .env', (p) => {
    const key = 'sk-proj-' + 'Ab3' + p(B64URL, 71) + 'T3Blbk' + 'FJ' + p(B64URL, 74);
    return [`OPENAI_API_KEY=${key}\nOPENAI_ORG=org-${p(ALNUM, 24)}\n`, [key.slice(8)]];
  }],
  ['Anthropic sk-ant- in a shell export', (p) => {
    const key = 'sk-ant-api03-' + p(B64URL, 93) + 'AA';
    return [`export ANTHROPIC_API_KEY=${key}\nclaude --print "hello"`, [key.slice(13)]];
  }],
  ['OpenRouter key in JSON config', (p) => {
    const key = 'sk-or-v1-' + p(HEX, 64);
    return [JSON.stringify({ providers: { openrouter: { base_url: 'https://openrouter.ai/api/v1', key } } }), [key.slice(9)]];
  }],
  ['DeepSeek key (sk- and 32 hex) in a .env', (p) => {
    const key = 'sk-' + p(HEX, 31) + 'a';
    return [`DEEPSEEK_BASE_URL=https://api.deepseek.com\nDEEPSEEK_KEY=${key}\n`, [key.slice(3)]];
  }],
  ['GitHub ghp_ as a git remote user', (p, m) => {
    const token = 'ghp_' + m(36);
    return [`$ git remote -v\norigin\thttps://${token}@github.com/acme/app.git (fetch)`, [token.slice(4)]];
  }],
  ['GitHub gho_ in gh hosts.yml', (p, m) => {
    const token = 'gho_' + m(36);
    return [`github.com:\n    user: octocat\n    oauth_token: ${token}\n    git_protocol: https\n`, [token.slice(4)]];
  }],
  ['GitHub ghs_ in a git remote with x-access-token', (p, m) => {
    const token = 'ghs_' + m(36);
    return [`git clone https://x-access-token:${token}@github.com/acme/app.git`, [token.slice(4)]];
  }],
  ['GitHub fine-grained github_pat_ in JSON', (p) => {
    const token = 'github_pat_' + '11A' + p(ALNUM, 19) + '_' + p(ALNUM, 59);
    return [`{"mcpServers":{"github":{"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"${token}"}}}}`, [token.slice(11)]];
  }],
  ['GitLab glpat- in a git remote', (p) => {
    const token = 'glpat-' + p(B64URL, 20);
    return [`remote: https://oauth2:${token}@gitlab.com/acme/app.git`, [token.slice(6)]];
  }],
  ['Slack xoxb- in Python source', (p) => {
    const token = 'xo' + 'xb-' + p(ALPHA.digits, 12) + '-' + p(ALPHA.digits, 13) + '-' + p(ALNUM, 24);
    return [`from slack_sdk import WebClient\nclient = WebClient(token="${token}")`, [token.slice(5)]];
  }],
  ['Slack xoxp- in a .env', (p) => {
    const token = 'xo' + 'xp-' + p(ALPHA.digits, 12) + '-' + p(ALPHA.digits, 12) + '-' + p(ALPHA.digits, 13) + '-' + p(HEX, 32);
    return [`SLACK_USER_TOKEN=${token}\n`, [token.slice(5)]];
  }],
  ['Slack webhook URL in curl', (p) => {
    const path = `T0${p(ALPHA.upper + ALPHA.digits, 8)}/B0${p(ALPHA.upper + ALPHA.digits, 8)}/${p(ALNUM, 24)}`;
    return [`curl -X POST -H 'Content-type: application/json' --data '{"text":"deployed"}' https://hooks.slack.com/services/${path}`, [path]];
  }],
  ['Stripe sk_live_ in Node source', (p) => {
    const key = 'sk_' + 'live_' + '51H' + p(ALNUM, 96);
    return [`const stripe = require('stripe')('${key}');\nconst session = await stripe.checkout.sessions.create({ mode: 'payment' });`, [key.slice(8)]];
  }],
  ['Stripe restricted rk_live_ in a .env', (p) => {
    const key = 'rk_' + 'live_' + '51H' + p(ALNUM, 96);
    return [`STRIPE_RESTRICTED_KEY=${key}\n`, [key.slice(8)]];
  }],
  ['Google API key (AIza) in a Firebase config', (p) => {
    const key = 'AIza' + 'Sy' + p(B64URL, 33);
    return [`const firebaseConfig = {\n  apiKey: "${key}",\n  authDomain: "my-app.firebaseapp.com",\n};`, [key.slice(4)]];
  }],
  ['npm token in .npmrc', (p, m) => {
    const token = 'npm_' + m(36);
    return [`//registry.npmjs.org/:_authToken=${token}\n`, [token.slice(4)]];
  }],
  ['Hugging Face token on a command line', (p) => {
    const token = 'hf_' + 'Ab' + p(ALPHA.upper + ALPHA.lower, 32);
    return [`$ huggingface-cli login --token ${token}\nToken is valid (permission: write).`, [token.slice(3)]];
  }],
  ['Twilio auth token and API key', (p) => {
    const auth = p(HEX, 31) + '0';
    const sk = 'SK' + '7' + p(HEX, 31);
    return [`TWILIO_ACCOUNT_SID=AC${p(HEX, 32)}\nTWILIO_AUTH_TOKEN=${auth}\nTWILIO_API_KEY=${sk}\n`, [auth, sk.slice(2)]];
  }],
  ['SendGrid key in Python source', (p) => {
    const key = 'SG.' + p(B64URL, 22) + '.' + p(B64URL, 43);
    return [`sg = sendgrid.SendGridAPIClient(api_key='${key}')`, [key.slice(3)]];
  }],
  ['Mailgun key- in curl -u', (p) => {
    const key = 'key-' + p(HEX, 31) + '1';
    return [`curl -s --user 'api:${key}' https://api.mailgun.net/v3/mg.example.com/messages`, [key.slice(4)]];
  }],
  ['Mailgun key of the newer shape in a .env', (p) => {
    const key = `${p(HEX, 32)}-${p(HEX, 8)}-${p(HEX, 8)}`;
    return [`MAILGUN_DOMAIN=mg.example.com\nMAILGUN_SECRET=${key}\n`, [key]];
  }],
  ['Discord bot token in client.login', (p) => {
    const id = Buffer.from('1' + p(ALPHA.digits, 17)).toString('base64url');
    const token = `${id}.${p(B64URL, 6)}.${p(B64URL, 38)}`;
    return [`client.once('ready', () => console.log('up'));\nclient.login('${token}');`, [token.slice(token.indexOf('.') + 1)]];
  }],
  ['Discord webhook URL', (p) => {
    const token = p(B64URL, 68);
    return [`WEBHOOK = "https://discord.com/api/webhooks/${p(ALPHA.digits, 18)}/${token}"`, [token]];
  }],
  ['Telegram bot token in an API URL', (p) => {
    const token = `${p('123456789', 1)}${p(ALPHA.digits, 9)}:AA${p(B64URL, 33)}`;
    return [`requests.get(f"https://api.telegram.org/bot${token}/getUpdates")`, [token.slice(11)]];
  }],
  ['postgres URL with a password', (p) => {
    const pw = p(ALNUM, 20);
    return [`DATABASE_URL=postgres://app:${pw}@db.internal:5432/app?sslmode=require`, [pw]];
  }],
  ['mongodb+srv URL with a password', (p) => {
    const pw = p(ALNUM, 16);
    return [`const uri = "mongodb+srv://admin:${pw}@cluster0.abcde.mongodb.net/?retryWrites=true&w=majority";`, [pw]];
  }],
  ['redis URL with only a password', (p) => {
    const pw = p(ALNUM, 24);
    return [`Error: Redis connection to redis://:${pw}@cache.internal:6379/0 failed - connect ECONNREFUSED`, [pw]];
  }],
  ['basic auth in an https URL', (p) => {
    const pw = p(ALNUM, 14);
    return [`pip install --index-url https://deploy:${pw}@pypi.internal.example.com/simple/ app`, [pw]];
  }],
  ['DigitalOcean token in doctl config', (p) => {
    const token = 'dop_' + 'v1_' + p(HEX, 64);
    return [`access-token: ${token}\ncontext: default\n`, [token.slice(7)]];
  }],
  ['Heroku API key (HRKU-) in a .env', (p) => {
    const key = 'HRKU-' + 'AA' + p(B64URL, 58);
    return [`HEROKU_APP=my-app\nHEROKU_TOKEN=${key}\n`, [key.slice(7)]];
  }],
  ['Heroku API key as a UUID with its context', (p) => {
    const key = `${p(HEX, 8)}-${p(HEX, 4)}-${p(HEX, 4)}-${p(HEX, 4)}-${p(HEX, 12)}`;
    return [`export HEROKU_API_KEY=${key}`, [key]];
  }],
  ['Shopify admin token in JSON', (p) => {
    const token = 'shp' + 'at_' + p(HEX, 32);
    return [`{"shop":"acme.myshopify.com","access_token":"${token}"}`, [token.slice(6)]];
  }],
  ['Square access tokens', (p) => {
    const a = 'sq0' + 'atp-' + p(B64URL, 22);
    const b = 'EA' + 'AA' + p(ALNUM, 59) + '5';
    return [`SQUARE_SANDBOX=${a}\nsquare_client = Client(access_token="${b}", environment="production")`, [a.slice(7), b.slice(4)]];
  }],
  ['Databricks token in .databrickscfg', (p) => {
    const token = 'dapi' + p(HEX, 31) + '7';
    return [`[DEFAULT]\nhost = https://adb-123.azuredatabricks.net\ntoken = ${token}\n`, [token.slice(4)]];
  }],
  ['Doppler service token', (p) => {
    const token = 'dp.' + 'st.' + 'prd.' + p(ALNUM, 43);
    return [`docker run -e DOPPLER_TOKEN="${token}" app`, [token.slice(10)]];
  }],
  ['Pulumi access token', (p) => {
    const token = 'pul-' + p(HEX, 40);
    return [`- name: pulumi up\n  env:\n    PULUMI_ACCESS_TOKEN: ${token}`, [token.slice(4)]];
  }],
  ['Terraform Cloud token in .terraformrc', (p) => {
    const token = p(ALNUM, 14) + '.atlasv1.' + p(B64URL, 67);
    return [`credentials "app.terraform.io" {\n  token = "${token}"\n}`, [token.slice(0, 14), token.slice(23)]];
  }],
  ['Linear API key in JS source', (p) => {
    const key = 'lin_' + 'api_' + p(ALNUM, 40);
    return [`const linear = new LinearClient({ apiKey: "${key}" });`, [key.slice(8)]];
  }],
  ['Notion integration tokens', (p, m) => {
    const old = 'secret_' + m(43);
    const nu = 'ntn_' + p(ALPHA.digits, 11) + m(35);
    return [`NOTION_TOKEN=${old}\nconst notion = new Client({ auth: "${nu}" })`, [old.slice(7), nu.slice(4)]];
  }],
  ['Supabase service-role key (a JWT) and secret key', (p) => {
    const service = jwt(p, { iss: 'supabase', ref: p(ALPHA.lower, 20), role: 'service_role', iat: 1700000000 });
    const secret = 'sb_' + 'secret_' + p(B64URL, 32);
    return [`SUPABASE_URL=https://${p(ALPHA.lower, 20)}.supabase.co\nSUPABASE_SERVICE_ROLE_KEY=${service}\nSUPABASE_SECRET=${secret}`, [service.split('.')[2]!, secret.slice(10)]];
  }],
  ['Supabase personal access token', (p) => {
    const token = 'sbp_' + p(HEX, 40);
    return [`supabase login --token ${token}`, [token.slice(4)]];
  }],
  ['Groq key in a .env', (p, m) => {
    const key = 'gsk_' + m(52);
    return [`GROQ_API_KEY=${key}`, [key.slice(4)]];
  }],
  ['Mistral key (no prefix) with its context', (p, m) => {
    const key = m(32);
    return [`client = Mistral(api_key="${key}")`, [key]];
  }],
  ['Replicate token', (p, m) => {
    const token = 'r8_' + m(37);
    return [`export REPLICATE_API_TOKEN=${token}`, [token.slice(3)]];
  }],
  ['Fireworks key in a JS config', (p, m) => {
    const key = 'fw_' + m(24);
    return [`const fireworks = createFireworks({ apiKey: '${key}' });`, [key.slice(3)]];
  }],
  ['1Password service account token', (p) => {
    const token = 'ops_' + Buffer.from(JSON.stringify({ signInAddress: 'my.1password.com', email: `${p(ALPHA.lower, 26)}@1passwordserviceaccounts.com`, secretKey: p(ALNUM, 40) })).toString('base64');
    return [`export OP_SERVICE_ACCOUNT_TOKEN=${token}`, [token.slice(4 + 40)]];
  }],
  ['Grafana Cloud and service-account tokens', (p) => {
    const cloud = 'glc_' + p(B64, 80) + '==';
    const sa = 'glsa_' + p(ALNUM, 32) + '_' + p(HEX, 8);
    return [`grafana:\n  cloud_token: ${cloud}\n  sa: ${sa}\n`, [cloud.slice(4), sa.slice(5)]];
  }],
  ['Vercel token', (p, m) => {
    const token = 'vcp_' + m(40);
    return [`vercel deploy --prod --token ${token}`, [token.slice(4)]];
  }],
  ['Figma personal access token', (p) => {
    const token = 'figd_' + p(B64URL, 40);
    return [`curl -H 'X-Figma-Token: ${token}' https://api.figma.com/v1/me`, [token.slice(5)]];
  }],
  ['Cloudflare API token', (p) => {
    const token = 'cfut_' + p(ALNUM, 40) + p(HEX, 8);
    return [`CLOUDFLARE_API_TOKEN=${token}`, [token.slice(5)]];
  }],
  ['Tailscale auth key', (p) => {
    const key = 'tskey-' + 'auth-' + p(ALNUM, 12) + '-' + p(ALNUM, 30);
    return [`sudo tailscale up --authkey=${key}`, [key.slice(11)]];
  }],
  ['xAI key in a .env', (p, m) => {
    const key = 'xai-' + m(80);
    return [`XAI_KEY=${key}`, [key.slice(4)]];
  }],
];

/** Every case, with secrets drawn from `seed` (the same seed gives the same texts). */
export function credentialCases(seed = 1): CredentialCase[] {
  const pick = picker(seeded(seed));
  // Random keys mix digits and both cases; force it so a short draw cannot miss one.
  const mixed = (n: number): string => 'aZ7' + pick(ALNUM, n - 3);
  return MAKERS.map(([name, make]) => {
    const [text, secrets] = make(pick, mixed);
    return { name, text, secrets };
  });
}
