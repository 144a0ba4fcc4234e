/**
 * A drain's selectors compiled once per configuration version into one
 * predicate (which records a drain wants), plus deterministic head sampling
 * of debug records by execution.
 */
import { CONTENT_SOURCES, SEVERITIES, type Selectors, type Severity } from '../model/drain.js';
import type { AgentRecord } from '../model/record.js';

const RANK: Record<Severity, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** A selector's answer: not wanted, wanted, or wanted but left out by debug sampling (counted apart). */
export const SKIP = 0;
export const SELECTED = 1;
export const SAMPLED_OUT = 2;
export type Verdict = typeof SKIP | typeof SELECTED | typeof SAMPLED_OUT;

export type Selector = (record: AgentRecord) => Verdict;

export function compileSelector(selectors: Selectors, sampling: { debug: number } | null): Selector {
  const minRank = RANK[selectors.minSeverity];
  const sources = selectors.sources === null ? null : new Set(selectors.sources);
  const agents = selectors.agents === '*' ? null : new Set(selectors.agents);
  const environments = new Set<string>(selectors.environments);
  const debugRate = sampling?.debug ?? 1;
  return (r) => {
    if (RANK[r.severity] < minRank) return SKIP;
    if (sources === null ? CONTENT_SOURCES.includes(r.source) : !sources.has(r.source)) return SKIP;
    if (agents !== null && !agents.has(r.agentId)) return SKIP;
    if (!environments.has(r.environment)) return SKIP;
    if (r.severity === 'debug' && debugRate < 1 && !sampledIn(r.executionId, debugRate)) return SAMPLED_OUT;
    return SELECTED;
  };
}

/**
 * Head sampling keyed by execution: FNV-1a of the execution id, mixed with
 * murmur3's finalizer (FNV alone spreads similar ids poorly), mapped to [0, 1). The same id gives the same answer on every worker, restart and
 * retry, so an execution's debug records are kept or dropped together.
 */
export function sampledIn(executionId: string, rate: number): boolean {
  let h = 0x811c9dc5;
  for (let i = 0; i < executionId.length; i++) {
    h ^= executionId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 0x1_0000_0000 < rate;
}

export const SEVERITY_ORDER = SEVERITIES;
