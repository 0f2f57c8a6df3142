/**
 * Every metric a Grafana panel queries exists in the registry (the project's rule: "a test checks the dashboard
 * JSON against the registry"), and the dashboards are well-formed: the fixed data source uid on
 * every panel and query, unique panel ids, unique uids, provisioning pointing at them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/registry.js';
import { allPanels, expressions, GRAFANA_DIR, loadDashboards, metricNames, substituteVariables, variableMetrics } from './dashboards.js';

const DATASOURCE_UID = 'prometheus';
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

async function registryMetrics(): Promise<Map<string, string>> {
  const json = await createMetrics().registry.getMetricsAsJSON();
  return new Map(json.map((m) => [m.name, String(m.type)]));
}

/** A histogram's series name -> the metric; anything else as it is. */
function baseName(name: string, known: Map<string, string>): string {
  if (known.has(name)) return name;
  for (const suffix of HISTOGRAM_SUFFIXES) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && known.get(base) === 'histogram') return base;
  }
  return name;
}

describe('dashboards against the registry', () => {
  const all = expressions();

  it('there are dashboards, and every panel with queries has PromQL', () => {
    expect(loadDashboards().length).toBeGreaterThanOrEqual(1);
    expect(all.length).toBeGreaterThan(20);
  });

  it('every metric named in a panel query exists in createMetrics().registry', async () => {
    const known = await registryMetrics();
    const missing: string[] = [];
    for (const e of all) {
      const names = metricNames(e.expr);
      expect(names.length, `${e.file} "${e.panel}" ${e.refId}: no metric in ${e.expr}`).toBeGreaterThan(0);
      for (const name of names) if (!known.has(baseName(name, known))) missing.push(`${e.file} "${e.panel}" ${e.refId}: ${name}`);
    }
    expect(missing).toEqual([]);
  });

  it('every variable query names a metric of the registry', async () => {
    const known = await registryMetrics();
    for (const { file, dashboard } of loadDashboards()) {
      for (const name of variableMetrics(dashboard)) expect(known.has(name), `${file}: ${name}`).toBe(true);
    }
  });

  it('the dashboards cover the series docs/architecture.md section 8 asks to see', () => {
    const used = new Set(all.flatMap((e) => metricNames(e.expr)));
    for (const name of [
      'proxy_cached_prompt_tokens_total', 'proxy_prompt_tokens_total', 'proxy_cache_write_tokens_total', 'proxy_cost_usd_total',
      'proxy_cost_saved_usd_total', 'proxy_cache_breaks_total', 'proxy_prefix_reuse_ratio_bucket', 'proxy_request_duration_seconds_bucket',
      'proxy_upstream_errors_total', 'proxy_active_sessions', 'proxy_requests_total', 'proxy_window_trims_total',
    ]) expect(used, name).toContain(name);
    const latency = all.filter((e) => e.expr.includes('proxy_request_duration_seconds_bucket')).map((e) => e.expr).join('\n');
    for (const phase of ['overhead', 'ttft', 'total']) expect(latency).toContain(`phase="${phase}"`);
    expect(latency).toMatch(/histogram_quantile\(0\.99,/);
  });

  it('the token cache rate is a sum over a sum, never an average of ratios', () => {
    const rates = all.filter((e) => /cache rate/i.test(e.panel));
    expect(rates.length).toBeGreaterThan(0);
    for (const e of rates) {
      expect(e.expr).toMatch(/^sum(?: by \(model\) )?\((?:rate|increase)\(proxy_cached_prompt_tokens_total/);
      expect(e.expr).not.toMatch(/avg/);
    }
  });

  it('the metric-name reader finds names and skips functions, labels, grouping and variables', () => {
    expect(metricNames('histogram_quantile(0.5, sum by (le, phase) (rate(a_bucket{model=~"$model", x="b_c"}[$__rate_interval])))')).toEqual(['a_bucket']);
    expect(metricNames('sum(x) / sum(y and on (provider, model) z) or vector(0) * 3600')).toEqual(['x', 'y', 'z']);
    expect(substituteVariables('rate(a{m=~"$model", p=~"${provider}"}[$__rate_interval]) [$__range]')).toBe('rate(a{m=~".*", p=~".*"}[1m]) [1h]');
  });
});

describe('dashboard JSON', () => {
  it('is Grafana 11 schema with unique uids and titles', () => {
    const boards = loadDashboards();
    expect(new Set(boards.map((b) => b.dashboard.uid)).size).toBe(boards.length);
    expect(new Set(boards.map((b) => b.dashboard.title)).size).toBe(boards.length);
    for (const { dashboard } of boards) {
      expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
      expect(dashboard.uid).toMatch(/^[A-Za-z0-9_-]{1,40}$/);
    }
  });

  it('panel ids are unique within a dashboard; panels fit the 24-column grid', () => {
    for (const { file, dashboard } of loadDashboards()) {
      const panels = allPanels(dashboard);
      const ids = panels.map((p) => p.id);
      expect(ids.every((id) => Number.isInteger(id)), file).toBe(true);
      expect(new Set(ids).size, file).toBe(ids.length);
      for (const p of panels) {
        expect(p.gridPos, `${file} ${p.title}`).toBeDefined();
        expect(p.gridPos!.x + p.gridPos!.w, `${file} ${p.title}`).toBeLessThanOrEqual(24);
      }
    }
  });

  it('every panel and query uses the provisioned data source uid, and the variables do too', () => {
    for (const { file, dashboard } of loadDashboards()) {
      for (const p of allPanels(dashboard)) {
        if (p.type === 'row') continue;
        expect(p.datasource, `${file} "${p.title}"`).toEqual({ type: 'prometheus', uid: DATASOURCE_UID });
        expect(p.targets?.length ?? 0, `${file} "${p.title}" has no query`).toBeGreaterThan(0);
        for (const t of p.targets ?? []) expect(t.datasource?.uid, `${file} "${p.title}" ${t.refId}`).toBe(DATASOURCE_UID);
        expect(new Set(p.targets!.map((t) => t.refId)).size).toBe(p.targets!.length);
      }
      for (const v of dashboard.templating?.list ?? []) if (v.type === 'query') expect(v.datasource?.uid).toBe(DATASOURCE_UID);
    }
  });

  it('provisioning declares that uid and loads the dashboards from where compose mounts them', () => {
    const datasource = readFileSync(join(GRAFANA_DIR, 'provisioning/datasources/prometheus.yml'), 'utf8');
    expect(datasource).toMatch(new RegExp(`^\\s+uid: ${DATASOURCE_UID}$`, 'm'));
    expect(datasource).toMatch(/^\s+type: prometheus$/m);
    const dashboards = readFileSync(join(GRAFANA_DIR, 'provisioning/dashboards/prefix-proxy.yml'), 'utf8');
    const path = /^\s+path: (\S+)$/m.exec(dashboards)?.[1];
    const compose = readFileSync(join(GRAFANA_DIR, '../docker-compose.yml'), 'utf8');
    expect(compose).toContain(`./grafana/dashboards:${path}`);
    expect(compose).toContain('./grafana/provisioning:/etc/grafana/provisioning');
  });
});
