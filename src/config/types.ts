/**
 * The loaded configuration: validated, defaults applied, credentials resolved from the
 * environment. Credentials are held in `Secret`s, which print as `[redacted]` however the
 * config is printed (JSON, util.inspect, template strings).
 */
import type { ToolCap } from '../core/events.js';
import type { ReasoningOut } from '../core/route.js';
import type { RouteFigures } from '../pricing/figures.js';
import type { Price } from '../pricing/price.js';
import type { CacheControlMode, CacheKeyMode, PresetName, PromptCacheSetting } from './presets.js';

const REDACTED = '[redacted]';

/** A credential. Only `reveal()` gives the value; every printing path gives `[redacted]`. */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return REDACTED;
  }
}

export interface Timeouts {
  connect_ms: number;
  headers_ms: number;
  body_ms: number;
  deadline_ms: number;
}

/** `[upstream]`: what happens when a call fails (docs/faults.md). */
export interface UpstreamSettings {
  /** Retries of a call that failed before its first byte, per deployment. */
  retries: number;
  retryBaseMs: number;
  retryMaxDelayMs: number;
  /** A streamed reply longer than this (bytes on the wire) is cut off with an error. */
  maxReplyBytes: number;
}

export type { Price };

export interface ProviderConfig {
  name: string;
  preset: PresetName;
  /** Base URL without a trailing slash; undefined only for the built-in simulator before it starts. */
  baseUrl: string | undefined;
  /** A `sim` provider without base_url: the proxy starts the simulator on loopback and fills `baseUrl` in. */
  builtinSim: boolean;
  apiKey: Secret | undefined;
  /** Where the key came from, for the banner: `env NAME`, `config file`, or why there is none. */
  keySource: string;
  headers: Record<string, string>;
  timeouts: Timeouts;
  /** A ChatGPT-plan credential: the session key also goes as Codex's session headers. */
  codexHeaders: boolean;
}

/** The window's sizes for one route, checked at load (docs/architecture.md section 4.2). */
export interface WindowSizes {
  context: number;
  output_reserve: number;
  high_water: number;
  low_water: number;
  max_result_tokens: number;
  protected_entries: number;
}

export interface ModelConfig {
  name: string;
  provider: string;
  /** Upstream model id. */
  model: string;
  sizes: WindowSizes;
  cacheKey: CacheKeyMode;
  cacheControl: CacheControlMode;
  /** Where `cache_control` goes; undefined: as the preset takes it. */
  cacheControlAt?: 'top-level' | 'breakpoints';
  /** `prompt_cache_breakpoints`; absent: `auto`. */
  promptCacheBreakpoints?: PromptCacheSetting;
  /** `gemini_cache`; absent: `implicit`. */
  geminiCache?: 'implicit' | 'explicit';
  reasoningOut: ReasoningOut;
  /** `max_tokens_field`; absent: the preset's rule. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  system: 'follow' | 'append';
  clientDrops: 'follow' | 'absorb';
  /** Context and prices, each from the entry, the catalogue, `[window]` or the default. */
  figures: RouteFigures;
  /** `keep_reasoning`; absent: as each client asks (docs/inbound.md, Encrypted reasoning). */
  keepReasoning?: boolean;
  /**
   * `stale_thinking`: a signed thinking block sent after the window edited what came before it.
   * `drop_block`: sent, and the API asked to drop it; `strip`: left out. Absent: by model.
   */
  staleThinking?: 'drop_block' | 'strip';
  thinking?: 'enabled' | 'disabled' | 'adaptive';
  /** Ollama's keep_alive; absent: the dialect's default. */
  keepAlive?: string | number;
  /** Absent: `[upstream] retries`. */
  retries?: number;
  /** Providers of the same preset serving the same model id, tried in order after this one. */
  fallback: string[];
}

/**
 * The `[window]` table with defaults applied; unset water marks follow each route's context, and
 * an unset context is the catalogue's for the route's model, else the default.
 */
export interface WindowDefaults {
  context?: number;
  /** Unset: the default (8192); the catalogue gives no output limit. */
  output_reserve?: number;
  high_water?: number;
  low_water?: number;
  max_result_tokens?: number;
  protected_entries: number;
}

/** `[tracing]`: present only when an endpoint is set (docs/observability.md, Traces). */
export interface TracingConfig {
  /** The collector's OTLP/HTTP traces URL (`.../v1/traces`). */
  endpoint: string;
  serviceName: string;
  /** Share of new traces kept, 0 to 1; a client's sampled traceparent is followed. */
  sampleRatio: number;
  /** Prompts and replies (redacted as logged) as span attributes; off by default. */
  captureContent: boolean;
}

