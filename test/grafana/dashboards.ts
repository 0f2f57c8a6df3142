/**
 * Reading the Grafana dashboards for the tests: every panel (rows' nested ones included), every
 * PromQL expression, the metric names an expression reads, and the expression with Grafana's
 * variables replaced so Prometheus itself can run it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const GRAFANA_DIR = resolve(import.meta.dirname, '../../grafana');
export const DASHBOARD_DIR = join(GRAFANA_DIR, 'dashboards');

export interface Target {
  refId?: string;
  expr?: string;
  datasource?: { type?: string; uid?: string };
}

export interface Panel {
  id?: number;
  type: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  panels?: Panel[];
  gridPos?: { h: number; w: number; x: number; y: number };
}

export interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating?: { list: { name: string; type: string; query?: string | { query?: string }; datasource?: { uid?: string } }[] };
}

export function loadDashboards(): { file: string; dashboard: Dashboard }[] {
  return readdirSync(DASHBOARD_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, dashboard: JSON.parse(readFileSync(join(DASHBOARD_DIR, file), 'utf8')) as Dashboard }));
}

/** Every panel, rows and the panels inside collapsed rows included. */
export function allPanels(dashboard: Dashboard): Panel[] {
  const out: Panel[] = [];
  const walk = (panels: Panel[]) => {
    for (const p of panels) {
      out.push(p);
      if (p.panels !== undefined) walk(p.panels);
    }
  };
  walk(dashboard.panels);
  return out;
}

export interface Expression {
  file: string;
  panel: string;
  refId: string;
  expr: string;
}

export function expressions(): Expression[] {
  const out: Expression[] = [];
  for (const { file, dashboard } of loadDashboards()) {
    for (const panel of allPanels(dashboard)) {
      for (const t of panel.targets ?? []) {
        if (t.expr !== undefined) out.push({ file, panel: panel.title ?? `#${panel.id}`, refId: t.refId ?? '?', expr: t.expr });
      }
    }
  }
  return out;
}

/** Grafana's interval variables as fixed durations; any other variable (`$model`) matches everything. */
export function substituteVariables(expr: string): string {
  const durations: Record<string, string> = { __rate_interval: '1m', __interval: '15s', __range: '1h' };
  return expr
    .replace(/\$\{?(__\w+?)\}?(?![\w])/g, (whole, name: string) => durations[name] ?? whole)
    .replace(/\$\{?(\w+)\}?/g, '.*');
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan', 'atan2']);

/**
 * The metric names an expression reads: identifiers that are not functions (followed by `(`),
 * keywords, label names in grouping clauses, label matchers, durations or strings.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w.:])([A-Za-z_:][\w:]*)(?![\w:])(?!\s*\()/g)) {
    const name = m[1]!;
    if (!KEYWORDS.has(name.toLowerCase())) names.add(name);
  }
  return [...names];
}

/** `label_values(metric{...}, label)` in a variable's query: the metric. */
export function variableMetrics(dashboard: Dashboard): string[] {
  const out: string[] = [];
  for (const v of dashboard.templating?.list ?? []) {
    const query = typeof v.query === 'string' ? v.query : v.query?.query;
    const m = /label_values\(\s*([A-Za-z_:][\w:]*)/.exec(query ?? '');
    if (m !== null) out.push(m[1]!);
  }
  return out;
}
