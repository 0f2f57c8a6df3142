/**
 * The zod schema of config.toml. Every table is strict: an unknown key is an error that lists
 * the keys the table knows. Messages read as "expected ..."; `format-issues.ts` adds the key path,
 * the file and what was found. Defaults are applied by `build.ts`, not here, so that "unset" stays
 * visible (a water mark left unset follows the route's context).
 */
import * as z from 'zod';
import { PRESET_NAMES, type PresetName } from './presets.js';

/** A strict table whose unknown-key message names the keys it knows. */
function table<T extends z.ZodRawShape>(shape: T) {
  const known = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown key; this table takes: ${known}` : undefined),
  });
}

function positiveInt() {
  const error = 'expected a positive integer';
  return z.int({ error }).positive({ error });
}

function nonNegativeInt() {
  const error = 'expected an integer >= 0';
  return z.int({ error }).nonnegative({ error });
}

function nonNegativeNumber() {
  const error = 'expected a number >= 0';
  return z.number({ error }).nonnegative({ error });
}

function text(what = 'a non-empty string') {
  return z.string({ error: `expected ${what}` }).min(1, { error: `expected ${what}` });
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `expected one of ${values.map((v) => JSON.stringify(v)).join(', ')}` });
}

function bool() {
  return z.boolean({ error: 'expected true or false' });
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const headerName = () => text('a header name').regex(HEADER_NAME, { error: 'expected a header name (letters, digits, - and _)' });

// "host:port", "[v6]:port" or ":port"; the port is checked by build.ts with the rest of the values.
const LISTEN = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]*):(\d{1,5})$/;

const url = () =>
  text('an http(s) URL').refine((value) => {
    try {
      const parsed = new URL(value);
      return parsed.protocol === 'http:' || parsed.protocol === 'https:';
    } catch {
      return false;
    }
  }, { error: 'expected an http(s) URL' });

/** Provider names appear in `provider/model` route names, so they may not hold a slash. */
export const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const timeoutsSchema = table({
  connect_ms: positiveInt().optional(),
  headers_ms: positiveInt().optional(),
  body_ms: positiveInt().optional(),
  /** The whole upstream part of one request: every attempt, the waits between them and the reply. */
  deadline_ms: positiveInt().optional(),
});

export const providerSchema = table({
  preset: oneOf(PRESET_NAMES as [PresetName, ...PresetName[]]),
  base_url: url().optional(),
  /** Absent: the preset's variable; "" reads none, so the client's bearer is passed through. */
  api_key_env: z.string({ error: 'expected an environment variable name' }).optional(),
  /** Allowed, discouraged: a key written in a file travels with it. */
  api_key: text('an API key').optional(),
  headers: z.record(headerName(), z.string({ error: 'expected a string header value' })).optional(),
  timeouts: timeoutsSchema.optional(),
  codex_headers: bool().optional(),
});

/** Each price overrides the catalogue's; together they must name input and output (build.ts). */
export const priceSchema = table({
  input: nonNegativeNumber().optional(),
  cache_read: nonNegativeNumber().optional(),
  cache_write: nonNegativeNumber().optional(),
  cache_write_1h: nonNegativeNumber().optional(),
  output: nonNegativeNumber().optional(),
  /** USD per million token-hours an explicit context cache is stored (Gemini); the catalogue has none. */
  cache_storage: nonNegativeNumber().optional(),
});

export const modelSchema = table({
  provider: text('a provider name'),
  model: text('an upstream model id'),
  context: positiveInt().optional(),
  output_reserve: positiveInt().optional(),
  high_water: positiveInt().optional(),
  low_water: positiveInt().optional(),
  max_result_tokens: positiveInt().optional(),
  cache_key: oneOf(['session', 'header', 'off']).optional(),
  cache_control: oneOf(['off', 'ephemeral', '1h']).optional(),
  cache_control_at: oneOf(['top-level', 'breakpoints']).optional(),
  /** OpenAI GPT-5.6+ `prompt_cache_breakpoint` markers; `auto`: where the model and the upstream take them. */
  prompt_cache_breakpoints: oneOf(['auto', 'off', 'implicit', 'explicit']).optional(),
  /** Gemini's wire: `explicit` also holds each session's long stable prefix in a `cachedContents` entry. */
  gemini_cache: oneOf(['implicit', 'explicit']).optional(),
  reasoning: oneOf(['reasoning_content', 'reasoning', 'none']).optional(),
  /** openai-chat: the field the output limit goes in; absent: the preset's rule (docs/wires.md). */
  max_tokens_field: oneOf(['max_tokens', 'max_completion_tokens']).optional(),
  system: oneOf(['follow', 'append']).optional(),
  client_drops: oneOf(['follow', 'absorb']).optional(),
  price: priceSchema.optional(),
  keep_reasoning: bool().optional(),
  /** anthropic-messages: a signed thinking block after an edit of its prefix; absent: by model (docs/decisions/0009). */
  stale_thinking: oneOf(['drop_block', 'strip']).optional(),
  thinking: oneOf(['enabled', 'disabled', 'adaptive']).optional(),
  /** Ollama's keep_alive: a duration ("30m", "1h") or seconds (-1 keeps the model loaded). */
  keep_alive: z.union([text('a duration such as "30m"'), z.int()], { error: 'expected a duration such as "30m", or a whole number of seconds' }).optional(),
  /** Retries of a failed call before the first byte; absent: `[upstream] retries`. */
  retries: nonNegativeInt().optional(),
  /** Other providers serving the same model id, tried in order once the retries are spent (docs/faults.md). */
  fallback: z.array(text('a provider name'), { error: 'expected a list of provider names' }).optional(),
});

export const upstreamSchema = table({
  retries: nonNegativeInt().optional(),
  retry_base_ms: positiveInt().optional(),
  retry_max_delay_ms: positiveInt().optional(),
  max_reply_bytes: positiveInt().optional(),
});

export const windowSchema = table({
  output_reserve: positiveInt().optional(),
  context: positiveInt().optional(),
  high_water: positiveInt().optional(),
  low_water: positiveInt().optional(),
  max_result_tokens: positiveInt().optional(),
  protected_entries: nonNegativeInt().optional(),
  volatile_lines: z.array(text('a regular expression'), { error: 'expected a list of regular expressions' }).optional(),
  /** Result caps by tool name, first match wins (docs/decisions.md, Folds and per-tool caps). */
  tool_caps: z.array(table({ tools: text('a regular expression'), max_result_tokens: positiveInt() }), { error: 'expected a list of { tools, max_result_tokens } tables' }).optional(),
  /** Fold superseded tool results at trims (default true). */
  folds: bool().optional(),
});

export const sessionsSchema = table({
  id_headers: z.array(headerName(), { error: 'expected a list of header names' }).optional(),
  id_body_fields: z.array(text('a field name'), { error: 'expected a list of field names' }).optional(),
  idle_minutes: z.number({ error: 'expected a number of minutes > 0' }).positive({ error: 'expected a number of minutes > 0' }).optional(),
  max_live: z.number({ error: 'expected a whole number of sessions >= 0' }).int({ error: 'expected a whole number of sessions >= 0' }).min(0, { error: 'expected a whole number of sessions >= 0' }).optional(),
  max_live_mb: z.number({ error: 'expected a number of MiB > 0' }).positive({ error: 'expected a number of MiB > 0' }).optional(),
  locate_days: z.number({ error: 'expected a number of days >= 0 (0: always)' }).min(0, { error: 'expected a number of days >= 0 (0: always)' }).optional(),
  wire_cache_mb: z.number({ error: 'expected a number of MiB >= 0' }).min(0, { error: 'expected a number of MiB >= 0' }).optional(),
  durability: z.enum(['fsync', 'write'], { error: 'expected "fsync" or "write"' }).optional(),
});

/** Where the log lives (docs/scaling.md): the JSONL files, or PostgreSQL shared by replicas. */
export const storeSchema = table({
  kind: z.enum(['files', 'postgres'], { error: 'expected "files" or "postgres"' }).optional(),
  url_env: text('an environment variable name').optional(),
  pool: positiveInt().optional(),
  lock_wait_seconds: z.number({ error: 'expected a number of seconds > 0' }).positive({ error: 'expected a number of seconds > 0' }).optional(),
  connect_timeout_seconds: z.number({ error: 'expected a number of seconds > 0' }).positive({ error: 'expected a number of seconds > 0' }).optional(),
  key_refresh_seconds: z.number({ error: 'expected a number of seconds > 0' }).positive({ error: 'expected a number of seconds > 0' }).optional(),
  startup_wait_seconds: z.number({ error: 'expected a number of seconds >= 0' }).min(0, { error: 'expected a number of seconds >= 0' }).optional(),
});

export const configSchema = table({
  listen: text('"host:port"').regex(LISTEN, { error: 'expected "host:port", e.g. "127.0.0.1:8787"' }).optional(),
  data_dir: text('a directory path').optional(),
  admin_key_env: text('an environment variable name').optional(),
  admin_key: text('an admin key').optional(),
  body_limit: positiveInt().optional(),
  drain_seconds: z.number({ error: 'expected a number of seconds >= 0' }).min(0, { error: 'expected a number of seconds >= 0' }).optional(),
  allowed_origins: z.array(text('an origin, e.g. "http://localhost:3000"'), { error: 'expected a list of origins' }).optional(),
  allowed_hosts: z.array(text('a host name'), { error: 'expected a list of host names' }).optional(),
  providers: z.record(
    text('a provider name').regex(PROVIDER_NAME, { error: 'expected a provider name of letters, digits, ".", "_" and "-" (no "/")' }),
    providerSchema,
  ).optional(),
  models: z.record(text('a model name'), modelSchema).optional(),
  window: windowSchema.optional(),
  sessions: sessionsSchema.optional(),
  store: storeSchema.optional(),
  upstream: upstreamSchema.optional(),
  auth: table({
    open: z.boolean({ error: 'expected true or false' }).optional(),
    keys: z.array(table({
      name: text('a client name').regex(/^[A-Za-z0-9._-]{1,64}$/, { error: 'expected a name of letters, digits, ".", "_" and "-" (a metrics label)' }),
      key_env: text('an environment variable name').optional(),
      sha256: text('a SHA-256 in hex').regex(/^[0-9a-fA-F]{64}$/, { error: 'expected 64 hex digits' }).optional(),
      models: z.array(text('a model name'), { error: 'expected a list of model names' }).optional(),
      budget_usd: nonNegativeNumber().optional(),
      budget_period: oneOf(['day', 'month', 'total']).optional(),
      requests_per_minute: positiveInt().optional(),
      admin: bool().optional(),
    }), { error: 'expected a list of keys' }).optional(),
  }).optional(),
  tracing: table({
    endpoint: url(),
    service_name: text('a service name').optional(),
    sample_ratio: z.number({ error: 'expected a number from 0 to 1' }).min(0, { error: 'expected a number from 0 to 1' }).max(1, { error: 'expected a number from 0 to 1' }).optional(),
    capture_content: bool().optional(),
  }).optional(),
  log: table({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { error: 'expected one of fatal, error, warn, info, debug, trace, silent' }).optional(),
    format: z.enum(['json', 'text'], { error: 'expected "json" or "text"' }).optional(),
  }).optional(),
});

export type ConfigFile = z.infer<typeof configSchema>;
export type ProviderEntry = z.infer<typeof providerSchema>;
export type ModelEntry = z.infer<typeof modelSchema>;
export type WindowEntry = z.infer<typeof windowSchema>;
