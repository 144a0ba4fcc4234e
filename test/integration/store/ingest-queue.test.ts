/**
 * The embedded queue written in runs: an enqueue larger than one statement is
 * seen by a reader whole or not at all, a write its process never finished is
 * discarded, and a read hands over a bounded amount of payload.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/store/store.js';
import { ENQUEUE_STATEMENT_CHARS } from '../../../src/store/queue-repo.js';
import { nextTurn } from '../../../src/event-loop.js';

const big = (n: number) => Array.from({ length: n }, (_, i) => ({ orgId: 'org_a', payload: JSON.stringify({ i, message: 'x'.repeat(ENQUEUE_STATEMENT_CHARS * 0.9) }) }));
const pendingRows = async (store: Store) => Number((await store.sql.query<{ n: number }>('select count(*)::int as n from ingest_queue where pending is not null'))[0]!.n);

describe('the embedded queue', () => {
  let store: Store;
  beforeEach(async () => {
    store = await openStore({ dataDir: 'memory://' });
  });
  afterEach(async () => {
    await store.close();
  });

  it('shows a reader an enqueue of many statements whole or not at all, in order', async () => {
    await store.queue.enqueue([{ orgId: 'org_a', payload: '{"before":true}' }]);
    const messages = big(8);
    let finished = false;
    const writing = store.queue.enqueue(messages).then(() => (finished = true));
    let seenWhilePending = 0;
    while (!finished) {
      const pending = await pendingRows(store);
      const read = await store.queue.readAfter(0, 100, Number.MAX_SAFE_INTEGER);
      // The message enqueued before, and nothing of the write under way until it is whole.
      if (pending > 0 && !finished) {
        expect(read.map((m) => m.payload)).toEqual(['{"before":true}']);
        seenWhilePending++;
      }
      await nextTurn();
    }
    await writing;
    expect(seenWhilePending).toBeGreaterThan(0);
    expect(await pendingRows(store)).toBe(0);
    const read = await store.queue.readAfter(0, 100, Number.MAX_SAFE_INTEGER);
    expect(read.map((m) => m.payload)).toEqual(['{"before":true}', ...messages.map((m) => m.payload)]);
  });

  it('stops a read at a write still pending, and discards what a stopped process left pending', async () => {
    await store.queue.enqueue([{ orgId: 'org_a', payload: '{"n":1}' }]);
    // A write its process never published (it stopped between two runs).
    await store.sql.query("insert into ingest_queue (org_id, payload, pending) values ('org_a', '{\"n\":2}', 'w1')");
    await store.queue.enqueue([{ orgId: 'org_a', payload: '{"n":3}' }]);
    expect((await store.queue.readAfter(0, 100)).map((m) => m.payload)).toEqual(['{"n":1}']);
    await store.queue.discardPending();
    expect((await store.queue.readAfter(0, 100)).map((m) => m.payload)).toEqual(['{"n":1}', '{"n":3}']);
  });

  it('hands over at most the bytes asked for a read, and at least one message', async () => {
    const messages = big(4);
    await store.queue.enqueue(messages);
    const size = Buffer.byteLength(messages[0]!.payload);
    expect(await store.queue.readAfter(0, 100, size * 2 + 1)).toHaveLength(2);
    expect(await store.queue.readAfter(0, 100, 1)).toHaveLength(1);
    const first = await store.queue.readAfter(0, 1, Number.MAX_SAFE_INTEGER);
    expect(await store.queue.readAfter(first[0]!.seq, 100, Number.MAX_SAFE_INTEGER)).toHaveLength(3);
  });
});
