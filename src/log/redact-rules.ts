/**
 * The credential shapes the log removes, compiled once at module load (pino's lesson: compile
 * redaction once, never per call).
 *
 * Every rule is a *shape* (a vendor prefix, a fixed layout, or a context such as `Bearer ` or
 * `aws_secret_access_key =`), never entropy alone (docs/decisions.md, Redaction by shape, never by
 * entropy). The log also holds opaque reasoning (16 KB base64 / base64url blobs) that must come
 * back byte for byte, and a blob can hold `sk-` or `hf_` by chance. So each prefixed shape needs:
 * - a boundary before it: start of text, or a character outside base64/base64url (`=` counts as
 *   a boundary because it only ever ends a blob; `\n` written as an escape also counts);
 * - a boundary after it, for the same alphabet, and a maximum length: a blob that happens to start
 *   with a prefix runs on past the shape's longest form and does not match.
 * Rules run in order; specific prefixes (sk-ant-, sk-or-) come before generic ones (sk-), token
 * shapes before context rules, which then skip text already replaced (`[` ends their classes, or
 * they refuse a value starting `[redacted:`). Key-named values (`DB_PASSWORD=...`) come last,
 * from redact-assignments.ts.
 */
import {
  BARE_ASSIGNMENT, ENV_ASSIGNMENT, QUOTED_ASSIGNMENT, acceptBare, acceptEnv, acceptQuoted, assignedKind, assignmentAnchor, cutBare,
  type Groups,
} from './redact-assignments.js';

export interface Rule {
  kind: string;
  /**
   * The rule can match only text holding one of these literals. redact.ts finds every rule's
   * literals in one pass over the text (needles.ts), so most rules cost nothing on most text.
   */
  needles?: readonly string[];
  /**
   * Literals in lower case, found in any ASCII letter case, of which the text must hold one (as
   * `needles`, which it may have too): for a rule whose regex has the `i` flag and no `u`, a word
   * every match spells (`cookie`, the key words), so the rule's pre-check does not scan text
   * without it.
   */
  caseless?: readonly string[];
  /** A further pre-check, run when the needles (if any) are there, before the regex. */
  anchor?: (text: string) => boolean;
  /** Global regex; the named group `secret` is replaced, an optional group `pre` is kept. */
  re: RegExp;
  /**
   * A second look at the secret for shapes a word could also take (e.g. `sk-learn-...`), given
   * the named groups and the two characters before the match.
   */
  accept?: (secret: string, groups: Groups, before: string) => boolean;
  /** The kind when it depends on the match (`password` or `secret` by the key's name). */
  kindOf?: (groups: Groups) => string;
  /** How many characters of `secret` are the secret; the rest is kept after the marker. */
  cut?: (secret: string, groups: Groups) => number;
}

/** `://` also counts: a token as a URL's user (`https://ghp_...@github.com`) never sits in a blob. */
const LEAD = String.raw`(?:(?<=\\[nrt])|(?<=:\/\/)|(?<![A-Za-z0-9+/_\-]))`;
const TAIL = String.raw`(?![A-Za-z0-9+/=_\-])`;
/** For dotted shapes (JWT, discord): a further segment continues the token, a lone dot ends a sentence. */
const DOT_TAIL = String.raw`(?!\.?[A-Za-z0-9+/=_\-])`;

const hasDigit = (s: string): boolean => /[0-9]/.test(s);
const hasUpper = (s: string): boolean => /[A-Z]/.test(s);
const hasLower = (s: string): boolean => /[a-z]/.test(s);
/** Random keys mix digits and both cases; words and identifiers rarely do. */
const mixed = (s: string): boolean => hasDigit(s) && hasUpper(s) && hasLower(s);
const digitAndLetter = (s: string): boolean => hasDigit(s) && /[A-Za-z]/.test(s);
/** The part of a discord token between its dots. */
const DISCORD_MIDDLE = /\.[A-Za-z0-9_-]{6}\./;
/** Every key word of the key-named rules (redact-assignments.ts, KEYWORD) spells one of these. */
const KEY_WORDS = ['pass', 'pwd', 'secret', 'token', 'key'];

function matches(re: RegExp): (text: string) => boolean {
  return (text) => re.test(text);
}

/**
 * A shape that starts with a fixed prefix: boundary, the whole token as `secret`, boundary. The
 * pre-checks are the prefix, then the body alone: a regex that opens with a literal is searched for
 * fast, where one that opens with the boundary's lookbehind is tried at every position, and a
 * blob holds a prefix (`SK`, `AKIA`) far more often than the whole body after it.
 */
function prefixed(kind: string, needles: string[], body: string, accept?: (s: string) => boolean): Rule {
  const bodyRe = new RegExp(body);
  const rule: Rule = { kind, needles, anchor: (text) => bodyRe.test(text), re: new RegExp(`${LEAD}(?<secret>${body})${TAIL}`, 'g') };
  if (accept !== undefined) rule.accept = accept;
  return rule;
}

