import { describe, expect, it } from 'vitest';
import { drainRow, pipelineFor } from './fixture.js';
import { records } from '../../helpers/records.js';

describe('records in flight', () => {
  it('counts every parked record in flight until the park is written, as it counts records in open batches', async () => {
    const p = pipelineFor([drainRow('drn_paused', { state: 'paused', pauseReason: 'user' })]);
    const ticket = p.route(records(300).map((r) => JSON.stringify(r)));
    // A chunk parked whole: all 300 records are still in memory, in the accountant's buffer.
    expect(ticket.inFlightShare).toBe(300);
    expect(ticket.settled).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(p.accounted.flatMap((e) => e.backlog ?? [])).toHaveLength(300);
    expect(ticket.inFlightShare).toBe(0);
    expect(ticket.settled).toBe(true);
  });
});
