/**
 * Credentials named by their key rather than their shape: `DB_PASSWORD=...`, `"password": "..."`,
 * `client_secret=...`, `X-Auth-Token: ...`, `AccountKey=...;`. A vendor prefix says "secret" by
 * itself; here the key says it and the value has to look like a literal, not code or a placeholder
 * (docs/decisions.md, Redaction by shape, never by entropy; the rules for values are listed there).
 *
 * One key grammar serves three places, so they agree: a quoted value in text, a bare value in text,
 * and a string member of a JSON object whose key is such a name (redact.ts).
 */

/**
 * The key words, case-insensitive: `password`, `DB_PASS`, `client_secret`, `SessionToken`,
 * `Ocp-Apim-Subscription-Key`, `SECRET_KEY_BASE`. The match starts at the word, not at the key's
 * first character, and where the word may start is checked in code (`wordStart`): a regex of a
 * few case-insensitive words is fast to scan, where a key grammar tried at every identifier, or a
 * lookbehind at every position, made a megabyte of `password=` or of prose cost seconds.
 */
const KEYWORD = String.raw`(?<kw>pass(?:word|wd|phrase)?|pwd|secret(?:[_-]?key(?:[_-]?base)?)?|token|(?:api|access|subscription|account|master|auth|signing|encryption)[_-]?key)`;
/** `=`, `:`, `:=`, `=>`; never `==`, `=~` or `::`. A key's own closing quote (and `]`) may come first. */
const SEP = String.raw`(?:\\?["'\x60]\]?)?(?<sp>[ \t]{0,4})(?<sep>:=|=>|=(?![=~])|:(?!:))[ \t]{0,4}`;
const MAX = 4096;
/** A value never starts as a reference or a structure: `$X`, `<X>`, `%(x)s`, `{`, `[`, `(`. */
const NOT_A_VALUE = String.raw`(?![\[$<%*{"'\x60(\\])`;

/**
 * `"password": "hunter2"`, `password = 'hunter2'`, `\"token\": \"...\"` in double-encoded JSON.
 * The value is taken whole (a lookahead capture, so no backtracking into it), then must be closed.
 */
export const QUOTED_ASSIGNMENT = new RegExp(
  String.raw`(?<pre>${KEYWORD}${SEP}(?<q>\\?["'\x60]))(?!\[redacted:)(?=(?<secret>[^\s"'\x60\\]{1,${MAX}}))\k<secret>(?=\k<q>)`,
  'gi',
);

/**
 * `DB_PASSWORD=hunter2` in a .env or a shell, `POSTGRES_PASSWORD: hunter2` in YAML (the key in
 * capitals, checked in code): the value runs to whitespace, a quote or `\`, whatever it holds
 * (`&`, `;`, `)`), as a .env value does.
 */
export const ENV_ASSIGNMENT = new RegExp(
  String.raw`(?<pre>${KEYWORD}(?:\\?["'\x60])?(?<sep>=|:[ \t]{1,4}))${NOT_A_VALUE}(?=(?<secret>[^\s"'\x60\\]{1,${MAX}}))\k<secret>`,
  'gi',
);

/**
 * `password: hunter2`, `client_secret=...&grant_type=...`, `Password=...;` in code, YAML, query
 * strings and connection strings: the run up to whitespace, a quote, `\` or a query string's next
 * `&key=`; `cutBare` then gives back closing punctuation (`hunter2,` keeps its comma).
 */
export const BARE_ASSIGNMENT = new RegExp(
  String.raw`(?<pre>${KEYWORD}${SEP})${NOT_A_VALUE}` +
    String.raw`(?=(?<secret>(?:[^\s"'\x60\\&]|&(?![A-Za-z0-9_.\-]{1,40}=)){1,${MAX}}))\k<secret>`,
  'gi',
);

/** A JSON object's key ends with a key word; the member's string value is judged as quoted. */
const KEY_END = new RegExp(String.raw`${KEYWORD}$`, 'i');

