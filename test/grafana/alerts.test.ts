/**
 * The alerting rules (prometheus-alerts.yml) as Prometheus reads them: promtool accepts them, and
 * its rule tests (alerts.test.yml) show each alert firing on the series that should fire it, with
 * its labels and text, and quiet on those that should not. The series names are the registry's.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/registry.js';

const ROOT = resolve(import.meta.dirname, '../..');

function promtool(args: string[]): { status: number | null; out: string } {
  const r = spawnSync('promtool', args, { encoding: 'utf8', cwd: ROOT });
  if (r.error !== undefined) throw new Error(`promtool is not installed (${r.error.message}): apt-get install -y prometheus (npm test's pretest, scripts/test-servers.sh, does)`);
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('prometheus-alerts.yml', () => {
  it('promtool accepts it, and prometheus.yml and compose load it', () => {
    const checked = promtool(['check', 'rules', 'prometheus-alerts.yml']);
    expect(checked.status, checked.out).toBe(0);
    expect(checked.out).toContain('4 rules found');
    expect(readFileSync(join(ROOT, 'prometheus.yml'), 'utf8')).toMatch(/rule_files:\s*\n\s*- prometheus-alerts\.yml/);
    expect(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')).toContain('./prometheus-alerts.yml:/etc/prometheus/prometheus-alerts.yml');
  });

  it('each alert fires where it should and nowhere else (promtool test rules)', () => {
    const tested = promtool(['test', 'rules', 'test/grafana/alerts.test.yml']);
    expect(tested.status, tested.out).toBe(0);
    expect(tested.out).toContain('SUCCESS');
  });

  it('names only series the proxy exports', async () => {
    const text = readFileSync(join(ROOT, 'prometheus-alerts.yml'), 'utf8');
    const named = new Set([...text.matchAll(/\b(proxy_[a-z_]+)\b/g)].map((m) => m[1]!));
    const exported = new Set((await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name));
    expect([...named].filter((n) => !exported.has(n))).toEqual([]);
    expect(named.size).toBeGreaterThanOrEqual(5);
  });
});
