/**
 * Scrubbing off the routing thread: records too heavy for it are scrubbed by
 * the pool (the same result as inline), a scrub past its budget is withheld
 * and its worker replaced, and the pipeline routes light records at once
 * while a heavy one is scrubbed beside it.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createScrubPool } from '../../../src/shape/scrub-pool.js';
import { compileScrubber, INLINE_SCRUB_WORK, SCRUBBED, scrubbedTextLength } from '../../../src/shape/scrubber.js';
import type { DeliveredRecord } from '../../../src/shape/delivered-record.js';
import { drainRow, pipelineFor } from '../pipeline/fixture.js';

/** Four rules at the per-rule cost bound: on random text over a small alphabet RE2 takes seconds for 256 KB. */
const COSTLY = ['b.{250}c', '[a-z]{255}x', 'q[0-9a-f]{250}', '(?:ab){120}z'].map((pattern, i) => ({ id: `r${i}`, pattern }));
const randomText = (n: number) => Array.from({ length: n }, () => 'abcdef'[Math.floor(Math.random() * 6)]).join('');
const delivered = (body: string, attributes: Record<string, string | number> = {}): DeliveredRecord =>
  ({ id: 'rec', timestamp: '', observedTimestamp: '', eventName: 'svc.mcp.call', severityNumber: 9, severityText: 'INFO', body, attributes });

describe('scrub pool', () => {
  const pools: ReturnType<typeof createScrubPool>[] = [];
  afterAll(async () => {
    for (const p of pools) await p.close();
  });

  it('scrubs as the inline scrubber does', async () => {
    const pool = createScrubPool();
    pools.push(pool);
    const scrubber = compileScrubber([{ id: 'tok', pattern: 'tok_[0-9]{6}' }]);
    const off = delivered('pay with tok_123456 now', { note: 'tok_654321', n: 3 });
    const inline = delivered('pay with tok_123456 now', { note: 'tok_654321', n: 3 });
    expect(await pool.scrub(scrubber, off)).toBe(scrubber.scrubRecord(inline));
    expect(off).toEqual(inline);
    expect(off.body).toBe(`pay with ${SCRUBBED} now`);
  });

  it('withholds a record whose scrub overruns its budget, and goes on with a fresh worker', async () => {
    const withheld: string[] = [];
    const pool = createScrubPool({ size: 1, budgetMs: 100, onWithheld: (id) => withheld.push(id) });
    pools.push(pool);
    const costly = compileScrubber(COSTLY);
    const heavy = delivered(randomText(256 * 1024), { other: randomText(1000), n: 1 });
    expect(await pool.scrub(costly, heavy)).toBe(2);
    expect(heavy.body).toBe(SCRUBBED);
    expect(heavy.attributes).toEqual({ other: SCRUBBED, n: 1 });
    expect(withheld).toEqual(['rec']);
    expect(pool.withheld).toBe(1);
    const light = delivered('tok_123456');
    expect(await pool.scrub(compileScrubber([{ id: 't', pattern: 'tok_[0-9]{6}' }]), light)).toBe(1);
    expect(light.body).toBe(SCRUBBED);
  });
});

describe('pipeline with a scrub pool', () => {
  it('routes light records at once and scrubs a heavy one beside them, never on the routing thread', async () => {
    const pool = createScrubPool();
    try {
      const scrubRules = [...COSTLY, { id: 'tok', pattern: 'tok_[0-9]{6}' }];
      const p = pipelineFor([drainRow('costly', { scrubRules })], { scrubPool: pool });
      const plan = p.plans[0]!;
      const inline = vi.spyOn(plan.scrubber, 'scrubRecord');
      const base = { orgId: 'org_acme', agentId: 'agt', agentName: 'bot', environment: 'production', source: 'mcp', event: 'call', severity: 'info', timestamp: '2026-11-23T10:00:00Z', executionId: 'x' };
      const heavyText = `${randomText(64 * 1024)} tok_123456`;
      expect(scrubbedTextLength({ message: heavyText }) * plan.scrubber.cost).toBeGreaterThan(INLINE_SCRUB_WORK);
      p.route([
        JSON.stringify({ ...base, id: 'light-1', message: 'tok_111111 here' }),
        JSON.stringify({ ...base, id: 'heavy', message: heavyText }),
        JSON.stringify({ ...base, id: 'light-2', message: 'plain' }),
      ]);
      // The light records were scrubbed inline and are in the batch already; the heavy one was not scrubbed here.
      expect(inline).toHaveBeenCalledTimes(2);
      const collected: DeliveredRecord[] = [];
      const records = await vi.waitFor(() => {
        collected.push(...p.flush().flatMap((b) => b.entries.map((e) => JSON.parse(e.json) as DeliveredRecord)));
        expect(collected.map((r) => r.id).sort()).toEqual(['heavy', 'light-1', 'light-2']);
        return collected;
      }, { timeout: 20_000 });
      expect(inline).toHaveBeenCalledTimes(2);
      const heavy = records.find((r) => r.id === 'heavy')!;
      expect(heavy.body).not.toContain('tok_123456');
      expect(records.find((r) => r.id === 'light-1')!.body).toBe(`${SCRUBBED} here`);
    } finally {
      await pool.close();
    }
  });
});