/** A key word's last letters right before a separator (`DB_PASSWORD=`, `"token": `). */
const KEY_TAIL = /(?:word|wd|phrase|pass|pwd|secret|token|key|base)\\?["'\x60]?\]?[ \t]*$/i;
const SEPARATOR = /[:=]/g;

/**
 * The cheap pre-check, run on every string: looks only behind each `:` and `=`. A base64 blob has
 * none but its padding, so it costs one scan for two characters; text with many separators (JSON,
 * code) falls back to one scan for the key words, which past ~16 separators costs less.
 */
export function assignmentAnchor(text: string): boolean {
  SEPARATOR.lastIndex = 0;
  let seen = 0;
  for (let m = SEPARATOR.exec(text); m !== null; m = SEPARATOR.exec(text)) {
    if (++seen > 16) return /(?:word|wd|phrase|pass|pwd|secret|token|key|base)\\?["'\x60]?\]?[ \t]*[:=]/i.test(text);
    if (KEY_TAIL.test(text.slice(Math.max(0, m.index - 16), m.index))) return true;
  }
  return false;
}

export type Groups = Record<string, string | undefined>;

const isShort = (kw: string): boolean => kw.length <= 4 && /^(?:pass|pwd)$/i.test(kw);
const isPassword = (kw: string): boolean => /^(?:pass|pwd)/i.test(kw);

/**
 * Whether the word starts a key's last part, given the two characters before it: after a
 * non-alphanumeric (`DB_PASSWORD`, `X-Auth-Token`, `"password"`, an escaped `\n`), at a camelCase
 * hump (`dbPassword`, `SessionToken`), or `PASSWORD` after capitals (`PGPASSWORD`). `pass` and
 * `pwd` only after `_`, `.` or `-` (`DB_PASS`, not `bypass` or `PWD=/home/me`).
 */
export function wordStart(kw: string, before: string): boolean {
  const prev = before.slice(-1);
  if (isShort(kw)) return /[_.\-]/.test(prev);
  if (prev === '' || !/[A-Za-z0-9]/.test(prev) || /\\[nrt]$/.test(before)) return true;
  if (/[a-z0-9]/.test(prev)) return /^[A-Z]/.test(kw);
  return kw === 'PASSWORD';
}

/** `password` for password-like keys, `secret` for the others (tokens, keys, secrets). */
export function assignedKind(groups: Groups): string {
  return isPassword(groups.kw ?? '') ? 'password' : 'secret';
}

/** Stand-ins for a value, not values: `${DB_PASSWORD}`, `<YOUR_API_KEY>`, `sk-...`, `****`, `None`. */
const PLACEHOLDER =
  /^(?:\$|<|\{\{|%\(|%[A-Za-z_]+%|\[redacted:)|\.\.\.|\u2026|^\*+$|^x+$|^(?:your|insert|enter|replace)(?:[-_ ]|$)|[-_]here$|^(?:null|none|nil|undefined|true|false|empty|string|str|bool|boolean|int|number|any|required|optional|placeholder|example|redacted|hidden|secret|password|token)$/i;

/** Code, not a value: a member path (`self.token`, `std::env`) or a call, index or generic (`getPassword(`, `Option<String>`). */
const MEMBER_PATH = /^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+$/;
const CALL = /^[A-Za-z_$][\w$.:>-]*[(<[{]/;
const STRONG_SYMBOL = /[!@#%^&*+=?~]/;
const hasDigit = (s: string): boolean => /[0-9]/.test(s);
const hasLetter = (s: string): boolean => /[A-Za-z]/.test(s);

/**
 * How sure the context makes us, most to least: an environment line (`UPPER_KEY=value`, no
 * spaces, or `UPPER_KEY: value`), a quoted literal, a bare value in code or YAML (where
 * `password: string` is a type).
 */
type Context = 'env' | 'quoted' | 'bare';

function valueOk(password: boolean, value: string, context: Context): boolean {
  // A value a shape rule already cut (`postgres://u:[redacted:url_password]@h`) keeps the rest.
  if (PLACEHOLDER.test(value) || value.includes('[redacted:')) return false;
  if (context === 'env') return value.length >= (password ? 3 : 8) && !CALL.test(value);
  if (context === 'quoted') return password ? value.length >= 3 : value.length >= 8 && /[^A-Za-z]/.test(value);
  if (MEMBER_PATH.test(value) || CALL.test(value)) return false;
  return password
    ? value.length >= 3 && (hasDigit(value) || STRONG_SYMBOL.test(value))
    : value.length >= 8 && hasDigit(value) && hasLetter(value);
}

const isUpper = (kw: string): boolean => kw === kw.toUpperCase();

export function acceptQuoted(secret: string, groups: Groups, before: string): boolean {
  const kw = groups.kw ?? '';
  return wordStart(kw, before) && valueOk(isPassword(kw), secret, 'quoted');
}

export function acceptEnv(secret: string, groups: Groups, before: string): boolean {
  const kw = groups.kw ?? '';
  return isUpper(kw) && wordStart(kw, before) && valueOk(isPassword(kw), secret, 'env');
}

/** An environment-style key the env rule declined (a placeholder, too short) is declined here too. */
export function acceptBare(secret: string, groups: Groups, before: string): boolean {
  const kw = groups.kw ?? '';
  const env = isUpper(kw) && ((groups.sep === '=' && groups.sp === '') || groups.sep === ':');
  return wordStart(kw, before) && valueOk(isPassword(kw), secret, env ? 'env' : 'bare');
}

/** How much of a bare run is the value: `hunter2,` keeps its comma, `f(hunter2)` its parenthesis. */
export function cutBare(run: string): number {
  let end = run.length;
  while (end > 0 && ',;)}]'.includes(run[end - 1]!)) end--;
  return end;
}

/** The kind to redact a JSON member as, or undefined: `{"password": "hunter2"}` -> `password`. */
export function memberKind(key: string, value: string): string | undefined {
  if (key.length > 80 || value.length > MAX || /\s/.test(value)) return undefined;
  const m = KEY_END.exec(key);
  if (m === null) return undefined;
  const kw = m.groups!.kw!;
  if (!wordStart(kw, key.slice(Math.max(0, m.index - 2), m.index)) || !valueOk(isPassword(kw), value, 'quoted')) return undefined;
  return isPassword(kw) ? 'password' : 'secret';
}
