/**
 * The metric names a PromQL expression reads, and the series names logdrain's
 * registry exposes: what the deployment-file test compares. Not a PromQL
 * parser: it removes everything that cannot be a metric name (strings, label
 * matchers, ranges, grouping clauses, Grafana variables, numbers), then every
 * identifier left is a function or keyword when it is one, a metric otherwise.
 */
import { createMetrics } from '../../../src/telemetry/metrics.js';

/** PromQL functions and aggregation operators, plus Grafana's label_values. */
export const PROMQL_FUNCTIONS = new Set([
  'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile',
  'abs', 'absent', 'absent_over_time', 'ceil', 'changes', 'clamp', 'clamp_max', 'clamp_min', 'day_of_month', 'day_of_week',
  'day_of_year', 'days_in_month', 'delta', 'deriv', 'exp', 'floor', 'histogram_quantile', 'holt_winters', 'hour', 'idelta',
  'increase', 'irate', 'label_join', 'label_replace', 'ln', 'log2', 'log10', 'minute', 'month', 'predict_linear', 'rate',
  'resets', 'round', 'scalar', 'sgn', 'sort', 'sort_desc', 'sqrt', 'time', 'timestamp', 'vector', 'year',
  'avg_over_time', 'min_over_time', 'max_over_time', 'sum_over_time', 'count_over_time', 'quantile_over_time',
  'stddev_over_time', 'stdvar_over_time', 'last_over_time', 'present_over_time',
  'label_values',
]);
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
/** Series Prometheus makes itself: scrape health and the alert state of its rules. */
export const PROMETHEUS_OWN = new Set(['up', 'ALERTS', 'ALERTS_FOR_STATE']);

export interface PromqlNames {
  metrics: string[];
  functions: string[];
}

export function promqlNames(expr: string): PromqlNames {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const metrics = new Set<string>();
  const functions = new Set<string>();
  for (const m of bare.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const name = m[1]!;
    if (KEYWORDS.has(name.toLowerCase())) continue;
    if (m[2]) functions.add(name);
    else metrics.add(name);
  }
  return { metrics: [...metrics], functions: [...functions] };
}

/** Every series name the registry exposes: histograms as _bucket, _sum and _count. */
export async function registrySeriesNames(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const m of await createMetrics('worker').registry.getMetricsAsJSON()) {
    const type = String(m.type); // typed as a numeric enum; the JSON carries the type name
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s);
    else if (type === 'summary') for (const s of ['', '_sum', '_count']) names.add(m.name + s);
    else names.add(m.name);
  }
  return names;
}

/** What the expressions read that neither the registry nor Prometheus has, and unknown functions. */
export function unknownNames(exprs: readonly string[], series: ReadonlySet<string>): { metrics: string[]; functions: string[] } {
  const metrics = new Set<string>();
  const functions = new Set<string>();
  for (const e of exprs) {
    const n = promqlNames(e);
    for (const m of n.metrics) if (!series.has(m) && !PROMETHEUS_OWN.has(m)) metrics.add(m);
    for (const f of n.functions) if (!PROMQL_FUNCTIONS.has(f)) functions.add(f);
  }
  return { metrics: [...metrics], functions: [...functions] };
}
