/**
 * From a validated config file (or the providers the environment implies) to a `Config`:
 * defaults applied, credentials read from the environment given, water marks checked. Every
 * problem is collected and thrown together as one ConfigError naming the file and each key.
 */
import { createHash } from 'node:crypto';
import type { ToolCap } from '../core/events.js';
import { resolve } from 'node:path';
import { ConfigError, keyPath, type ConfigProblem } from './format-issues.js';
import { describeConfig } from './describe.js';
import { presetOf } from './presets.js';
import type { ConfigFile, ModelEntry, ProviderEntry } from './schema.js';
import { providerRouteFigures, sizeRoute } from './provider-routes.js';
import { computeSizes, DEFAULT_PROTECTED_ENTRIES, fallbackContext } from './window-sizes.js';
import { Secret, type AuthConfig, type ClientKey, type Config, type ModelConfig, type ProviderConfig, type SessionsConfig, type TracingConfig, type UpstreamSettings, type WindowDefaults } from './types.js';

export type Env = Record<string, string | undefined>;

export interface Overrides {
  port?: number;
  host?: string;
  dataDir?: string;
  /** `serve --open`: serve beyond loopback without client keys. */
  open?: boolean;
}

export interface BuildContext {
  /** The file named in errors: as the user gave it, or `environment` for an env-only config. */
  file: string;
  fromFile: boolean;
  /** Relative paths in the file are taken from here (the file's directory, or the cwd). */
  baseDir: string;
  /** Relative override paths (command-line flags) are taken from here. */
  cwd: string;
  env: Env;
  overrides: Overrides;
  /** The catalogue's prices are those in force at this time (the time the config loads). */
  now: Date;
}

export const DEFAULT_LISTEN = '127.0.0.1:8787';
export const DEFAULT_BODY_LIMIT = 32 * 1024 * 1024;
export const DEFAULT_TIMEOUTS = { connect_ms: 10_000, headers_ms: 300_000, body_ms: 300_000, deadline_ms: 600_000 } as const;
/** docs/faults.md: two retries, waits from 0.5 s doubling, never above 8 s. */
export const DEFAULT_UPSTREAM: UpstreamSettings = { retries: 2, retryBaseMs: 500, retryMaxDelayMs: 8_000, maxReplyBytes: 64 * 1024 * 1024 };
/** docs/architecture.md section 5.1, in order. `user` alone never names a session. */
export const DEFAULT_ID_HEADERS = ['x-session-id', 'x-session-affinity', 'session_id', 'session-id', 'goose-session-id', 'x-claude-code-session-id'];
export const DEFAULT_ID_BODY_FIELDS = ['session_id', 'prompt_cache_key'];
export const DEFAULT_IDLE_MINUTES = 30;
/** Live sessions and the log bytes they may hold (docs/decisions.md, Memory follows live sessions). */
export const DEFAULT_MAX_LIVE = 256;
export const DEFAULT_MAX_LIVE_MB = 512;
/**
 * A stored session is found by a request that continues it for 30 days after its last request, as
 * OpenAI keeps a stored response for `previous_response_id`: no provider's cache outlives that,
 * and memory holds an entry per session found (docs/decisions/0023-stored-sessions-located-for-a-time.md).
 */
export const DEFAULT_LOCATE_DAYS = 30;
export const DEFAULT_WIRE_CACHE_MB = 4;
const SIM = 'sim';
/**
 * The default `[window] volatile_lines`: Claude Code's attribution line, with or without its
 * per-request nonce (`cch=...`), which otherwise changes the first bytes of every request, and Gemini
 * CLI's date line in its `<session_context>` block, which changes the first message of a conversation
 * resumed on another day (docs/inbound.md).
 */
export const DEFAULT_VOLATILE_LINES: readonly string[] = ['^x-anthropic-billing-header:', "^Today's date is .*\\(formatted according to the user's locale\\)\\.$"];