export interface SessionsConfig {
  /** Header names (lower case) checked in order for an explicit session id. */
  idHeaders: string[];
  /** Body fields checked after the headers. */
  idBodyFields: string[];
  /** A session idle this long leaves memory (it stays on disk). */
  idleMinutes: number;
  /** Sessions held in memory beyond those in use. */
  maxLive: number;
  /** Log bytes the live sessions may hold in memory together, in MiB. */
  maxLiveMb: number;
  /** A session idle this many days is no longer found by a request that continues it (its log stays); 0: always found. */
  locateDays: number;
  /** Messages' wire serialisations kept between requests, in MiB. */
  wireCacheMb: number;
  /** When the client sees an answer's last byte, its events are on disk (`fsync`) or with the OS (`write`). */
  durability: 'fsync' | 'write';
}

/** `[store]` (docs/scaling.md). The database URL is read from `urlEnv` when the store opens, never from the file. */
export interface StoreConfig {
  kind: 'files' | 'postgres';
  urlEnv: string;
  /** Database connections per process; each turn in progress holds one. */
  pool: number;
  /** How long a request waits for another replica's turn on its session. */
  lockWaitMs: number;
  /** How long a new database connection may take before a request hears `store_unavailable`. */
  connectTimeoutMs: number;
  /** How often a replica looks for keys added, revoked or changed with `proxy keys`. */
  keyRefreshMs: number;
  /** How long `proxy serve` waits at start for a database not reachable yet before it gives up. */
  startupWaitMs: number;
}

export interface Config {
  /** The file the config came from (as given), or undefined when built from the environment. */
  file: string | undefined;
  listen: { host: string; port: number };
  /** Absolute path of the data directory. */
  dataDir: string;
  adminKey: Secret | undefined;
  bodyLimit: number;
  /** On SIGTERM, how long requests in flight (streams) may take to finish before the process exits anyway. */
  drainMs: number;
  /** Client keys (`[auth]`); with none, only loopback may be served unless `open`. */
  auth: AuthConfig;
  /** The operator's log (`proxy serve`): pino's level. */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `json`: pino's lines as they are (for a collector); `text`: one readable line each (for a terminal). */
  logFormat: 'json' | 'text';
  /** Web page origins allowed to call the proxy from a browser; none by default. */
  allowedOrigins: string[];
  /** Host names (with port or not) the proxy answers to besides loopback names. */
  allowedHosts: string[];
  /** In the order written (env-only: sim first, then the order of PRESETS). */
  providers: Record<string, ProviderConfig>;
  models: Record<string, ModelConfig>;
  window: WindowDefaults;
  /** `[window] volatile_lines`: system-prompt lines kept out of the log (window/volatile-lines.ts). */
  volatileLines: { sources: string[]; patterns: RegExp[] };
  /** `[window] tool_caps`, checked to compile; recorded in every new session's recipe (window/tool-caps.ts). */
  toolCaps: ToolCap[];
  /** `[window] folds`: fold superseded tool results at trims (window/folds.ts); default true. */
  folds: boolean;
  /** Sizes of a `provider/model` route that no `[models]` entry names and the catalogue does not size. */
  defaultSizes: WindowSizes;
  /** Figures and sizes of a `provider/model` route, resolved once per model (config/provider-routes.ts). */
  providerRoutes: ProviderRouteFigures;
  sessions: SessionsConfig;
  store: StoreConfig;
  tracing?: TracingConfig;
  upstream: UpstreamSettings;
  /** Things worth saying at startup (a key written in the file, ...); never a credential. */
  warnings: string[];
  /** Startup banner: providers, models, which have a key. Never prints a credential. */
  describe(): string;
}

export interface ProviderRouteFigures {
  /** `provider` is a configured provider's name; `model` the upstream model id. */
  get(provider: string, model: string): { figures: RouteFigures; sizes: WindowSizes };
}

/** A proxy key a client presents: only its SHA-256 is kept. */
export interface ClientKey {
  /** Names the client in logs; never the key. */
  name: string;
  sha256: string;
  /** Routes (config model names) it may use; undefined: every route. */
  models: string[] | undefined;
  /** Spend allowed per `budgetPeriod`, USD at the routes' prices; undefined: no budget. */
  budgetUsd?: number;
  /** The budget's window, in UTC: the calendar day, the calendar month, or all time. */
  budgetPeriod: BudgetPeriod;
  /** Conversation requests admitted per minute (a token bucket holding a minute's worth); undefined: no limit. */
  requestsPerMinute?: number;
  /** `admin = true`: the key may open the inspector (`/ui/`, `/api/`, docs/inspector.md). */
  admin?: true;
}

export type BudgetPeriod = 'day' | 'month' | 'total';

export interface AuthConfig {
  keys: ClientKey[];
  /** Serve beyond loopback without keys (`[auth] open = true` or `serve --open`). */
  open: boolean;
}

