/**
 * The accounting of records not delivered: what routing counts per drain (seen, selector, sampling,
 * dead letters naming the organization), the entries a delivery ends in, how a flush adds
 * increments up, and the bounded reasons.
 */
import { describe, expect, it } from 'vitest';
import { drainRow, pipelineFor } from '../pipeline/fixture.js';
import { addHourly } from '../../../src/account/accountant.js';
import { droppedEntry, reachedEntry, successEntry } from '../../../src/account/entries.js';
import { serviceBatch } from '../../../src/batch/service-batch.js';
import { dropReasonOf, deadLetterDropReason, DROP_REASONS, FAILURE_REASONS } from '../../../src/model/drop-reasons.js';
import { orgIdOf, MAX_RECORD_BYTES } from '../../../src/model/record.js';
import { sampledIn } from '../../../src/select/selector.js';
import type { HourlyIncrement } from '../../../src/modules/drains/tables/health.js';
import type { AttemptResult } from '../../../src/account/entries.js';

const rec = (over: Record<string, unknown> = {}) => ({
  id: `r-${Math.random().toString(36).slice(2)}`, orgId: 'org_acme', agentId: 'agt', agentName: 'a', environment: 'production',
  source: 'mcp', event: 'call', severity: 'info', timestamp: new Date().toISOString(), executionId: 'exe-1', ...over,
});
const hourlyOf = (p: ReturnType<typeof pipelineFor>) => p.accounted.flatMap((e) => e.hourly ?? []);
const byDrain = (rows: HourlyIncrement[], drainId: string) => {
  const sum: HourlyIncrement = { drainId, h: 0, delivered: 0, dropped: 0, rejected: 0 };
  for (const r of rows.filter((x) => x.drainId === drainId)) addHourly(sum, r);
  return sum;
};

describe('routing counts what reached each drain', () => {
  it('counts every record of the organization seen, with selector, sampling and dead-letter drops per drain', () => {
    const keptExe = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((x) => `exe-${x}`).find((e) => sampledIn(e, 0.5))!;
    const outExe = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((x) => `exe-${x}`).find((e) => !sampledIn(e, 0.5))!;
    const p = pipelineFor([
      drainRow('drn_errors', { selectors: { ...drainRow('x').selectors, minSeverity: 'error' } }),
      drainRow('drn_sampled', { sampling: { debug: 0.5 } }),
      drainRow('drn_globex', { orgId: 'org_globex' }),
    ]);
    p.route([
      JSON.stringify(rec({ severity: 'error' })),
      JSON.stringify(rec({ severity: 'info' })),
      JSON.stringify(rec({ severity: 'debug', executionId: keptExe })),
      JSON.stringify(rec({ severity: 'debug', executionId: outExe })),
      // Malformed, naming org_acme: both of its drains saw it and lost it.
      JSON.stringify(rec({ severity: 'loud' })),
      // Over the size limit, naming org_acme.
      JSON.stringify(rec({ message: 'x'.repeat(MAX_RECORD_BYTES) })),
      // Malformed without a readable organization: no drain's.
      'not json',
      null,
    ]);
    const rows = hourlyOf(p);
    expect(byDrain(rows, 'drn_errors')).toMatchObject({ seen: 6, dropped: 2, delivered: 0, droppedBy: { selector: 3, sampling: 0, oversize: 1, dead_letter: 1 } });
    expect(byDrain(rows, 'drn_sampled')).toMatchObject({ seen: 6, dropped: 2, delivered: 0, droppedBy: { selector: 0, sampling: 1, oversize: 1, dead_letter: 1 } });
    expect(rows.some((r) => r.drainId === 'drn_globex')).toBe(false);
    // The selected records are in batches, not counted as dropped: 1 for drn_errors, 3 for drn_sampled.
    const batches = p.flush();
    const inBatches = (id: string) => batches.filter((b) => b.plan.drain.id === id).reduce((n, b) => n + b.entries.length, 0);
    expect(inBatches('drn_errors')).toBe(1);
    expect(inBatches('drn_sampled')).toBe(3);
  });

  it('counts records of a paused drain seen as it parks them', () => {
    const p = pipelineFor([drainRow('drn_paused', { state: 'paused', pauseReason: 'manual' })]);
    p.route([JSON.stringify(rec()), JSON.stringify(rec())]);
    const entry = p.accounted.find((e) => (e.backlog ?? []).length > 0)!;
    expect(entry.backlog).toHaveLength(2);
    // In the same write as the parked rows, so parked never runs ahead of seen.
    expect(byDrain(entry.hourly ?? [], 'drn_paused')).toMatchObject({ seen: 2, dropped: 0 });
  });
});

