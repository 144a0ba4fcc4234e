/**
 * A client that hangs up in the middle of an ingest body: the body is read a chunk at a time as it
 * arrives (record-body.ts), so the reader is waiting for the next chunk when the socket goes. The
 * request ends as the client's own (not the store's), nothing of its body is queued, and the server
 * goes on serving. Through a real socket: the headers and a part of the body, its first records
 * whole, then the socket destroyed once the body is being read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED_FIXTURE, waitFor } from '../../../helpers/app.js';
import { startAbortingApi, type AbortingApi } from '../../../helpers/aborted-body.js';
import { record } from '../../../helpers/records.js';

describe('a client aborting mid-body on the ingest route', () => {
  let api: AbortingApi;

  beforeAll(async () => {
    api = await startAbortingApi({ method: 'POST', url: '/internal/records', seedFile: SEED_FIXTURE });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('ends as the client\'s own, queues none of the body, and the server keeps serving', async () => {
    const { store, events, base } = api;
    const cursor = await store.queue.cursor('aborted-ingest');
    const sent = Array.from({ length: 20 }, () => record({ message: 'm'.repeat(10_000) }));
    const body = JSON.stringify(sent);
    await api.abortMidBody(
      'POST /internal/records HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer lk_acme_ingest\r\nContent-Type: application/json\r\n',
      body,
    );

    const gone = await waitFor(() => events.find((e) => e.event === 'api.client_gone'), { what: 'the aborted ingest to reach the error handler' });
    expect(events.filter((e) => e.reqId === gone.reqId).map((e) => e.event)).not.toContain('api.store_unavailable');

    const after = await fetch(`${base}/internal/records`, {
      method: 'POST', headers: { authorization: 'Bearer lk_acme_ingest', 'content-type': 'application/json' }, body: JSON.stringify([record()]),
    });
    expect(after.status).toBe(202);
    // Only the ingest after it was queued: none of the aborted body's records, though its first ones had arrived whole.
    const queued = await store.queue.readAfter(cursor, 100, Number.MAX_SAFE_INTEGER);
    const ids = new Set(sent.map((r) => r.id));
    expect(queued).toHaveLength(1);
    expect(queued.filter((m) => ids.has((JSON.parse(m.payload) as { id: string }).id))).toEqual([]);
  });
});
