/**
 * OTLP and vendor drains never read a record's JSON: the pipeline does not
 * make it for them (a record's JSON was about a twentieth of the worker's CPU),
 * while json and ndjson drains and the backlog still get it, exact.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { drainRow, pipelineFor } from './fixture.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';

const messages = () => [...syntheticRecords(100, { orgs: [{ orgId: 'org_acme', agents: [{ id: 'agt_a', name: 'a' }] }], seed: 3 })].map((r) => JSON.stringify(r));

describe('record JSON, made only when read', () => {
  afterEach(() => vi.restoreAllMocks());

  it('is not made for an OTLP drain, whose batches are measured by the records as consumed', () => {
    const p = pipelineFor([drainRow('otlp', { type: 'otlp', format: 'json' })]);
    const input = messages();
    const stringify = vi.spyOn(JSON, 'stringify');
    p.route(input);
    const batches = p.flush();
    // The resource of each batch is serialised; no record is.
    expect(stringify.mock.calls.length).toBeLessThanOrEqual(batches.length);
    expect(batches.reduce((n, b) => n + b.bytes, 0)).toBe(input.reduce((n, m) => n + m.length, 0));
    // Asked for, it is the record's JSON.
    const e = batches[0]!.entries[0]!;
    expect(JSON.parse(e.json)).toEqual(e.record);
  });

  it('is made once per record for an ndjson drain and a json drain sharing the shape, and measures their batches', () => {
    const p = pipelineFor([drainRow('nd', { format: 'ndjson' }), drainRow('js', { format: 'json' })]);
    p.route(messages());
    const batches = p.flush();
    for (const b of batches) expect(b.bytes).toBe(b.entries.reduce((n, e) => n + Buffer.byteLength(e.json), 0));
    // Both drains' batches hold the same entries: one JSON each.
    expect(batches[0]!.entries[0]).toBe(batches[1]!.entries[0]);
  });

  it('is made for records parked for an OTLP drain (the backlog stores it)', () => {
    const p = pipelineFor([drainRow('otlp', { type: 'otlp', state: 'pending_verification' })]);
    p.route(messages());
    const parked = p.accounted.flatMap((a) => a.backlog ?? []);
    expect(parked).toHaveLength(100);
    for (const r of parked) expect(Buffer.byteLength(r.recordJson)).toBe(r.bytes);
  });
});