export function buildConfig(file: ConfigFile, ctx: BuildContext): Config {
  const problems: ConfigProblem[] = [];
  const warnings: string[] = [];

  const providers: Record<string, ProviderConfig> = {};
  const entries: Record<string, ProviderEntry> = { ...file.providers };
  if (!Object.hasOwn(entries, SIM)) entries[SIM] = { preset: 'sim' };
  for (const [name, entry] of Object.entries(entries)) {
    const provider = buildProvider(name, entry, ctx, problems, warnings);
    if (provider !== undefined) providers[name] = provider;
  }

  const window: WindowDefaults = {
    context: file.window?.context,
    output_reserve: file.window?.output_reserve,
    high_water: file.window?.high_water,
    low_water: file.window?.low_water,
    max_result_tokens: file.window?.max_result_tokens,
    protected_entries: file.window?.protected_entries ?? DEFAULT_PROTECTED_ENTRIES,
  };
  const defaults = computeSizes({}, window, fallbackContext(window));
  if (!defaults.ok) problems.push(...defaults.problems);
  const volatileLines = buildVolatileLines(file.window?.volatile_lines, problems);
  const toolCaps = buildToolCaps(file.window?.tool_caps, problems);

  const models: Record<string, ModelConfig> = {};
  for (const [name, entry] of Object.entries(file.models ?? {})) {
    const model = buildModel(name, entry, providers, entries, window, ctx.now, problems);
    if (model !== undefined) models[name] = model;
  }

  const listen = parseListen(file.listen ?? DEFAULT_LISTEN, ctx.overrides, problems);
  const adminKey = readAdminKey(file, ctx.file, ctx.env, problems, warnings);
  const auth = readAuth(file, ctx.env, ctx.overrides, problems);
  // A [window] value that fails on its own fails again for each model that inherits it: say it once.
  if (problems.length > 0 || !defaults.ok) throw new ConfigError(ctx.file, unique(problems));

  const dataDir = ctx.overrides.dataDir !== undefined
    ? resolve(ctx.cwd, ctx.overrides.dataDir)
    : resolve(ctx.baseDir, file.data_dir ?? 'data');
  const sessions: SessionsConfig = {
    idHeaders: (file.sessions?.id_headers ?? DEFAULT_ID_HEADERS).map((h) => h.toLowerCase()),
    idBodyFields: file.sessions?.id_body_fields ?? DEFAULT_ID_BODY_FIELDS,
    idleMinutes: file.sessions?.idle_minutes ?? DEFAULT_IDLE_MINUTES,
    maxLive: file.sessions?.max_live ?? DEFAULT_MAX_LIVE,
    maxLiveMb: file.sessions?.max_live_mb ?? DEFAULT_MAX_LIVE_MB,
    locateDays: file.sessions?.locate_days ?? DEFAULT_LOCATE_DAYS,
    wireCacheMb: file.sessions?.wire_cache_mb ?? DEFAULT_WIRE_CACHE_MB,
    durability: file.sessions?.durability ?? 'fsync',
  };
  const store = {
    kind: file.store?.kind ?? 'files',
    urlEnv: file.store?.url_env ?? 'PREFIX_PROXY_DATABASE_URL',
    pool: file.store?.pool ?? 20,
    lockWaitMs: (file.store?.lock_wait_seconds ?? 60) * 1000,
    connectTimeoutMs: (file.store?.connect_timeout_seconds ?? 5) * 1000,
    keyRefreshMs: (file.store?.key_refresh_seconds ?? 2) * 1000,
    startupWaitMs: (file.store?.startup_wait_seconds ?? 30) * 1000,
  } as const;
  const upstream: UpstreamSettings = {
    retries: file.upstream?.retries ?? DEFAULT_UPSTREAM.retries,
    retryBaseMs: file.upstream?.retry_base_ms ?? DEFAULT_UPSTREAM.retryBaseMs,
    retryMaxDelayMs: file.upstream?.retry_max_delay_ms ?? DEFAULT_UPSTREAM.retryMaxDelayMs,
    maxReplyBytes: file.upstream?.max_reply_bytes ?? DEFAULT_UPSTREAM.maxReplyBytes,
  };
  return {
    file: ctx.fromFile ? ctx.file : undefined,
    listen,
    dataDir,
    adminKey,
    bodyLimit: file.body_limit ?? DEFAULT_BODY_LIMIT,
    drainMs: (file.drain_seconds ?? 30) * 1000,
    auth,
    logLevel: file.log?.level ?? 'info',
    logFormat: file.log?.format ?? 'json',
    allowedOrigins: file.allowed_origins ?? [],
    allowedHosts: (file.allowed_hosts ?? []).map((h) => h.toLowerCase()),
    providers,
    models,
    window,
    volatileLines,
    toolCaps,
    folds: file.window?.folds ?? true,
    defaultSizes: defaults.sizes,
    providerRoutes: providerRouteFigures(providers, window, defaults.sizes, ctx.now),
    sessions,
    store,
    ...(file.tracing === undefined ? {} : { tracing: buildTracing(file.tracing) }),
    upstream,
    warnings,
    describe() {
      return describeConfig(this);
    },
  };
}