/** A discord token's first segment is the base64 of the bot's numeric id. */
function discordId(secret: string): boolean {
  const first = secret.slice(0, secret.indexOf('.'));
  const decoded = Buffer.from(first, 'base64url').toString('latin1');
  return /^[0-9]{17,20}$/.test(decoded);
}

export const RULES: readonly Rule[] = [
  {
    kind: 'private_key',
    needles: ['PRIVATE KEY'],
    // Through the END line; an unterminated block (truncated output) through its armor headers
    // (PGP's `Version: ...`) and base64 lines. The search for END stops at another BEGIN, so a
    // text of many headers without an END costs one scan, not one scan per header.
    re: /(?<secret>-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:(?:[^-]|-(?!----BEGIN))*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?:(?:\r?\n|(?:\\r)?\\n)[A-Za-z][A-Za-z-]{0,30}: [^\r\n\\]*)*(?:[A-Za-z0-9+/=]|\r?\n|\\n)*))/g,
  },
  {
    kind: 'slack_webhook',
    needles: ['hooks.slack.com'],
    re: /(?<pre>https?:\/\/hooks\.slack\.com\/)(?<secret>(?:services|workflows|triggers)\/[A-Za-z0-9_/-]{8,})/g,
  },
  {
    kind: 'discord_webhook',
    needles: ['/api/webhooks/'],
    re: /(?<pre>https?:\/\/(?:[a-z]+\.)?discord(?:app)?\.com\/api\/webhooks\/[0-9]{15,22}\/)(?<secret>[A-Za-z0-9_-]{60,100})/g,
  },
  prefixed('anthropic', ['sk-ant-'], String.raw`sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_\-]{32,300}`),
  prefixed('openrouter', ['sk-or-'], String.raw`sk-or-v[0-9]{1,2}-[A-Za-z0-9]{32,128}`),
  // DeepSeek (and others on OpenAI's shape) issue `sk-` and 32 lowercase hex.
  prefixed('openai', ['sk-'], String.raw`sk-(?!ant-|or-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,300}`, (s) => mixed(s) || /^sk-[0-9a-f]{32}$/.test(s) && digitAndLetter(s.slice(3))),
  prefixed('google_api_key', ['AIza'], String.raw`AIza[0-9A-Za-z_\-]{35}`),
  // Dotted shapes stop before a sentence's full stop: a dot only joins segments.
  prefixed('google_oauth', ['ya29.'], String.raw`ya29\.[0-9A-Za-z_\-]{20,4096}(?:\.[0-9A-Za-z_\-]+){0,3}`),
  prefixed('aws_access_key_id', ['AKIA', 'ASIA', 'ABIA', 'ACCA'], '(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}'),
  {
    kind: 'aws_secret_access_key',
    caseless: ['secret'],
    anchor: matches(/secret_?access_?key/i),
    re: /(?<pre>(?:(?<=\\[nrt])|(?<![A-Za-z0-9]))(?:aws_?)?secret_?access_?key\\?["']?\s*[:=]\s*\\?["']?)(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
  },
  prefixed(
    'github',
    ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
    String.raw`(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`,
  ),
  prefixed('gitlab', ['glpat-'], String.raw`glpat-[A-Za-z0-9_\-]{20,64}(?:\.[A-Za-z0-9_\-]+){0,3}`),
  prefixed('slack', ['xox', 'xapp-'], String.raw`(?:xox[abposr]|xapp)-[A-Za-z0-9\-]{10,250}`, hasDigit),
  prefixed(
    'stripe',
    ['_live_', '_test_', 'whsec_'],
    '(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}|whsec_[A-Za-z0-9]{24,128})',
  ),
  prefixed('npm', ['npm_'], 'npm_[A-Za-z0-9]{36}'),
  prefixed('huggingface', ['hf_'], 'hf_[A-Za-z0-9]{30,64}', (s) => hasUpper(s) && hasLower(s.slice(3))),
  prefixed('groq', ['gsk_'], 'gsk_[A-Za-z0-9]{48,52}'),
  prefixed('xai', ['xai-'], 'xai-[A-Za-z0-9]{70,100}'),
  prefixed('cerebras', ['csk-'], 'csk-[A-Za-z0-9]{40,64}', hasDigit),
  prefixed('digitalocean', ['_v1_'], 'do[opr]_v1_[a-f0-9]{64}'),
  prefixed('sendgrid', ['SG.'], String.raw`SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}`),
  prefixed('twilio', ['SK'], 'SK[0-9a-fA-F]{32}', hasDigit),
  prefixed('pypi', ['pypi-AgEI'], String.raw`pypi-AgEI[A-Za-z0-9_\-]{50,1000}`),
  prefixed('docker', ['dckr_pat_'], String.raw`dckr_pat_[A-Za-z0-9_\-]{20,64}`),
  prefixed('shopify', ['shp'], 'shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}'),
  prefixed('google_oauth_secret', ['GOCSPX-'], String.raw`GOCSPX-[A-Za-z0-9_\-]{28}`),
  prefixed('heroku', ['HRKU-'], String.raw`HRKU-AA[A-Za-z0-9_\-]{58}`),
  prefixed('square', ['sq0', 'EAAA'], String.raw`(?:sq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,43}|EAAA[A-Za-z0-9_\-]{60})`, digitAndLetter),
  prefixed('databricks', ['dapi'], 'dapi[a-f0-9]{32}(?:-[0-9])?', (s) => hasDigit(s.slice(4))),
  prefixed('doppler', ['dp.'], String.raw`dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_\-]{2,35}\.)?[A-Za-z0-9]{40,44}`),
  prefixed('vault', ['hvs.', 'hvb.', 'hvr.'], String.raw`hv[sbr]\.[A-Za-z0-9_\-]{24,300}`, (s) => mixed(s.slice(4))),
  prefixed('pulumi', ['pul-'], 'pul-[a-f0-9]{40}'),
  prefixed('terraform', ['.atlasv1.'], String.raw`[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}`),
  prefixed('linear', ['lin_'], 'lin_(?:api|oauth)_[A-Za-z0-9]{40}'),
  prefixed('notion', ['ntn_', 'secret_'], '(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})', mixed),
  prefixed('supabase', ['sb_secret_', 'sbp_'], String.raw`(?:sb_secret_[A-Za-z0-9_\-]{31,64}|sbp_(?:v0_)?[a-f0-9]{40})`),
  prefixed('replicate', ['r8_'], 'r8_[A-Za-z0-9]{37}', (s) => digitAndLetter(s.slice(3))),
  prefixed('fireworks', ['fw_'], 'fw_[A-Za-z0-9]{20,40}', (s) => mixed(s.slice(3))),
  // Shapes read from secretlint's recommended preset (docs/decisions.md, Compared with a maintained rule set).
  prefixed('1password', ['ops_ey'], 'ops_ey[A-Za-z0-9+/=]{100,1280}'),
  prefixed('grafana', ['glc_', 'glsa_'], '(?:glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})'),
  prefixed('vercel', ['vcp_', 'vci_', 'vca_', 'vcr_', 'vck_'], 'vc[piark]_[A-Za-z0-9]{20,60}', (s) => mixed(s.slice(4))),
  prefixed('figma', ['figd_'], String.raw`figd_[A-Za-z0-9_\-]{40,200}`),
  prefixed('cloudflare', ['cfk_', 'cfut_', 'cfat_'], '(?:cfk|cfut|cfat)_[A-Za-z0-9]{40}[0-9a-f]{8}'),
  prefixed('tailscale', ['tskey-'], String.raw`tskey-[a-z]{2,20}-[0-9A-Za-z_]{8,40}-[0-9A-Za-z_]{16,60}`),
  prefixed('mailgun', ['key-'], 'key-[a-f0-9]{32}', (s) => digitAndLetter(s.slice(4))),
  {
    // Mailgun's newer keys: 32 hex, then two groups of 8 (a UUID is 8-4-4-4-12).
    kind: 'mailgun',
    // The pre-check leads with `-`, a literal the regex engine searches for fast; `[0-9a-f]{32}`
    // first was tried at every position.
    anchor: (text) => text.includes('-') && /-[0-9a-f]{8}-[0-9a-f]{8}/.test(text),
    re: new RegExp(String.raw`${LEAD}(?<secret>[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})${TAIL}`, 'g'),
  },
  {
    kind: 'telegram',
    needles: [':AA'],
    // Also right after `bot`, as in https://api.telegram.org/bot<token>/getMe.
    // The tail may be `/` (a URL path): `:` never occurs in base64, so no blob can hold the shape.
    re: new RegExp(String.raw`(?:(?<=bot)|${LEAD})(?<secret>[0-9]{8,10}:AA[A-Za-z0-9_\-]{33})(?![A-Za-z0-9_\-])`, 'g'),
  },
  {
    kind: 'discord',
    // The dot first: a text without one (most prose, every hex digest) is not scanned by the regex.
    anchor: (text) => text.includes('.') && DISCORD_MIDDLE.test(text),
    re: new RegExp(String.raw`${LEAD}(?<secret>[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40})${DOT_TAIL}`, 'g'),
    accept: discordId,
  },
  {
    kind: 'jwt',
    needles: ['eyJ'],
    re: new RegExp(String.raw`${LEAD}(?<secret>eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*\.[A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+){0,2})${DOT_TAIL}`, 'g'),
  },
  {
    kind: 'bearer',
    needles: ['Bearer', 'bearer', 'BEARER'],
    re: /(?<pre>(?:(?<=\\[nrt])|(?<![A-Za-z0-9_-]))(?:Bearer|bearer|BEARER)\s+)(?<secret>[A-Za-z0-9._~+/-]{16,}=*)/g,
    accept: (s) => hasDigit(s) || (hasUpper(s) && hasLower(s)),
  },
  {
    kind: 'basic_auth',
    caseless: ['authorization'],
    re: /(?<pre>(?:(?<=\\[nrt])|(?<![A-Za-z0-9_-]))(?:proxy-)?authorization\\?["']?\s*[:=]\s*\\?["']?basic\s+)(?<secret>[A-Za-z0-9+/]{8,}=*)/gi,
  },
  {
    // `Authorization: <token>` or `Authorization: token <token>`; Bearer and Basic are done above.
    kind: 'authorization',
    caseless: ['authorization'],
    re: /(?<pre>(?:(?<=\\[nrt])|(?<![A-Za-z0-9_-]))(?:proxy-)?authorization\\?["']?\s*[:=]\s*\\?["']?(?:token\s+)?)(?<secret>[A-Za-z0-9._~+/-]{8,}=*)/gi,
    accept: digitAndLetter,
  },
  {
    kind: 'api_key',
    caseless: ['api'],
    anchor: matches(/api-?_?key/i),
    re: /(?<pre>(?:(?<=\\[nrt])|(?<![A-Za-z0-9]))(?:x-goog-api-key|x-api-key|api[_-]?key)\\?["']?\s*[:=]\s*\\?["']?)(?<secret>[A-Za-z0-9._~+/-]{16,})/gi,
    accept: digitAndLetter,
  },
  {
    // scheme://user:password@host: only the password goes.
    kind: 'url_password',
    needles: ['://'],
    anchor: matches(/:\/\/[^\s/?#@]*:[^\s/?#@]+@/),
    re: /(?<pre>\b[A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/[^\s:/?#@[\]"'<>]{0,256}:)(?!\[redacted:)(?<secret>[^\s/?#@[\]"'<>]{1,256})(?=@)/g,
  },
  {
    // `Cookie: a=b; c=d` and `Set-Cookie: a=b; Path=/`: the whole value (every cookie, every
    // attribute) goes; a value must start `name=`, so "the Cookie: header" in prose stays.
    kind: 'cookie',
    caseless: ['cookie'],
    re: /(?<pre>(?:(?<=\\[nrt])|(?<![A-Za-z0-9_-]))(?:(?:set-)?cookie\\?["']?[ \t]*:[ \t]*\\?["']?|--cookie[ =]["']?))(?<secret>(?!\[redacted:)[^\s=;,"'\\]{1,256}=[^\r\n"'\\]{0,4096})/gi,
  },
  {
    // curl -u user:password (only after `curl`: `docker run -u 1000:1000` is a user and group).
    kind: 'password',
    needles: ['curl'],
    re: /(?<pre>\bcurl\b[^\r\n]{0,2048}?[ \t](?:-u|--user)[ =]["']?[^\s:"']{1,128}:)(?<secret>(?!\[redacted:)[^\s"']{1,256})/g,
  },
  {
    // .netrc: `machine HOST login USER password SECRET`.
    kind: 'password',
    needles: ['machine'],
    re: /(?<pre>\bmachine[ \t]+\S{1,253}[ \t\r\n]+login[ \t]+\S{1,128}[ \t\r\n]+password[ \t]+)(?<secret>(?!\[redacted:)\S{1,256})/g,
  },
  { kind: 'password', caseless: KEY_WORDS, anchor: assignmentAnchor, re: ENV_ASSIGNMENT, accept: acceptEnv, kindOf: assignedKind },
  { kind: 'password', caseless: KEY_WORDS, anchor: assignmentAnchor, re: QUOTED_ASSIGNMENT, accept: acceptQuoted, kindOf: assignedKind },
  { kind: 'password', caseless: KEY_WORDS, anchor: assignmentAnchor, re: BARE_ASSIGNMENT, accept: acceptBare, kindOf: assignedKind, cut: cutBare },
];

/** Object keys whose string value is a credential whatever its shape (headers kept as JSON). */
export const SECRET_KEYS: ReadonlyMap<string, string> = new Map([
  ['authorization', 'authorization'],
  ['proxy-authorization', 'authorization'],
  ['x-api-key', 'api_key'],
  ['x-goog-api-key', 'api_key'],
  ['api-key', 'api_key'],
  ['api_key', 'api_key'],
  ['apikey', 'api_key'],
  ['cookie', 'cookie'],
  ['set-cookie', 'cookie'],
  ['x-auth-token', 'secret'],
]);
