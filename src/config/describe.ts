/**
 * The startup banner: providers (and whether each has a key, never the key), models and their
 * window sizes and cache settings. Reads only names, addresses and key sources.
 */
import { presetOf } from './presets.js';
import type { Config } from './types.js';

export function describeConfig(config: Config): string {
  const lines: string[] = [];
  lines.push(`config: ${config.file ?? 'none (providers from the environment)'}`);
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  lines.push(`listen: ${host}:${config.listen.port}   data: ${config.dataDir}   admin key: ${config.adminKey === undefined ? 'none' : 'set'}`);
  // The URL may hold a password: only the variable it is read from is named.
  if (config.store.kind === 'postgres') lines.push(`store: postgres, URL from $${config.store.urlEnv} (shared by replicas, docs/scaling.md)`);

  lines.push('providers:');
  const providers = Object.values(config.providers);
  const nameWidth = Math.max(...providers.map((p) => p.name.length));
  const presetWidth = Math.max(...providers.map((p) => p.preset.length));
  for (const p of providers) {
    const preset = presetOf(p.preset);
    const where = p.builtinSim && p.baseUrl === undefined ? 'built-in simulator (loopback)' : (p.baseUrl ?? '');
    const later = preset.ready ? '' : `   (${preset.wire}: not supported yet)`;
    lines.push(`  ${p.name.padEnd(nameWidth)}  ${p.preset.padEnd(presetWidth)}  ${where}   key: ${p.keySource}${later}`);
  }

  const models = Object.values(config.models);
  lines.push(models.length === 0 ? 'models: none configured' : 'models:');
  for (const m of models) {
    const s = m.sizes;
    const cache = `cache_key ${m.cacheKey}, cache_control ${m.cacheControl}`;
    lines.push(`  ${m.name} -> ${m.provider}/${m.model}   context ${s.context}, water ${s.high_water}/${s.low_water}, ${cache}`);
  }
  lines.push(`other routes: <provider>/<model>, e.g. ${Object.keys(config.providers)[0] ?? 'sim'}/some-model`);
  for (const warning of config.warnings) lines.push(`warning: ${warning}`);
  return lines.join('\n');
}
