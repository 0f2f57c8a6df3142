/**
 * Route resolution: the model name a client asks for -> the upstream, its dialect options, its
 * credential, its cache settings and the window recipe a new session on it records.
 * A `[models]` name wins; else `provider/model` with a configured provider (the model part may
 * hold slashes: `openrouter/anthropic/claude-sonnet-4.6`).
 */
import { LRUCache } from 'lru-cache';
import { ProxyError } from '../core/errors.js';
import { NEW_SESSION_WINDOW_VERSION, type Recipe } from '../core/events.js';
import type { DialectRoute } from '../core/route.js';
import type { RouteFigures } from '../pricing/figures.js';
import type { Price } from '../pricing/price.js';
import { isOpenAIReasoningModel, takesExplicitBreakpoints } from '../core/openai-family.js';
import { requiresCallSignatures } from '../core/gemini-family.js';
import { bindsThinkingToPrefix } from '../core/anthropic-family.js';
import { presetOf, type CacheControlMode, type CacheKeyMode, type Preset, type PresetName } from './presets.js';
import type { Config, ModelConfig, ProviderConfig, Timeouts } from './types.js';

export interface Route {
  /** The recipe's route: the `[models]` name, or `provider/model` as the client asked. */
  name: string;
  /**
   * The `model` label of metrics: the `[models]` name; for a model the config does not name,
   * `provider/<catalogue id>` when the catalogue knows it, else `provider/*`: label values stay
   * bounded by the config and the catalogue whatever clients ask for.
   */
  label: string;
  provider: string;
  preset: PresetName;
  dialect: DialectRoute;
  /** The provider's key; absent: the client's bearer is passed through. */
  apiKey?: string;
  cacheKey: CacheKeyMode;
  cacheControl: CacheControlMode;
  /** The upstream reads a top-level `cache_control`; else explicit breakpoints carry it. */
  topLevelCacheControl: boolean;
  /** The preset's affinity headers (lower case), which carry the session key. */
  affinityHeaders: readonly string[];
  /** Client fields the upstream refuses (the preset's list), left out of what passes through. */
  refuses: readonly string[];
  /**
   * An OpenAI reasoning model on a server that applies OpenAI's rules: the sampling fields are left
   * out of a request on which it reasons (docs/wires.md, OpenAI; dialects/model-params.ts).
   */
  reasoningModel: boolean;
  codexHeaders: boolean;
  /** OpenAI's GPT-5.6+ breakpoints and the mode they go with; `off`: neither field is sent. */
  promptCache: 'off' | 'implicit' | 'explicit';
  /** Gemini: `explicit` holds each session's stable prefix in a `cachedContents` entry (src/proxy/gemini-caches.ts). */
  geminiCache?: 'explicit';
  timeouts: Timeouts;
  /** Context and prices with their sources (`proxy models`). */
  figures: RouteFigures;
  /** Where the request may go, in order: the provider, then its `fallback` (docs/faults.md). */
  deployments: Deployment[];
  /** Retries per deployment of a call that failed before its first byte. */
  retries: number;
  /** `figures.price`: absent when input or output is unknown. */
  price?: Price;
  /** `keep_reasoning`: true always keeps a Responses upstream's reasoning, false never; absent: as the client asks. */
  keepReasoning?: boolean;
  thinking?: 'enabled' | 'disabled' | 'adaptive';
  recipe: Recipe;
  /** System-prompt lines kept out of the log (`[window] volatile_lines`). */
  volatileLines: readonly RegExp[];
}

/** One place that serves the route's model: the same request bytes, its own address and key. */
export interface Deployment {
  provider: string;
  baseUrl: string;
  /** Absent: the client's bearer is passed through. */
  apiKey?: string;
  /** The provider's `headers` table. */
  headers: Record<string, string>;
  timeouts: Timeouts;
}

/**
 * Routes resolved, per config: a route depends on the config and the name only, and resolving one
 * (a new route object, its deployments, the base URL parsed) was ~1.5% of a new conversation's
 * main-thread time (bench/RESULTS.md, Peers (b)). Bounded, since clients may name any
 * `provider/model`; frozen, since every request of the model shares it.
 */
const RESOLVED = new WeakMap<Config, LRUCache<string, Route>>();
const RESOLVED_MAX = 1024;

export function resolveRoute(config: Config, requestedModel: string): Route {
  let memo = RESOLVED.get(config);
  if (memo === undefined) {
    memo = new LRUCache({ max: RESOLVED_MAX });
    RESOLVED.set(config, memo);
  }
  let route = memo.get(requestedModel);
  if (route === undefined) {
    route = freezeRoute(routeOf(config, requestedModel));
    memo.set(requestedModel, route);
  }
  return route;
}

/** The route's own objects, not what it shares with the config (figures, prices, expressions). */
function freezeRoute(route: Route): Route {
  Object.freeze(route.dialect.headers);
  Object.freeze(route.dialect);
  for (const d of route.deployments) Object.freeze(Object.freeze(d).headers);
  Object.freeze(route.deployments);
  Object.freeze(route.recipe);
  return Object.freeze(route);
}

