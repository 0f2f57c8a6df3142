/**
 * `proxy models [ROUTE...] [--json] [--config PATH]`: per route, the context, output reserve,
 * water marks and prices the proxy will use, and where each came from (config, [window], the
 * catalogue with its version, or the default), and whether OpenAI's GPT-5.6+ breakpoints are
 * placed. Without ROUTE: every `[models]` entry; a ROUTE may be any name a client could ask for
 * (`openrouter/openai/gpt-5.5`).
 */
import { loadConfig } from '../config/load.js';
import { resolveRoute, type Route } from '../config/routes.js';
import type { Config } from '../config/types.js';
import { CATALOGUE } from '../pricing/catalogue.js';
import type { Figure, PriceKind } from '../pricing/price.js';
import { parse } from './args.js';

const HELP = 'usage: proxy models [ROUTE...] [--json] [--config PATH]';

export async function modelsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' }, config: { type: 'string' } }, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const config = loadConfig({ ...(values.config === undefined ? {} : { path: values.config }), env: process.env });
  process.stdout.write(values.json === true ? JSON.stringify(modelsReport(config, positionals), null, 2) + '\n' : renderModels(config, positionals) + '\n');
  return 0;
}

export interface ModelsReport {
  catalogue: { name: string; version: string };
  routes: {
    route: string;
    upstream: string;
    catalogue: NonNullable<Route['figures']['catalogue']> | null;
    context: Figure;
    output_reserve: Figure | null;
    high_water: number;
    low_water: number;
    /** USD per million tokens; a kind the route has no price for is absent. */
    prices: Partial<Record<PriceKind, Figure>>;
    priced: boolean;
    /** `[models.NAME] prompt_cache_breakpoints` as resolved for this model and upstream. */
    breakpoints: Route['promptCache'];
    /** `reserve`: every request is capped at the output reserve; `client`: only the client's own limit goes (docs/wires.md). */
    output_cap: 'reserve' | 'client';
    /** openai-chat: the field the limit goes in; null on other wires. */
    max_tokens_field: string | null;
  }[];
}

export function modelsReport(config: Config, names: string[]): ModelsReport {
  const routes = (names.length > 0 ? names : Object.keys(config.models)).map((name) => resolveRoute(config, name));
  return {
    catalogue: { ...CATALOGUE },
    routes: routes.map((r) => ({
      route: r.name,
      upstream: `${r.provider}/${r.dialect.model}`,
      catalogue: r.figures.catalogue ?? null,
      context: r.figures.context,
      output_reserve: r.figures.outputReserve ?? null,
      high_water: r.recipe.high_water,
      low_water: r.recipe.low_water,
      prices: r.figures.prices,
      priced: r.price !== undefined,
      breakpoints: r.promptCache,
      output_cap: r.recipe.output_cap ?? 'reserve',
      max_tokens_field: r.dialect.maxTokensField ?? null,
    })),
  };
}

const KINDS: [PriceKind, string][] = [['input', 'input'], ['cache_read', 'cache read'], ['cache_write', 'cache write'], ['cache_write_1h', 'cache write 1h'], ['output', 'output']];

export function renderModels(config: Config, names: string[]): string {
  const report = modelsReport(config, names);
  const catalogue = `${report.catalogue.name} ${report.catalogue.version}`;
  const source = (f: Figure) => (f.from === 'catalogue' ? `catalogue (${catalogue})` : f.from === 'window' ? '[window]' : f.from);
  const lines = [`catalogue: ${catalogue}; prices in USD per million tokens`];
  if (report.routes.length === 0) lines.push('no [models] entries; name a route, e.g. proxy models openrouter/openai/gpt-5.5');
  for (const r of report.routes) {
    const matched = r.catalogue === null ? 'not in the catalogue' : `catalogue: ${r.catalogue.provider} ${r.catalogue.model}`;
    lines.push('', `${r.route} -> ${r.upstream}   (${matched})`);
    const row = (label: string, value: string, from: string) => lines.push(`  ${label.padEnd(15)} ${value.padStart(10)}   ${from}`);
    row('context', r.context.value.toLocaleString('en-US'), source(r.context));
    if (r.output_reserve !== null) row('output reserve', r.output_reserve.value.toLocaleString('en-US'), `${source(r.output_reserve)}; output limit: unknown (the catalogue has none)`);
    const field = r.max_tokens_field === null ? '' : ` as ${r.max_tokens_field}`;
    row('output cap', r.output_cap === 'reserve' ? 'reserve' : 'client', r.output_cap === 'reserve' ? `every request, at the output reserve${field}` : `the client's own limit${field}; none added`);
    row('water marks', `${r.high_water.toLocaleString('en-US')} / ${r.low_water.toLocaleString('en-US')}`, 'high / low');
    for (const [kind, label] of KINDS) {
      const figure = r.prices[kind];
      if (figure !== undefined) row(label, String(figure.value), source(figure));
      else if (!r.priced || kind === 'input' || kind === 'output') row(label, 'unknown', 'neither config nor catalogue');
      else row(label, kind === 'cache_write_1h' && r.prices.cache_write !== undefined ? 'as 5 min' : 'as input', 'no price of its own');
    }
    if (!r.priced) lines.push('  cost: unknown (set [models.NAME].price to price it)');
    if (r.breakpoints !== 'off') lines.push(`  breakpoints     ${r.breakpoints.padStart(10)}   OpenAI prompt_cache_breakpoint markers (GPT-5.6+)`);
  }
  return lines.join('\n');
}
