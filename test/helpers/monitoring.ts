import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { parse as parseYaml } from 'yaml';

/** The repository's root, where deploy/ and docker-compose.yml are. */
export const ROOT = join(import.meta.dirname, '..', '..');
export const ALERTS_FILE = join(ROOT, 'deploy/prometheus/alerts.yml');
export const ALERT_TESTS_FILE = join(ROOT, 'deploy/prometheus/alerts.test.yml');
export const PROMETHEUS_CONFIG_FILE = join(ROOT, 'deploy/prometheus/prometheus.yml');
export const DASHBOARD_FILE = join(ROOT, 'deploy/grafana/catalog-dashboard.json');
export const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');

/**
 * The metric names a PromQL expression selects: each vector selector's name, and a
 * `{__name__="…"}` matcher's. Parsed with Prometheus's own grammar (lezer-promql); an expression
 * it cannot parse throws, so a typo cannot hide a name.
 */
export function metricNames(expr: string): Set<string> {
  const tree = parser.parse(expr);
  const names = new Set<string>();
  const errors: string[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError) errors.push(`at ${node.from}: "${expr.slice(Math.max(0, node.from - 10), node.to + 10)}"`);
      if (node.name === 'VectorSelector') {
        const id = node.node.getChild('Identifier');
        if (id) names.add(expr.slice(id.from, id.to));
      }
      if (node.name === 'UnquotedLabelMatcher') {
        const label = node.node.getChild('LabelName');
        const op = node.node.getChild('MatchOp');
        const value = node.node.getChild('StringLiteral');
        if (label && op && value && expr.slice(label.from, label.to) === '__name__' && expr.slice(op.from, op.to) === '=') {
          names.add(JSON.parse(expr.slice(value.from, value.to)) as string);
        }
      }
    },
  });
  if (errors.length > 0) throw new Error(`not PromQL (${errors.join('; ')}): ${expr}`);
  return names;
}

/**
 * A Grafana expression as Prometheus would receive it: the interval variables become a duration,
 * any other variable (`$instance`, `${instance}`) a regex matching everything.
 */
export function grafanaToPromql(expr: string): string {
  return expr
    .replace(/\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}/g, '5m')
    .replace(/\$\{\w+\}|\$\w+/g, '.*');
}

export interface RuleExpr {
  alert: string;
  expr: string;
}

export function alertRules(): RuleExpr[] {
  const doc = parseYaml(readFileSync(ALERTS_FILE, 'utf8')) as { groups: { rules: { alert?: string; record?: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => ({ alert: r.alert ?? r.record ?? '?', expr: r.expr })));
}

export interface PanelExpr {
  panel: string;
  expr: string;
}

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** Every PromQL expression of the dashboard: its panels' queries and its query variables' selectors. */
export function dashboardExprs(): PanelExpr[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as {
    panels: Panel[];
    templating: { list: { name: string; type: string; query?: string | { query: string } }[] };
  };
  const out: PanelExpr[] = [];
  const visit = (panel: Panel) => {
    for (const t of panel.targets ?? []) if (t.expr) out.push({ panel: panel.title ?? '?', expr: grafanaToPromql(t.expr) });
    for (const inner of panel.panels ?? []) visit(inner);
  };
  dashboard.panels.forEach(visit);
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query' || !variable.query) continue;
    const query = typeof variable.query === 'string' ? variable.query : variable.query.query;
    const selector = /^label_values\((.+),\s*\w+\)$/.exec(query.trim());
    out.push({ panel: `variable ${variable.name}`, expr: grafanaToPromql(selector ? selector[1]! : query) });
  }
  return out;
}

/**
 * The metric names an exposition declares or samples: a histogram's or summary's declared name
 * stands for its _bucket, _sum and _count series too (a labelled one shows no sample until its
 * first observation).
 */
export function exposedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) {
      const [, name, kind] = type as unknown as [string, string, string];
      names.add(name);
      if (kind === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
      if (kind === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (sample) names.add(sample[1]!);
  }
  return names;
}

/** Series Prometheus itself adds to every scrape target, never in an exposition. */
export const SCRAPE_SERIES = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped', 'scrape_samples_post_metric_relabeling', 'scrape_series_added']);
