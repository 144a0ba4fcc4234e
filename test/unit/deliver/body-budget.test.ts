/**
 * The body budget (encode/body-budget.ts): takes are admitted first come, first served while they
 * fit, a take larger than the whole budget goes alone, and every give admits what now fits. Through
 * attempts (deliver/attempt.ts): ten drains' batches attempted at once never have more uncompressed
 * bodies in existence (encoded, not yet given back after their gzip) than the budget holds, and
 * every batch still arrives whole.
 */
import { describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { BodyBudget, BODY_BUDGET_BYTES } from '../../../src/encode/body-budget.js';
import { attemptBatch } from '../../../src/deliver/attempt.js';
import type { PostRequest, Transport } from '../../../src/deliver/transport.js';
import type { Encoder } from '../../../src/encode/encoder.js';
import type { ReadyBatch } from '../../../src/batch/batcher.js';
import { noEvents } from '../../../src/telemetry/events.js';
import { silentLogger } from '../../../src/telemetry/logger.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';
import { drainRow, pipelineFor } from '../pipeline/fixture.js';

describe('the body budget', () => {
  it('admits takes in order while they fit, an oversized one alone, and more as bytes are given back', async () => {
    const budget = new BodyBudget(100);
    expect(budget.take(60)).toBeUndefined();
    expect(budget.take(40)).toBeUndefined();
    const order: string[] = [];
    const c = budget.take(30)!.then(() => order.push('c'));
    // Fits now, but waits behind c: first come, first served.
    const d = budget.take(1)!.then(() => order.push('d'));
    expect(budget.state).toEqual({ used: 100, waiting: 2 });
    budget.give(40);
    await c;
    await d;
    expect(order).toEqual(['c', 'd']);
    expect(budget.state).toEqual({ used: 91, waiting: 0 });
    const big = budget.take(500)!.then(() => order.push('big'));
    budget.give(60);
    budget.give(30);
    await Promise.resolve();
    expect(order).toEqual(['c', 'd']);
    budget.give(1);
    await big;
    // Larger than the whole budget: admitted once nothing else is taken, alone.
    expect(budget.state).toEqual({ used: 500, waiting: 0 });
    expect(budget.take(1)).toBeInstanceOf(Promise);
  });
});

describe('attempts under the body budget', () => {
  it('ten drains attempting their batches at once hold at most the budget of bodies, and every body arrives whole', async () => {
    const drains = Array.from({ length: 10 }, (_, i) => drainRow(`drn_${i}`, { format: 'ndjson' }));
    const p = pipelineFor(drains, { maxRecords: 1000 });
    const records = [...syntheticRecords(5000, { orgs: [{ orgId: 'org_acme', agents: [{ id: 'agt_1', name: 'bot', version: '1' }] }], seed: 11 })];
    p.route(records.map((r) => JSON.stringify(r)));
    const batches = p.flush();
    expect(batches.length).toBe(50);

    // Bodies in existence: encoded and not yet given back to the pool (the encoder's recycle, after gzip).
    let live = 0;
    let liveBytes = 0;
    let most = 0;
    let mostBytes = 0;
    const counted = (b: ReadyBatch): ReadyBatch => {
      const inner = b.plan.encoder;
      const encoder: Encoder = {
        contentType: inner.contentType,
        usesRecordJson: inner.usesRecordJson,
        encode(batch) {
          live++;
          liveBytes += b.bytes;
          most = Math.max(most, live);
          mostBytes = Math.max(mostBytes, liveBytes);
          return inner.encode(batch);
        },
        recycle(body) {
          live--;
          liveBytes -= b.bytes;
          inner.recycle?.(body);
        },
      };
      return { ...b, plan: { ...b.plan, encoder } };
    };
    const received: PostRequest[] = [];
    const transport: Transport = {
      post: async (req) => {
        received.push(req);
        return { kind: 'response', statusCode: 200, headers: {}, body: Buffer.alloc(0), latencyMs: 1 };
      },
    } as Transport;
    const deps = { transport, events: noEvents, logger: silentLogger(), level: 1 };

    const perBatch = batches[0]!.bytes;
    expect(perBatch * batches.length).toBeGreaterThan(3 * BODY_BUDGET_BYTES);
    const results = await Promise.all(batches.map((b) => attemptBatch(deps, counted(b), 1)));
    expect(results.every((r) => r.outcome.status === 'success')).toBe(true);
    expect(live).toBe(0);
    // Without the budget all fifty are encoded before the first gzip ends.
    expect(mostBytes).toBeLessThanOrEqual(BODY_BUDGET_BYTES);
    expect(most).toBeLessThan(batches.length / 2);
    expect(received.length).toBe(50);
    const lines = received.flatMap((r) => gunzipSync(r.body).toString('utf8').trimEnd().split('\n'));
    expect(lines.length).toBe(50_000);
    for (let d = 0; d < 10; d++) {
      const ids = received.filter((r) => r.url.endsWith(`/drn_${d}`)).flatMap((r) => gunzipSync(r.body).toString('utf8').trimEnd().split('\n').map((l) => (JSON.parse(l) as { id: string }).id));
      expect(ids.sort()).toEqual(records.map((r) => r.id).sort());
    }
  });
});
