/**
 * Drains of one organization whose output is the same record (same content
 * rule, redaction and scrub rules) share one shaped, scrubbed and serialised
 * record; everything per drain stays per drain: selection, scrubbing rules,
 * redaction, parking, and one ticket hold per (record, drain).
 */
import { describe, expect, it } from 'vitest';
import { drainRow, pipelineFor } from './fixture.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';
import { shapeRecord } from '../../../src/shape/delivered-record.js';
import { compileScrubber } from '../../../src/shape/scrubber.js';
import type { ReadyBatch } from '../../../src/batch/batcher.js';
import { SerialisedEntry, ShapedEntry } from '../../../src/encode/encoder.js';

const agents = [{ id: 'agt_support', name: 'support-bot', version: '4' }, { id: 'agt_sales', name: 'sales-bot' }];
const RECORDS = [...syntheticRecords(200, { orgs: [{ orgId: 'org_acme', agents }], idPrefix: 'acme', seed: 3, secretShare: 0.5 })];
const RAW = RECORDS.map((r) => JSON.stringify(r));
const INDEX = new Map(RECORDS.map((r, i) => [r.id, i]));
/** A drain's entries over all its batches (one per resource), in consumption order. */
const byDrain = (batches: ReadyBatch[], id: string) =>
  batches.filter((b) => b.plan.drain.id === id).flatMap((b) => b.entries).sort((x, y) => INDEX.get(x.record.id)! - INDEX.get(y.record.id)!);

