/**
 * Synthetic agent execution records (CONTRACT part 3) for `logdrain produce`,
 * tests and benchmarks: deterministic from a seed, with a size mix and a
 * share of messages carrying scrubbable secrets.
 */
import type { AgentRecord } from '../model/record.js';

export interface SyntheticOptions {
  orgs: readonly { orgId: string; agents: readonly { id: string; name: string; version?: string }[] }[];
  seed?: number;
  /** Share of records whose message holds a bearer token or key-like string. */
  secretShare?: number;
  environment?: 'production' | 'sandbox';
  idPrefix?: string;
}

const SOURCES = ['skill', 'mcp', 'execution', 'agent_error'] as const;
const EVENTS: Record<(typeof SOURCES)[number], string[]> = {
  skill: ['invoked', 'completed'],
  mcp: ['call', 'error'],
  execution: ['started', 'finished', 'step'],
  agent_error: ['raised'],
};
const SEVERITIES = ['debug', 'info', 'info', 'info', 'warn', 'error'] as const;

/** A small deterministic PRNG (mulberry32) so data sets are reproducible. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function* syntheticRecords(count: number, opts: SyntheticOptions): Generator<AgentRecord> {
  const rand = rng(opts.seed ?? 1);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');
  const prefix = opts.idPrefix ?? `r${Date.now().toString(36)}`;
  for (let i = 0; i < count; i++) {
    const org = pick(opts.orgs);
    const agent = pick(org.agents);
    const source = pick(SOURCES);
    const words = 4 + Math.floor(rand() * (rand() < 0.1 ? 120 : 24));
    let message = Array.from({ length: words }, () => pick(['tool', 'call', 'returned', 'user', 'asked', 'for', 'order', 'status', 'latency', 'ok', 'retry', 'cache'])).join(' ');
    if (rand() < (opts.secretShare ?? 0.3)) message += ` Authorization: Bearer ${hex(32)}`;
    const r: AgentRecord = {
      id: `${prefix}-${i}`,
      orgId: org.orgId,
      agentId: agent.id,
      agentName: agent.name,
      environment: opts.environment ?? 'production',
      source,
      event: pick(EVENTS[source]),
      severity: pick(SEVERITIES),
      timestamp: new Date().toISOString(),
      executionId: `exe_${Math.floor(i / 8)}`,
      message,
      traceId: hex(32),
      spanId: hex(16),
      attributes: { 'tool.name': pick(['search', 'lookup', 'crm']), 'duration.ms': Math.floor(rand() * 900), cached: rand() < 0.5 },
    };
    if (agent.version) r.agentVersion = agent.version;
    yield r;
  }
}