/** The endpoint may be the collector's base (`http://host:4318`) or its traces URL. */
function buildTracing(entry: NonNullable<ConfigFile['tracing']>): TracingConfig {
  const base = entry.endpoint.replace(/\/+$/, '');
  return {
    endpoint: base.endsWith('/v1/traces') ? base : `${base}/v1/traces`,
    serviceName: entry.service_name ?? 'prefix-proxy',
    sampleRatio: entry.sample_ratio ?? 1,
    captureContent: entry.capture_content ?? false,
  };
}

/** The patterns compiled once; one that is not a regular expression is a problem naming it. */
function buildVolatileLines(given: string[] | undefined, problems: ConfigProblem[]): Config['volatileLines'] {
  const sources = given ?? [...DEFAULT_VOLATILE_LINES];
  const patterns: RegExp[] = [];
  sources.forEach((source, i) => {
    try {
      patterns.push(new RegExp(source));
    } catch (err) {
      problems.push({ key: `window.volatile_lines[${i}]`, detail: `not a regular expression: ${(err as Error).message}` });
    }
  });
  return { sources, patterns };
}

/** Each pattern must compile (it is matched against a tool's whole name); kept as written, for the recipe. */
function buildToolCaps(given: ToolCap[] | undefined, problems: ConfigProblem[]): ToolCap[] {
  const caps = given ?? [];
  caps.forEach((c, i) => {
    try {
      new RegExp(`^(?:${c.tools})$`);
    } catch (err) {
      problems.push({ key: `window.tool_caps[${i}].tools`, detail: `not a regular expression: ${(err as Error).message}` });
    }
  });
  return caps.map((c) => ({ tools: c.tools, max_result_tokens: c.max_result_tokens }));
}

function buildProvider(name: string, entry: ProviderEntry, ctx: BuildContext, problems: ConfigProblem[], warnings: string[]): ProviderConfig | undefined {
  const preset = presetOf(entry.preset);
  const at = keyPath(['providers', name]);
  const hostVar = preset.baseUrlEnv;
  const fromEnv = hostVar === undefined ? undefined : nonEmpty(ctx.env[hostVar]);
  const envUrl = fromEnv === undefined ? undefined : hostToUrl(fromEnv);
  if (entry.base_url === undefined && hostVar !== undefined && fromEnv !== undefined && envUrl === undefined) {
    problems.push({ key: hostVar, detail: `expected host:port or an http(s) URL, got ${JSON.stringify(fromEnv)}` });
    return undefined;
  }
  let baseUrl = entry.base_url ?? envUrl ?? preset.baseUrl;
  const builtinSim = entry.preset === 'sim' && entry.base_url === undefined;
  if (builtinSim) baseUrl = undefined;
  else if (baseUrl === undefined) {
    problems.push({ key: `${at}.base_url`, detail: `missing; the ${entry.preset} preset has no default address` });
    return undefined;
  }

  let apiKey: Secret | undefined;
  let keySource: string;
  if (entry.api_key !== undefined && entry.api_key_env !== undefined) {
    problems.push({ key: `${at}.api_key`, detail: 'set either api_key or api_key_env, not both' });
    return undefined;
  }
  if (entry.api_key !== undefined) {
    apiKey = new Secret(entry.api_key);
    keySource = 'config file';
    warnings.push(`${ctx.file}: ${at}.api_key: a key written in the config file; api_key_env keeps it out of the file.`);
  } else {
    const variable = entry.api_key_env ?? preset.apiKeyEnv ?? '';
    const value = variable === '' ? undefined : nonEmpty(ctx.env[variable]);
    apiKey = value === undefined ? undefined : new Secret(value);
    keySource = value !== undefined ? `env ${variable}`
      : variable === '' ? 'none (the client\'s bearer is passed through)'
        : `none: ${variable} is not set (the client's bearer is passed through)`;
  }
  if (builtinSim) keySource = 'built-in simulator, no key';

  return {
    name,
    preset: entry.preset,
    baseUrl: baseUrl?.replace(/\/+$/, ''),
    builtinSim,
    apiKey,
    keySource,
    headers: { ...entry.headers },
    timeouts: { ...DEFAULT_TIMEOUTS, ...entry.timeouts },
    codexHeaders: entry.codex_headers ?? false,
  };
}