describe('shaping shared between drains', () => {
  it('identical drains share each record object and its JSON, each drain getting every record in its own batches', () => {
    const p = pipelineFor([drainRow('d1'), drainRow('d2'), drainRow('d3', { type: 'otlp', endpoint: 'https://127.0.0.1:1/otlp' })]);
    p.route(RAW);
    const batches = p.flush();
    const [a, b, c] = ['d1', 'd2', 'd3'].map((id) => byDrain(batches, id));
    for (const entries of [a!, b!, c!]) expect(entries.map((e) => e.record.id).sort()).toEqual(RECORDS.map((r) => r.id).sort());
    // The same entry objects: shaped, scrubbed and stringified once for all three.
    a!.forEach((e, i) => {
      expect(b![i]).toBe(e);
      expect(c![i]).toBe(e);
    });
    // Batches themselves stay per drain (their own plan, so their own batch id, signing keys and encoder later).
    expect(new Set(batches.map((x) => x.plan.drain.id))).toEqual(new Set(['d1', 'd2', 'd3']));
    expect(batches.every((x) => x.entries.length > 0)).toBe(true);
    expect(p.plans[0]!.signingKeys[0]).not.toEqual(p.plans[1]!.signingKeys[0]);
  });

  it('what is shared is exactly what each drain would have shaped alone', () => {
    const shared = pipelineFor([drainRow('d1'), drainRow('d2')]);
    shared.route(RAW);
    const alone = pipelineFor([drainRow('d1')]);
    alone.route(RAW);
    const s = byDrain(shared.flush(), 'd2');
    const one = byDrain(alone.flush(), 'd1');
    // Two passes observe at different instants; everything else is equal.
    const unobserved = (json: string) => ({ ...JSON.parse(json), observedTimestamp: undefined });
    expect(s.map((e) => unobserved(e.json))).toEqual(one.map((e) => unobserved(e.json)));
    expect(s.map((e) => e.scrubHits)).toEqual(one.map((e) => e.scrubHits));
    expect(s.some((e) => e.scrubHits > 0)).toBe(true);
  });

  it('drains with different scrub rules, redaction or content rule never share', () => {
    const rules = [{ id: 'r1', pattern: 'order|status' }];
    const p = pipelineFor([
      drainRow('plain'),
      drainRow('scrubs', { scrubRules: rules }),
      drainRow('redacts', { redact: ['tool.name'] }),
      drainRow('withholds', { selectors: { ...drainRow('x').selectors, includeContent: false } }),
    ]);
    p.route(RAW);
    const batches = p.flush();
    const plain = byDrain(batches, 'plain');
    const scrubs = byDrain(batches, 'scrubs');
    const redacts = byDrain(batches, 'redacts');
    const withholds = byDrain(batches, 'withholds');
    const observed = plain[0]!.record.observedTimestamp;
    const expected = (rulesOf: typeof rules | null, redact: string[] | null, includeContent: boolean) =>
      RECORDS.map((r) => {
        const shaped = shapeRecord(r, observed, { includeContent, redact: redact ? new Set(redact) : null });
        compileScrubber(rulesOf).scrubRecord(shaped);
        return JSON.stringify(shaped);
      });
    const jsons = (es: typeof plain) => es.map((e) => e.json);
    expect(jsons(plain)).toEqual(expected(null, null, true));
    expect(jsons(scrubs)).toEqual(expected(rules, null, true));
    expect(jsons(redacts)).toEqual(expected(null, ['tool.name'], true));
    expect(jsons(withholds)).toEqual(expected(null, null, false));
    // The customer rule changed what that drain received, and only that drain.
    expect(plain.some((e) => /order|status/.test(e.record.body ?? ''))).toBe(true);
    expect(scrubs.every((e) => !/order|status/.test(e.record.body ?? ''))).toBe(true);
    expect(redacts.every((e) => !('tool.name' in e.record.attributes))).toBe(true);
    expect(plain.some((e) => 'tool.name' in e.record.attributes)).toBe(true);
    for (const other of [scrubs, redacts, withholds]) for (const e of other) expect(plain).not.toContain(e);
  });

  it('rule ids do not split a group, rule order does', () => {
    const p = pipelineFor([
      drainRow('a', { scrubRules: [{ id: 'x', pattern: 'order' }, { id: 'y', pattern: 'ord' }] }),
      drainRow('b', { scrubRules: [{ id: 'other-id', pattern: 'order' }, { id: 'z', pattern: 'ord' }] }),
      drainRow('c', { scrubRules: [{ id: 'y', pattern: 'ord' }, { id: 'x', pattern: 'order' }] }),
    ]);
    expect(p.plans[0]!.shapeKey).toBe(p.plans[1]!.shapeKey);
    expect(p.plans[0]!.shapeKey).not.toBe(p.plans[2]!.shapeKey);
    p.route(RAW);
    const batches = p.flush();
    const [a, b, c] = ['a', 'b', 'c'].map((id) => byDrain(batches, id));
    a!.forEach((e, i) => expect(b![i]).toBe(e));
    // `ord` first leaves `er` behind: a different record, not shared.
    expect(c!.some((e) => e.json.includes('[scrubbed]er'))).toBe(true);
    expect(a!.some((e) => e.json.includes('[scrubbed]er'))).toBe(false);
  });

  it('drains that encode from the JSON alone hold each record as its JSON, not the shaped object; a group with an OTLP drain keeps the object', () => {
    const jsonOnly = pipelineFor([drainRow('j1'), drainRow('n1', { format: 'ndjson' })]);
    jsonOnly.route(RAW);
    const batches = jsonOnly.flush();
    const [j1, n1] = ['j1', 'n1'].map((id) => byDrain(batches, id));
    const observed = JSON.parse(j1![0]!.json).observedTimestamp as string;
    const expected = RECORDS.map((r) => {
      const shaped = shapeRecord(r, observed, { includeContent: true, redact: null });
      compileScrubber(null).scrubRecord(shaped);
      return shaped;
    });
    for (const entries of [j1!, n1!]) {
      // Memory: the batch holds each record's JSON as UTF-8 bytes (outside the heap), not an object
      // graph nor a string living until the batch is sent.
      for (const e of entries) expect(e).toBeInstanceOf(SerialisedEntry);
      for (const e of entries) expect(e.utf8?.equals(Buffer.from(e.json, 'utf8'))).toBe(true);
      expect(entries.map((e) => e.id)).toEqual(RECORDS.map((r) => r.id));
      expect(entries.map((e) => e.json)).toEqual(expected.map((x) => JSON.stringify(x)));
      // The record, if ever read, is the shaped record itself.
      expect(entries.map((e) => e.record)).toEqual(expected);
    }
    j1!.forEach((e, i) => expect(n1![i]).toBe(e));
    // A batch's size is its records' JSON in UTF-8 bytes.
    for (const b of batches) expect(b.bytes).toBe(b.entries.reduce((n, e) => n + Buffer.byteLength(e.json), 0));
    const mixed = pipelineFor([drainRow('j1'), drainRow('o1', { type: 'otlp', endpoint: 'https://127.0.0.1:1/otlp' })]);
    mixed.route(RAW);
    for (const e of byDrain(mixed.flush(), 'j1')) expect(e).toBeInstanceOf(ShapedEntry);
  });

  it('selection stays per drain inside a shape group, and a parked drain parks the shared JSON', () => {
    const p = pipelineFor([
      drainRow('errors', { selectors: { ...drainRow('x').selectors, minSeverity: 'error' } }),
      drainRow('all'),
      drainRow('unverified', { state: 'pending_verification', verifiedAt: null }),
    ]);
    const ticket = p.route(RAW);
    const batches = p.flush();
    const errors = byDrain(batches, 'errors');
    const all = byDrain(batches, 'all');
    expect(p.plans.map((x) => x.shapeKey)).toEqual([p.plans[1]!.shapeKey, p.plans[1]!.shapeKey, p.plans[1]!.shapeKey]);
    expect(errors.map((e) => e.record.id)).toEqual(RECORDS.filter((r) => r.severity === 'error').map((r) => r.id));
    expect(all).toHaveLength(RECORDS.length);
    for (const e of errors) expect(all).toContain(e);
    const parked = p.accounted.flatMap((a) => a.backlog ?? []);
    expect(parked.map((r) => r.recordId)).toEqual(RECORDS.map((r) => r.id));
    expect(parked.every((r) => r.drainId === 'unverified')).toBe(true);
    // The shared entry's JSON, parked as its UTF-8 bytes (a written entry holds it so).
    expect(parked.every((r) => Buffer.isBuffer(r.recordJson))).toBe(true);
    expect(parked.map((r) => r.recordJson.toString())).toEqual(all.map((e) => e.json));
    expect(parked.map((r) => r.bytes)).toEqual(all.map((e) => Buffer.byteLength(e.json)));
    // One hold per (record, drain) in a batch, plus one for the accountant's write: none released yet.
    expect(ticket.settled).toBe(false);
    for (const b of batches) for (const t of b.tickets) t.release();
    expect(ticket.settled).toBe(false);
  });
});