function routeOf(config: Config, requestedModel: string): Route {
  const configured = Object.hasOwn(config.models, requestedModel) ? config.models[requestedModel] : undefined;
  if (configured !== undefined) {
    const route = makeRoute(requestedModel, providerOf(config, configured.provider), configured, config);
    route.deployments.push(...configured.fallback.map((name) => deploymentOf(providerOf(config, name))));
    return { ...route, label: requestedModel };
  }
  const slash = requestedModel.indexOf('/');
  if (slash > 0 && slash < requestedModel.length - 1) {
    const providerName = requestedModel.slice(0, slash);
    if (Object.hasOwn(config.providers, providerName)) {
      const provider = providerOf(config, providerName);
      const preset = presetOf(provider.preset);
      const model = requestedModel.slice(slash + 1);
      const { figures, sizes } = config.providerRoutes.get(providerName, model);
      const route = makeRoute(requestedModel, provider, {
        name: requestedModel,
        provider: providerName,
        model,
        sizes,
        figures,
        cacheKey: preset.cacheKey,
        cacheControl: preset.cacheControl,
        reasoningOut: preset.reasoningOut,
        system: 'follow',
        clientDrops: 'follow',
        fallback: [],
      }, config);
      return { ...route, label: `${providerName}/${figures.catalogue?.model ?? '*'}` };
    }
  }
  throw new ProxyError('model_not_found', { model: requestedModel, known: knownModels(config).join(', ') }, { param: 'model' });
}

/** What `model_not_found` lists: the configured names, then one `<provider>/...` form per provider. */
export function knownModels(config: Config): string[] {
  return [...Object.keys(config.models), ...Object.keys(config.providers).map((p) => `${p}/...`)];
}

export interface ListedModel {
  /** The name a client asks for. */
  id: string;
  provider: string;
  /** Upstream model id. */
  model: string;
}

/** For GET /v1/models: the `[models]` entries in the order written. */
export function listModels(config: Config): ListedModel[] {
  return Object.values(config.models).map((m) => ({ id: m.name, provider: m.provider, model: m.model }));
}

/** The config with the built-in simulator's address filled in, once the proxy has started it. */
export function withSimulator(config: Config, baseUrl: string): Config {
  const providers: Record<string, ProviderConfig> = {};
  for (const [name, provider] of Object.entries(config.providers)) {
    providers[name] = provider.builtinSim ? { ...provider, baseUrl: baseUrl.replace(/\/+$/, '') } : provider;
  }
  return { ...config, providers };
}

function providerOf(config: Config, name: string): ProviderConfig {
  const provider = config.providers[name];
  if (provider === undefined) throw new ProxyError('internal_error', { detail: `provider "${name}" is not configured` });
  return provider;
}

function deploymentOf(provider: ProviderConfig): Deployment {
  if (provider.baseUrl === undefined) {
    throw new ProxyError('internal_error', { detail: `provider "${provider.name}" is the built-in simulator, which has not been started` });
  }
  const deployment: Deployment = { provider: provider.name, baseUrl: provider.baseUrl, headers: { ...provider.headers }, timeouts: provider.timeouts };
  if (provider.apiKey !== undefined) deployment.apiKey = provider.apiKey.reveal();
  return deployment;
}