function buildModel(
  name: string,
  entry: ModelEntry,
  providers: Record<string, ProviderConfig>,
  entries: Record<string, ProviderEntry>,
  window: WindowDefaults,
  now: Date,
  problems: ConfigProblem[],
): ModelConfig | undefined {
  const at = keyPath(['models', name]);
  const providerEntry = Object.hasOwn(entries, entry.provider) ? entries[entry.provider] : undefined;
  if (providerEntry === undefined) {
    problems.push({ key: `${at}.provider`, detail: `unknown provider ${JSON.stringify(entry.provider)}; configured: ${Object.keys(entries).join(', ')}` });
    return undefined;
  }
  const { figures, sizes: sized } = sizeRoute(providerEntry.preset, entry.model, entry, window, now, at);
  if (!sized.ok) {
    problems.push(...sized.problems);
    return undefined;
  }
  if (entry.price !== undefined && figures.price === undefined) {
    // Part of a price was given: the rest must come from the catalogue, or the route's cost is unknown by mistake.
    const missing = (['input', 'output'] as const).filter((k) => figures.prices[k] === undefined);
    problems.push({ key: `${at}.price.${missing[0]}`, detail: `missing; the catalogue has no ${missing.join(' or ')} price for ${JSON.stringify(entry.model)}` });
    return undefined;
  }
  if (providers[entry.provider] === undefined) return undefined; // its own problem is reported already
  const preset = presetOf(providerEntry.preset);
  if (entry.cache_control_at === 'breakpoints' && preset.wire !== 'anthropic-messages') {
    // Explicit breakpoints are placed on Anthropic's content blocks; other wires take the top-level form.
    problems.push({ key: `${at}.cache_control_at`, detail: `"breakpoints" needs a provider on the Anthropic Messages wire; ${providerEntry.preset} takes a top-level cache_control` });
    return undefined;
  }
  const forced = entry.prompt_cache_breakpoints;
  if ((forced === 'implicit' || forced === 'explicit') && preset.wire !== 'openai-chat' && preset.wire !== 'openai-responses') {
    problems.push({ key: `${at}.prompt_cache_breakpoints`, detail: `OpenAI's breakpoints go on the Chat Completions or Responses wire; ${providerEntry.preset} speaks ${preset.wire}` });
    return undefined;
  }
  if (entry.gemini_cache === 'explicit' && preset.wire !== 'gemini') {
    problems.push({ key: `${at}.gemini_cache`, detail: `explicit context caches are Gemini's own API; ${providerEntry.preset} speaks ${preset.wire}` });
    return undefined;
  }
  if (entry.stale_thinking !== undefined && preset.wire !== 'anthropic-messages') {
    problems.push({ key: `${at}.stale_thinking`, detail: `signed thinking blocks are Anthropic's; ${providerEntry.preset} speaks ${preset.wire}` });
    return undefined;
  }
  const fallback = entry.fallback ?? [];
  for (const [i, other] of fallback.entries()) {
    const otherEntry = Object.hasOwn(entries, other) ? entries[other] : undefined;
    // The same bytes go to a fallback: only a provider that reads them as the first one does.
    const detail = otherEntry === undefined ? `unknown provider ${JSON.stringify(other)}; configured: ${Object.keys(entries).join(', ')}`
      : other === entry.provider || fallback.indexOf(other) !== i ? `${JSON.stringify(other)} is already a deployment of this model`
        : otherEntry.preset !== providerEntry.preset ? `${JSON.stringify(other)} has preset ${otherEntry.preset}; a fallback gets the same request bytes, so it needs the preset of ${JSON.stringify(entry.provider)} (${providerEntry.preset})`
          : undefined;
    if (detail !== undefined) {
      problems.push({ key: `${at}.fallback[${i}]`, detail });
      return undefined;
    }
  }
  return {
    name,
    provider: entry.provider,
    model: entry.model,
    sizes: sized.sizes,
    cacheKey: entry.cache_key ?? preset.cacheKey,
    cacheControl: entry.cache_control ?? preset.cacheControl,
    ...(entry.cache_control_at === undefined ? {} : { cacheControlAt: entry.cache_control_at }),
    ...(entry.prompt_cache_breakpoints === undefined ? {} : { promptCacheBreakpoints: entry.prompt_cache_breakpoints }),
    ...(entry.gemini_cache === undefined ? {} : { geminiCache: entry.gemini_cache }),
    reasoningOut: entry.reasoning ?? preset.reasoningOut,
    ...(entry.max_tokens_field === undefined ? {} : { maxTokensField: entry.max_tokens_field }),
    system: entry.system ?? 'follow',
    clientDrops: entry.client_drops ?? 'follow',
    figures,
    ...(entry.keep_reasoning === undefined ? {} : { keepReasoning: entry.keep_reasoning }),
    ...(entry.stale_thinking === undefined ? {} : { staleThinking: entry.stale_thinking }),
    thinking: entry.thinking,
    keepAlive: entry.keep_alive,
    ...(entry.retries === undefined ? {} : { retries: entry.retries }),
    fallback,
  };
}

