/**
 * The batcher: one open batch per (drain plan, resource), closed at the
 * record limit, before the byte limit would be passed, after the linger
 * time, or on flushAll; tickets travel with their entries.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBatcher, type ReadyBatch, type RoutedRecord } from '../../../src/batch/batcher.js';
import { resourceKey } from '../../../src/model/resource.js';
import { shapeRecord } from '../../../src/shape/delivered-record.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';
import { Ticket } from '../../../src/source/offset-tracker.js';
import { drainRow, pipelineFor } from '../pipeline/fixture.js';

const agents = [{ id: 'agt_a', name: 'a' }, { id: 'agt_b', name: 'b' }];
const routed: RoutedRecord[] = [...syntheticRecords(40, { orgs: [{ orgId: 'org_acme', agents }], seed: 9 })].map((source) => {
  const record = shapeRecord(source, '2026-11-23T10:00:00Z', { includeContent: true, redact: null });
  const json = JSON.stringify(record);
  return { source, resourceKey: resourceKey(source), entry: { id: record.id, record, json, scrubHits: 0 }, bytes: Buffer.byteLength(json) };
});
const [p1, p2] = pipelineFor([drainRow('d1'), drainRow('d2')]).plans;

afterEach(() => void vi.useRealTimers());

describe('batcher', () => {
  it('keeps one batch per plan and resource, closes at the record limit, and flushes the rest', () => {
    const ready: ReadyBatch[] = [];
    const b = createBatcher({ maxRecords: 5, maxBytes: 1 << 30, lingerMs: 60_000, onReady: (x) => ready.push(x) });
    const ticket = new Ticket(routed.length, () => {});
    for (const r of routed) {
      b.add(p1!, r, ticket);
      b.add(p2!, r, ticket);
    }
    expect(ready.every((x) => x.entries.length === 5)).toBe(true);
    const open = b.openBatches;
    b.flushAll();
    expect(b.openBatches).toBe(0);
    expect(ready.length).toBeGreaterThan(open);
    for (const plan of [p1!, p2!]) {
      const mine = ready.filter((x) => x.plan === plan);
      expect(mine.flatMap((x) => x.entries).map((e) => e.record.id).sort()).toEqual(routed.map((r) => r.entry.record.id).sort());
      for (const x of mine) {
        expect(new Set(x.entries.map((e) => routed.find((r) => r.entry === e)!.resourceKey)).size).toBe(1);
        expect(x.resource['service.instance.id']).toBe(routed.find((r) => r.entry === x.entries[0])!.source.agentId);
        expect(x.tickets).toHaveLength(x.entries.length);
        expect(x.bytes).toBe(x.entries.reduce((n, e) => n + Buffer.byteLength(e.json), 0));
      }
    }
  });

  it("hands back a drain's open batches (takeOpen), and refuses the record whose arrival closed a batch if the drain stopped taking records live", () => {
    const ready: ReadyBatch[] = [];
    const oneAgent = routed.filter((r) => r.source.agentId === 'agt_a');
    const limit = oneAgent[0]!.bytes + oneAgent[1]!.bytes + 1;
    let live = true;
    let taken: ReadyBatch[] = [];
    const b = createBatcher({
      maxRecords: 1000, maxBytes: limit, lingerMs: 60_000, takesLive: () => live,
      onReady: (x) => {
        // What the worker does when a spill starts with this batch: the drain's other open batches come back too.
        ready.push(x);
        live = false;
        taken = b.takeOpen(x.plan.drain.id);
      },
    });
    const other = routed.find((r) => r.source.agentId === 'agt_b')!;
    const ticket = new Ticket(routed.length, () => {});
    expect(b.add(p1!, other, ticket)).toBe(true);
    expect(b.add(p2!, other, ticket)).toBe(true); // another drain's batch: not taken
    expect(b.add(p1!, oneAgent[0]!, ticket)).toBe(true);
    expect(b.add(p1!, oneAgent[1]!, ticket)).toBe(true);
    // The third record would pass the byte limit: the batch closes, the drain stops taking records live.
    expect(b.add(p1!, oneAgent[2]!, ticket)).toBe(false);
    expect(ready.map((x) => x.entries)).toEqual([[oneAgent[0]!.entry, oneAgent[1]!.entry]]);
    expect(taken.map((x) => x.entries)).toEqual([[other.entry]]);
    expect(taken[0]!.plan).toBe(p1);
    expect(b.openBatches).toBe(1);
    expect(b.takeOpen(p1!.drain.id)).toEqual([]);
    b.flushAll();
    expect(ready.at(-1)!.plan).toBe(p2);
  });

  it('closes a batch before the byte limit would be passed, never leaving a record out', () => {
    const ready: ReadyBatch[] = [];
    const oneAgent = routed.filter((r) => r.source.agentId === 'agt_a');
    const limit = oneAgent[0]!.bytes + oneAgent[1]!.bytes + oneAgent[2]!.bytes;
    const b = createBatcher({ maxRecords: 1000, maxBytes: limit, lingerMs: 60_000, onReady: (x) => ready.push(x) });
    for (const r of oneAgent) b.add(p1!, r, new Ticket(1, () => {}));
    b.flushAll();
    expect(ready.flatMap((x) => x.entries)).toEqual(oneAgent.map((r) => r.entry));
    for (const x of ready) expect(x.bytes <= limit || x.entries.length === 1).toBe(true);
    expect(ready[0]!.entries).toHaveLength(3);
  });

  it('at the cap, hands on the fullest open batches until half the open records are on their way, the rest left filling', () => {
    const ready: ReadyBatch[] = [];
    const b = createBatcher({ maxRecords: 1000, maxBytes: 1 << 30, lingerMs: 60_000, onReady: (x) => ready.push(x) });
    const byAgent = (id: string) => routed.filter((r) => r.source.agentId === id);
    const [a, bb] = [byAgent('agt_a'), byAgent('agt_b')];
    // Plan 1: agent a 12 records, agent b 3; plan 2: agent a 5, agent b 4 (24 open records in four batches).
    for (const r of a.slice(0, 12)) b.add(p1!, r, new Ticket(1, () => {}));
    for (const r of bb.slice(0, 3)) b.add(p1!, r, new Ticket(1, () => {}));
    for (const r of a.slice(0, 5)) b.add(p2!, r, new Ticket(1, () => {}));
    for (const r of bb.slice(0, 4)) b.add(p2!, r, new Ticket(1, () => {}));
    b.flushFullest();
    expect(ready.map((x) => x.entries.length)).toEqual([12]);
    expect(b.openBatches).toBe(3);
    b.flushFullest();
    // Of the 12 left open: the 5 first, then the 4 (9 of 12, past half).
    expect(ready.map((x) => x.entries.length)).toEqual([12, 5, 4]);
    expect(b.openBatches).toBe(1);
    b.flushFullest();
    expect(b.openBatches).toBe(0);
    expect(ready.map((x) => x.entries.length)).toEqual([12, 5, 4, 3]);
  });

  it('at the cap with more open batches than are worth sorting, hands them all on', () => {
    const ready: ReadyBatch[] = [];
    const b = createBatcher({ maxRecords: 1000, maxBytes: 1 << 30, lingerMs: 60_000, onReady: (x) => ready.push(x) });
    const many = [...syntheticRecords(1200, { orgs: [{ orgId: 'org_acme', agents: Array.from({ length: 400 }, (_, i) => ({ id: `agt_${i}`, name: `n${i}` })) }], seed: 4 })];
    for (const source of many) {
      const record = shapeRecord(source, '2026-11-23T10:00:00Z', { includeContent: true, redact: null });
      const json = JSON.stringify(record);
      b.add(p1!, { source, resourceKey: resourceKey(source), entry: { id: record.id, record, json, scrubHits: 0 }, bytes: Buffer.byteLength(json) }, new Ticket(1, () => {}));
    }
    expect(b.openBatches).toBeGreaterThan(256);
    b.flushFullest();
    expect(b.openBatches).toBe(0);
    expect(ready.reduce((n, x) => n + x.entries.length, 0)).toBe(1200);
  });

  it('hands a batch on after the linger time', () => {
    vi.useFakeTimers();
    const ready: ReadyBatch[] = [];
    const b = createBatcher({ maxRecords: 1000, maxBytes: 1 << 30, lingerMs: 250, onReady: (x) => ready.push(x) });
    b.add(p1!, routed[0]!, new Ticket(1, () => {}));
    vi.advanceTimersByTime(249);
    expect(ready).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(ready).toHaveLength(1);
    expect(b.openBatches).toBe(0);
    // A later record opens a new batch with its own linger.
    b.add(p1!, routed[0]!, new Ticket(1, () => {}));
    expect(b.openBatches).toBe(1);
    vi.advanceTimersByTime(250);
    expect(ready).toHaveLength(2);
  });
});