function makeRoute(name: string, provider: ProviderConfig, model: ModelConfig, config: Config): Omit<Route, 'label'> {
  const volatile = config.volatileLines;
  const preset = presetOf(provider.preset);
  if (!preset.ready) {
    throw new ProxyError('wire_not_supported', { model: name, provider: provider.name, preset: provider.preset, wire: preset.wire }, { param: 'model' });
  }
  if (provider.baseUrl === undefined) {
    throw new ProxyError('internal_error', { detail: `provider "${provider.name}" is the built-in simulator, which has not been started` });
  }
  const dialect: DialectRoute = {
    wire: preset.wire,
    preset: provider.preset,
    provider: provider.name,
    model: model.model,
    baseUrl: provider.baseUrl,
    reasoningOut: model.reasoningOut,
    // The rule is about reasoning_content; a route told to send another field (or none) is not bound by it.
    reasoningOnToolTurns: preset.reasoningOnToolTurns && model.reasoningOut === 'reasoning_content',
    headers: { ...provider.headers },
  };
  if (preset.wire === 'openai-chat') dialect.maxTokensField = maxTokensFieldOf(model, preset);
  if (preset.geminiCalls === true && requiresCallSignatures(model.model)) dialect.standInSignatures = true;
  if (model.thinking !== undefined) dialect.thinking = model.thinking;
  if (model.keepReasoning !== undefined) dialect.keepReasoning = model.keepReasoning;
  const s = model.sizes;
  dialect.numCtx = s.context;
  if (model.keepAlive !== undefined) dialect.keepAlive = model.keepAlive;
  const recipe: Recipe = {
    version: NEW_SESSION_WINDOW_VERSION,
    route: name,
    context: s.context,
    output_reserve: s.output_reserve,
    high_water: s.high_water,
    low_water: s.low_water,
    max_result_tokens: s.max_result_tokens,
    protected_entries: s.protected_entries,
    estimator: 'bytes/3',
    system: model.system,
    client_drops: model.clientDrops,
  };
  if (volatile.sources.length > 0) recipe.volatile_lines = [...volatile.sources];
  if (config.toolCaps.length > 0) recipe.tool_caps = config.toolCaps.map((c) => ({ ...c }));
  if (!config.folds) recipe.folds = false;
  if (!capsOutput(model, preset)) recipe.output_cap = 'client';
  if (dropsStaleThinking(model, preset)) {
    recipe.stale_blocks = 'keep';
    dialect.dropStaleThinking = true;
  }
  const route: Omit<Route, 'label'> = {
    name,
    provider: provider.name,
    preset: provider.preset,
    dialect,
    cacheKey: model.cacheKey,
    cacheControl: model.cacheControl,
    topLevelCacheControl: model.cacheControlAt === undefined ? preset.topLevelCacheControl : model.cacheControlAt === 'top-level',
    affinityHeaders: preset.affinityHeaders,
    // GPT-5.6+ refuse `prompt_cache_retention` ("not supported on this model"; docs/decisions.md, OpenAI explicit breakpoints).
    refuses: takesExplicitBreakpoints(model.model) ? [...preset.refuses, 'prompt_cache_retention'] : preset.refuses,
    reasoningModel: preset.openaiModels && isOpenAIReasoningModel(model.model),
    codexHeaders: provider.codexHeaders,
    promptCache: promptCacheOf(model, preset, provider),
    ...(model.geminiCache === 'explicit' ? { geminiCache: 'explicit' as const } : {}),
    timeouts: provider.timeouts,
    figures: model.figures,
    deployments: [deploymentOf(provider)],
    retries: model.retries ?? config.upstream.retries,
    ...(model.keepReasoning === undefined ? {} : { keepReasoning: model.keepReasoning }),
    recipe,
    volatileLines: volatile.patterns,
  };
  if (provider.apiKey !== undefined) route.apiKey = provider.apiKey.reveal();
  if (model.figures.price !== undefined) route.price = model.figures.price;
  if (model.thinking !== undefined) route.thinking = model.thinking;
  return route;
}

/**
 * Anthropic's wire: the route's `stale_thinking`, else `drop_block` for the models that bind a
 * thinking block to its prefix (docs/decisions/0009-stale-thinking-dropped-by-the-api.md).
 */
function dropsStaleThinking(model: ModelConfig, preset: Preset): boolean {
  if (preset.wire !== 'anthropic-messages') return false;
  return (model.staleThinking ?? (bindsThinkingToPrefix(model.model) ? 'drop_block' : 'strip')) === 'drop_block';
}

/** The route's `max_tokens_field`, else the preset's rule (docs/wires.md, Output limits). */
function maxTokensFieldOf(model: ModelConfig, preset: Preset): 'max_tokens' | 'max_completion_tokens' {
  if (model.maxTokensField !== undefined) return model.maxTokensField;
  if (preset.maxTokensField !== 'by-model') return preset.maxTokensField;
  return isOpenAIReasoningModel(model.model) ? 'max_completion_tokens' : 'max_tokens';
}

/**
 * Whether every request carries an output limit when its client gave none: on a wire that requires
 * one (Anthropic's `max_tokens`), or when the config set `output_reserve` (the route's or
 * `[window]`'s). Elsewhere a cap the client did not ask for only cuts answers short: a reasoning
 * model's thinking counts against it (docs/wires.md, Output limits).
 */
function capsOutput(model: ModelConfig, preset: Preset): boolean {
  if (preset.wire === 'anthropic-messages') return true;
  const from = model.figures.outputReserve?.from;
  return from === 'config' || from === 'window';
}

/**
 * `auto`: implicit mode where the model family takes the fields (older models answer 400) and the
 * upstream is one known to take them: not the ChatGPT Codex backend, which refuses all three cache
 * fields (docs/decisions.md, OpenAI explicit breakpoints). `implicit`/`explicit` force them on.
 */
function promptCacheOf(model: ModelConfig, preset: Preset, provider: ProviderConfig): 'off' | 'implicit' | 'explicit' {
  const setting = model.promptCacheBreakpoints ?? 'auto';
  if (setting !== 'auto') return setting;
  const codex = provider.codexHeaders || (provider.baseUrl !== undefined && new URL(provider.baseUrl).hostname === 'chatgpt.com');
  return preset.explicitBreakpoints && !codex && takesExplicitBreakpoints(model.model) ? 'implicit' : 'off';
}
