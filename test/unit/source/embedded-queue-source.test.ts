/**
 * The embedded source routes a read a piece at a time (at most ROUTE_PIECE_CHARS of payload, at least
 * one record), with a turn of the event loop between pieces: the worker shares the API's thread in
 * `start`. Every record is handed once, in order, and the cursor commits past the read once every
 * piece has settled.
 */
import { describe, expect, it } from 'vitest';
import { createEmbeddedQueueSource, ROUTE_PIECE_CHARS } from '../../../src/source/embedded-queue-source.js';
import type { QueueRepo } from '../../../src/store/queue-repo.js';
import type { SourceChunk } from '../../../src/source/source.js';
import { silentLogger } from '../../../src/telemetry/logger.js';

/** A queue of the given payloads (seq 1, 2, ...), read whole by one read. */
function queueOf(payloads: string[]) {
  const commits: number[] = [];
  let read = false;
  const queue = {
    discardPending: async () => {},
    cursor: async () => 0,
    readAfter: async (seq: number) => {
      if (read || seq !== 0) return [];
      read = true;
      return payloads.map((payload, i) => ({ seq: i + 1, orgId: 'org_acme', payload }));
    },
    commit: async (_consumer: string, seq: number) => {
      commits.push(seq);
    },
  } as unknown as QueueRepo;
  return { queue, commits };
}

describe('the embedded source', () => {
  it('routes a read of large records a piece at a time, a turn between pieces, each record once and in order', async () => {
    const big = (i: number) => `${i}:${'x'.repeat(100 * 1024)}`;
    const payloads = [big(0), big(1), big(2), 'small-3', 'small-4', big(5), 'y'.repeat(ROUTE_PIECE_CHARS + 10), 'small-7'];
    const { queue, commits } = queueOf(payloads);
    const source = createEmbeddedQueueSource({ queue, maxInFlightRecords: 1000, logger: silentLogger(), pollIntervalMs: 5 });
    const pieces: string[][] = [];
    const tickets: SourceChunk['ticket'][] = [];
    // Every immediate that runs between two pieces: a turn of the event loop.
    const events: string[] = [];
    let ticking = true;
    const tick = () => {
      events.push('turn');
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await source.start((chunk) => {
      events.push('piece');
      pieces.push(chunk.messages.map(String));
      chunk.ticket.hold();
      tickets.push(chunk.ticket);
    });
    await new Promise<void>((resolve) => {
      const check = () => (pieces.flat().length === payloads.length ? resolve() : setTimeout(check, 5));
      check();
    });
    ticking = false;

    expect(pieces.flat()).toEqual(payloads);
    for (const piece of pieces) {
      const chars = piece.reduce((n, p) => n + p.length, 0);
      expect(piece.length === 1 || chars <= ROUTE_PIECE_CHARS, `a piece of ${piece.length} records, ${chars} characters`).toBe(true);
    }
    expect(pieces.map((p) => p.length)).toEqual([2, 4, 1, 1]);
    // A turn between every two pieces.
    const between = events.slice(events.indexOf('piece')).join(',').split('piece').slice(1, -1);
    expect(between.every((turns) => turns.includes('turn'))).toBe(true);

    // Nothing commits while a piece is held; everything once all have settled.
    for (const t of tickets.slice(1)) t.release();
    await source.stop(Date.now() + 50);
    expect(commits).toEqual([]);
    tickets[0]!.release();
    await source.stop(Date.now() + 50);
    expect(commits.at(-1)).toBe(payloads.length);
  });
});