describe('the entries a delivery ends in', () => {
  const drain = drainRow('drn_e');
  const ok = (n: number): AttemptResult => ({
    outcome: { status: 'success', rejected: 0 },
    row: { id: 'd', orgId: drain.orgId, drainId: drain.id, batchId: 'b', kind: 'batch', attempt: 1, recordCount: n, ok: true, startedAt: new Date(), expiresAt: new Date() },
  });

  it('drops count under their bounded reason; the failures in dropped too', () => {
    const ids = ['a', 'b', 'c'];
    expect(droppedEntry(drain, ids, 'http_4xx', 2).hourly[0]).toMatchObject({ dropped: 3, seen: 0, droppedBy: { permanent: 3 } });
    expect(droppedEntry(drain, ids, 'quota', 0).hourly[0]).toMatchObject({ dropped: 3, droppedBy: { quota: 3 } });
    expect(droppedEntry(drain, ids, 'horizon', 0).hourly[0]).toMatchObject({ dropped: 3, droppedBy: { horizon: 3 } });
    // The delivery record keeps the reason as it was given.
    expect(droppedEntry(drain, ids, 'http_4xx', 2).deliveries[0]!.errorClass).toBe('http_4xx');
    // A test batch's records are the drain's own: seen when they settle.
    expect(droppedEntry(drain, ['t'], 'superseded', 2, new Date(), true).hourly[0]).toMatchObject({ seen: 1, droppedBy: { permanent: 1 } });
  });

  it('counts a test or heartbeat batch seen when delivered, an organization batch only delivered', () => {
    const plan = pipelineFor([drain]).plans[0]!;
    expect(successEntry(serviceBatch(plan, 'heartbeat', undefined), ok(1)).hourly![0]).toMatchObject({ delivered: 1, seen: 1 });
    expect(successEntry(serviceBatch(plan, 'test', undefined), ok(1)).hourly![0]).toMatchObject({ delivered: 1, seen: 1 });
    expect(successEntry({ ...serviceBatch(plan, 'test', undefined), kind: 'batch' }, ok(1)).hourly![0]).toMatchObject({ delivered: 1, seen: 0 });
  });

  it('reached counts: seen, and only oversize and dead_letter in dropped', () => {
    expect(reachedEntry('d', 10, { selector: 4, sampling: 2, oversize: 1, dead_letter: 2 }, 7_200_000)).toEqual({
      drainId: 'd', h: 2, delivered: 0, dropped: 3, rejected: 0, seen: 10, droppedBy: { selector: 4, sampling: 2, oversize: 1, dead_letter: 2 },
    });
  });

  it('a flush adds increments of one drain and hour into one', () => {
    const into: HourlyIncrement = { drainId: 'd', h: 1, delivered: 1, dropped: 0, rejected: 0 };
    addHourly(into, { drainId: 'd', h: 1, delivered: 2, dropped: 1, rejected: 1, seen: 4, droppedBy: { quota: 1 } });
    addHourly(into, { drainId: 'd', h: 1, delivered: 0, dropped: 2, rejected: 0, seen: 3, droppedBy: { quota: 1, dead_letter: 1, selector: 1 } });
    expect(into).toEqual({ drainId: 'd', h: 1, delivered: 3, dropped: 3, rejected: 1, seen: 7, droppedBy: { quota: 2, dead_letter: 1, selector: 1 } });
  });
});

describe('drop reasons', () => {
  it('is one bounded set: five failures, two intentional', () => {
    expect(DROP_REASONS).toEqual(['quota', 'horizon', 'permanent', 'oversize', 'dead_letter', 'sampling', 'selector']);
    expect(FAILURE_REASONS).not.toContain('sampling');
    for (const r of ['http_4xx', 'http_3xx', 'ssrf', 'internal', 'superseded']) expect(dropReasonOf(r)).toBe('permanent');
    expect(dropReasonOf('quota')).toBe('quota');
    expect(dropReasonOf('horizon')).toBe('horizon');
    expect(deadLetterDropReason('too_large')).toBe('oversize');
    for (const c of ['not_json', 'invalid', 'empty']) expect(deadLetterDropReason(c)).toBe('dead_letter');
  });

  it('reads the organization a refused message names, when it names one', () => {
    expect(orgIdOf(JSON.stringify({ orgId: 'org_a', severity: 'loud' }))).toBe('org_a');
    expect(orgIdOf(Buffer.from(JSON.stringify({ orgId: 'org_b', message: 'x'.repeat(MAX_RECORD_BYTES) })))).toBe('org_b');
    expect(orgIdOf('not json')).toBeUndefined();
    expect(orgIdOf('[1]')).toBeUndefined();
    expect(orgIdOf(JSON.stringify({ orgId: 7 }))).toBeUndefined();
    expect(orgIdOf(JSON.stringify({ orgId: '' }))).toBeUndefined();
    expect(orgIdOf(JSON.stringify({ orgId: 'o'.repeat(129) }))).toBeUndefined();
  });
});
