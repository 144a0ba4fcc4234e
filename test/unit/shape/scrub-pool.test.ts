/**
 * Scrubbing off the routing thread: records too heavy for it are scrubbed by
 * the pool (the same result as inline), a scrub past its budget is withheld
 * and its worker replaced, and the pipeline routes light records at once
 * while a heavy one is scrubbed beside it. One organization's flood of heavy
 * records does not hold back another's (the pool's start order, observed).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createScrubPool } from '../../../src/shape/scrub-pool.js';
import { compileScrubber, INLINE_SCRUB_WORK, SCRUBBED, scrubbedTextLength } from '../../../src/shape/scrubber.js';
import type { DeliveredRecord } from '../../../src/shape/delivered-record.js';
import { drainRow, pipelineFor } from '../pipeline/fixture.js';
import { SCRUB_DEFERRED, scrubParkedJson } from '../../../src/shape/deferred-scrub.js';

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
    expect(await pool.scrub(scrubber, off, 'org_a')).toBe(scrubber.scrubRecord(inline));
    expect(off).toEqual(inline);
    expect(off.body).toBe(`pay with ${SCRUBBED} now`);
  });

  it('withholds a record whose scrub overruns its budget, and goes on with a fresh worker', async () => {
    const withheld: string[] = [];
    const pool = createScrubPool({ size: 1, budgetMs: 100, onWithheld: (id) => withheld.push(id) });
    pools.push(pool);
    const costly = compileScrubber(COSTLY);
    const heavy = delivered(randomText(256 * 1024), { other: randomText(1000), n: 1 });
    expect(await pool.scrub(costly, heavy, 'org_a')).toBe(2);
    expect(heavy.body).toBe(SCRUBBED);
    expect(heavy.attributes).toEqual({ other: SCRUBBED, n: 1 });
    expect(withheld).toEqual(['rec']);
    expect(pool.withheld).toBe(1);
    const light = delivered('tok_123456');
    expect(await pool.scrub(compileScrubber([{ id: 't', pattern: 'tok_[0-9]{6}' }]), light, 'org_a')).toBe(1);
    expect(light.body).toBe(SCRUBBED);
  });
});

describe('scrub pool fairness between organizations', () => {
  /** Resolves at the first start the pool reports: awaited, it goes on before any worker's next message. */
  const firstStart = () => {
    let started!: () => void;
    return { seen: new Promise<void>((r) => (started = r)), started: () => started() };
  };

  // Each job running when the victim's record comes ends within the budget (done, or withheld at it);
  // the victim's job starts on the first thread that frees, so it waits at most one job's budget.
  for (const size of [1, 2]) {
    it(`starts another organization's heavy record on the first thread to free, not after a flood (${size} thread${size > 1 ? 's' : ''})`, async () => {
      const starts: { id: string; orgId: string }[] = [];
      const first = firstStart();
      const pool = createScrubPool({ size, budgetMs: 300, onStart: (id, orgId) => {
        starts.push({ id, orgId });
        first.started();
      } });
      try {
        const costly = compileScrubber(COSTLY);
        // Records of 250 KB under costly rules: each overruns the budget and is withheld at it.
        const text = randomText(250 * 1024);
        const flood = Array.from({ length: 8 }, (_, i) => pool.scrub(costly, { ...delivered(text), id: `flood-${i}` }, 'org_flood'));
        await first.seen;
        const victimRules = compileScrubber([...COSTLY, { id: 'tok', pattern: 'tok_[0-9]{6}' }]);
        const victim = { ...delivered(`${randomText(2000)} tok_123456`), id: 'victim' };
        const startsBefore = starts.length;
        expect(await pool.scrub(victimRules, victim, 'org_victim')).toBeGreaterThanOrEqual(1);
        expect(victim.body).toContain(SCRUBBED);
        expect(victim.body).not.toContain('tok_123456');
        const at = starts.findIndex((s) => s.id === 'victim');
        // Not one of the flooder's queued jobs started between the victim's record coming and its start.
        expect(starts.slice(startsBefore, at).filter((s) => s.orgId === 'org_flood')).toEqual([]);
        expect(at).toBeLessThanOrEqual(size);
        await pool.close();
        // The flooder's records are withheld (budget overrun or the close), never lost.
        for (const hits of await Promise.all(flood)) expect(hits).toBeGreaterThanOrEqual(1);
        expect(starts.filter((s) => s.orgId === 'org_flood').map((s) => s.id)).toEqual(starts.filter((s) => s.orgId === 'org_flood').map((_, i) => `flood-${i}`));
      } finally {
        await pool.close();
      }
    });
  }

  it('keeps an organization\'s jobs past the cap in its own backlog and scrubs them all, in order', async () => {
    const starts: string[] = [];
    const pool = createScrubPool({ size: 1, maxQueuedPerOrg: 3, onStart: (id) => starts.push(id) });
    try {
      const scrubber = compileScrubber([{ id: 'tok', pattern: 'tok_[0-9]{6}' }]);
      const records = Array.from({ length: 10 }, (_, i) => ({ ...delivered(`tok_12345${i}`), id: `r${i}` }));
      const done = records.map((r) => pool.scrub(scrubber, r, 'org_flood'));
      expect(pool.waiting('org_flood')).toEqual({ queued: 3, backlogged: 7 });
      expect(await Promise.all(done)).toEqual(records.map(() => 1));
      expect(records.map((r) => r.body)).toEqual(records.map(() => SCRUBBED));
      expect(starts).toEqual(records.map((r) => r.id));
      expect(pool.waiting('org_flood')).toEqual({ queued: 0, backlogged: 0 });
    } finally {
      await pool.close();
    }
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

  it('hands the pool each heavy record with its organization: a flood of one does not hold back another\'s', async () => {
    const starts: { id: string; orgId: string }[] = [];
    const pool = createScrubPool({ onStart: (id, orgId) => starts.push({ id, orgId }) });
    try {
      const scrubRules = [...COSTLY, { id: 'tok', pattern: 'tok_[0-9]{6}' }];
      const p = pipelineFor([drainRow('flood', { orgId: 'org_flood', scrubRules }), drainRow('victim', { orgId: 'org_victim', scrubRules })], { scrubPool: pool });
      const base = { agentId: 'agt', agentName: 'bot', environment: 'production', source: 'mcp', event: 'call', severity: 'info', timestamp: '2026-11-23T10:00:00Z', executionId: 'x' };
      const text = () => `${randomText(2000)} tok_123456`;
      expect(scrubbedTextLength({ message: text() }) * p.plans[0]!.scrubber.cost).toBeGreaterThan(INLINE_SCRUB_WORK);
      p.route(Array.from({ length: 10 }, (_, i) => JSON.stringify({ ...base, orgId: 'org_flood', id: `flood-${i}`, message: text() })));
      p.route([JSON.stringify({ ...base, orgId: 'org_victim', id: 'victim', message: text() })]);
      const collected: DeliveredRecord[] = [];
      await vi.waitFor(() => {
        collected.push(...p.flush().flatMap((b) => b.entries.map((e) => JSON.parse(e.json) as DeliveredRecord)));
        expect(collected).toHaveLength(11);
      }, { timeout: 20_000 });
      expect(collected.every((r) => !String(r.body).includes('tok_123456'))).toBe(true);
      // At most the flooder's first job started before the victim's: the pool's threads were starting
      // when both came, and the victim's organization had nothing running.
      expect(starts.findIndex((s) => s.id === 'victim')).toBeLessThanOrEqual(1);
      expect(starts.filter((s) => s.orgId === 'org_flood').map((s) => s.id)).toEqual(Array.from({ length: 10 }, (_, i) => `flood-${i}`));
    } finally {
      await pool.close();
    }
  });

  it('parks an organization\'s heavy records past its cap unscrubbed, holding nothing, for the pump to scrub', async () => {
    const starts: string[] = [];
    const pool = createScrubPool({ size: 1, maxQueuedPerOrg: 2, onStart: (id) => starts.push(id) });
    try {
      const scrubRules = [{ id: 'tok', pattern: 'tok_[0-9]{6}' }, ...COSTLY.slice(0, 1)];
      const p = pipelineFor([drainRow('flood', { orgId: 'org_flood', scrubRules })], { scrubPool: pool });
      const base = { orgId: 'org_flood', agentId: 'agt', agentName: 'bot', environment: 'production', source: 'mcp', event: 'call', severity: 'info', timestamp: '2026-11-23T10:00:00Z', executionId: 'x' };
      const message = `${'x'.repeat(4000)} tok_123456`;
      expect(scrubbedTextLength({ message }) * p.plans[0]!.scrubber.cost).toBeGreaterThan(INLINE_SCRUB_WORK);
      const ticket = p.route(Array.from({ length: 8 }, (_, i) => JSON.stringify({ ...base, id: `r${i}`, message })));
      // Two queued (the pool's thread is still starting); the six after them parked, not waiting in the pool.
      expect(pool.waiting('org_flood')).toEqual({ queued: 2, backlogged: 0 });
      const parked = p.accounted.flatMap((e) => e.backlog ?? []);
      expect(parked.map((r) => r.recordId)).toEqual(['r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
      expect(parked.every((r) => r.scrubHits === SCRUB_DEFERRED && r.recordJson.includes('tok_123456'))).toBe(true);
      // Once the parked rows are written the chunk holds only the two in the pool.
      await vi.waitFor(() => expect(ticket.inFlightShare).toBe(2));
      // The pump's scrub of a parked row: through the pool, as a live one.
      // (Parked as the entry's UTF-8 bytes; the pump reads a row's text back from the store.)
      const { json, scrubHits } = await scrubParkedJson(parked[0]!.recordJson.toString(), p.plans[0]!.scrubber, 'org_flood', pool);
      expect(scrubHits).toBe(1);
      expect(json).not.toContain('tok_123456');
      expect(starts).toContain('r2');
    } finally {
      await pool.close();
    }
  });
});