function parseListen(value: string, overrides: Overrides, problems: ConfigProblem[]): { host: string; port: number } {
  const colon = value.lastIndexOf(':');
  let host = value.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  let port = Number(value.slice(colon + 1));
  if (port > 65_535) problems.push({ key: 'listen', detail: `expected a port from 0 to 65535, got ${port}` });
  if (overrides.host !== undefined) host = overrides.host;
  if (overrides.port !== undefined) {
    if (!Number.isInteger(overrides.port) || overrides.port < 0 || overrides.port > 65_535) {
      problems.push({ key: '--port', detail: `expected a port from 0 to 65535, got ${overrides.port}` });
    }
    port = overrides.port;
  }
  return { host: host === '' ? '127.0.0.1' : host, port };
}

/** Client keys, kept as their SHA-256 (from the environment, or written hashed in the file). */
function readAuth(file: ConfigFile, env: Env, overrides: Overrides, problems: ConfigProblem[]): AuthConfig {
  const keys: ClientKey[] = [];
  (file.auth?.keys ?? []).forEach((k, i) => {
    const at = `auth.keys[${i}]`;
    if ((k.key_env === undefined) === (k.sha256 === undefined)) {
      problems.push({ key: at, detail: 'give either key_env (the key in an environment variable) or sha256 (the key\'s SHA-256 in hex)' });
      return;
    }
    let sha256 = k.sha256?.toLowerCase();
    if (k.key_env !== undefined) {
      const value = nonEmpty(env[k.key_env]);
      if (value === undefined) {
        problems.push({ key: `${at}.key_env`, detail: `the environment variable ${k.key_env} is not set` });
        return;
      }
      sha256 = createHash('sha256').update(value).digest('hex');
    }
    const key: ClientKey = { name: k.name, sha256: sha256!, models: k.models, budgetPeriod: k.budget_period ?? 'month' };
    if (k.budget_usd !== undefined) key.budgetUsd = k.budget_usd;
    if (k.requests_per_minute !== undefined) key.requestsPerMinute = k.requests_per_minute;
    if (k.admin === true) key.admin = true;
    if (keys.some((other) => other.name === k.name)) problems.push({ key: `${at}.name`, detail: `another key is named ${JSON.stringify(k.name)}: names keep budgets and metrics apart` });
    keys.push(key);
  });
  return { keys, open: overrides.open === true || file.auth?.open === true };
}

function readAdminKey(file: ConfigFile, label: string, env: Env, problems: ConfigProblem[], warnings: string[]): Secret | undefined {
  if (file.admin_key !== undefined && file.admin_key_env !== undefined) {
    problems.push({ key: 'admin_key', detail: 'set either admin_key or admin_key_env, not both' });
    return undefined;
  }
  if (file.admin_key !== undefined) {
    warnings.push(`${label}: admin_key: the admin key is written in the config file; admin_key_env keeps it out of the file.`);
    return new Secret(file.admin_key);
  }
  if (file.admin_key_env === undefined) return undefined;
  const value = nonEmpty(env[file.admin_key_env]);
  // An admin key asked for but absent is an error: starting without it would leave the admin routes open or dead.
  if (value === undefined) problems.push({ key: 'admin_key_env', detail: `the environment variable ${file.admin_key_env} is not set` });
  return value === undefined ? undefined : new Secret(value);
}

/** `OLLAMA_HOST` style: `host`, `host:port`, `:port` or a URL; undefined when it is none of these. */
export function hostToUrl(host: string): string | undefined {
  const url = /^https?:\/\//i.test(host) ? host : `http://${host.startsWith(':') ? `127.0.0.1${host}` : host}`;
  try {
    return new URL(url).host === '' ? undefined : url;
  } catch {
    return undefined;
  }
}

function unique(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const line = `${p.key}\n${p.detail}`;
    if (seen.has(line)) return false;
    seen.add(line);
    return true;
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
