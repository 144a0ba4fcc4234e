/**
 * The embedded queue written in runs: an enqueue larger than one statement is
 * seen by a reader whole or not at all, a write its process never finished is
 * discarded, a read hands over a bounded amount of payload, and each statement
 * of a write carries a bounded number of messages, each payload a parameter of
 * its own.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/store/store.js';
import { createQueueRepo, ENQUEUE_STATEMENT_CHARS, ENQUEUE_STATEMENT_ROWS } from '../../../src/store/queue-repo.js';
import type { Sql } from '../../../src/store/sql.js';
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

  it('writes each payload as a parameter of its own, at most a run of rows a statement, and reads them back as given', async () => {
    const inserts: unknown[][] = [];
    const watched: Sql = {
      ...store.sql,
      query: (text, params, options) => {
        if (text.startsWith('insert into ingest_queue')) inserts.push([...(params ?? [])]);
        return store.sql.query(text, params, options);
      },
    };
    const queue = createQueueRepo(watched);
    // Small messages, more than one statement's rows; quotes, backslashes, braces and commas that an
    // array literal would have had to escape.
    const messages = Array.from({ length: ENQUEUE_STATEMENT_ROWS * 2 + 5 }, (_, i) => ({
      orgId: `org_${i % 3}`,
      payload: JSON.stringify({ i, message: `"quoted" \\ {a,b} ${'é'.repeat(i % 4)}` }),
    }));
    await queue.enqueue(messages);
    expect(inserts).toHaveLength(3);
    for (const params of inserts) {
      // The pending mark, then each message's organization and payload as plain text parameters.
      expect(params.length).toBeLessThanOrEqual(2 * ENQUEUE_STATEMENT_ROWS + 1);
      expect(params.slice(1).every((p) => typeof p === 'string')).toBe(true);
    }
    expect(inserts.flatMap((p) => p.slice(1))).toEqual(messages.flatMap((m) => [m.orgId, m.payload]));
    const read = await queue.readAfter(0, messages.length + 1, Number.MAX_SAFE_INTEGER);
    expect(read.map((m) => [m.orgId, m.payload])).toEqual(messages.map((m) => [m.orgId, m.payload]));
  });
});
