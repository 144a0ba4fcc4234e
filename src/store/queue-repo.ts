import { randomUUID } from 'node:crypto';
import type { Sql } from './sql.js';
import { nextTurn } from '../event-loop.js';
import { runsOf } from './runs.js';

export interface QueuedMessage {
  seq: number;
  orgId: string;
  payload: string;
}

/**
 * Payload characters a statement writes, at most (one record always fits: a record is at most
 * 256 KiB). On the embedded store statements run one at a time: 256 KiB is one large record or a
 * few hundred small ones, about 10 ms that a request's statement may wait behind.
 */
export const ENQUEUE_STATEMENT_CHARS = 256 * 1024;
/**
 * Messages a statement writes, at most. The payload bound alone let a run of small records hold
 * over a thousand rows, whose inserts took 9 to 25 ms on the embedded store (1,000 rows of 200
 * bytes), where 250 take 2 to 12 ms, about what one large record costs.
 */
export const ENQUEUE_STATEMENT_ROWS = 250;
/** Payload bytes one read hands the worker, at most (at least one message). */
export const READ_BYTES = 1024 * 1024;

/**
 * One run's insert: each message's organization and payload are parameters of their own. Passed as
 * two text[] parameters instead, each payload was escaped into one array literal by the client and
 * parsed back out of it by the server a character at a time; on the embedded store, both in
 * PGlite's one thread (a 240 KB record full of quotes: a median of 28 ms against 6 ms as a parameter of its
 * own). `$1` is the write's pending mark. Rows take their seqs in the order listed.
 */
function insertStatement(rows: number): string {
  const values: string[] = [];
  for (let i = 0; i < rows; i++) values.push(`($${2 * i + 2}, $${2 * i + 3}, $1)`);
  return `insert into ingest_queue (org_id, payload, pending) values ${values.join(', ')}`;
}

/** Bulk statements: on the embedded store they wait behind the requests' own (sql.ts QueryOptions). */
const BACKGROUND = { background: true } as const;

const insert = (sql: Pick<Sql, 'query'>, run: readonly { orgId: string; payload: string }[], pending: string | null) =>
  sql.query(insertStatement(run.length), [pending, ...run.flatMap((m) => [m.orgId, m.payload])], BACKGROUND);

/**
 * The embedded durable queue: an append-only table standing in for the Kafka
 * topic, with one committed cursor per consumer. An enqueue is all or nothing:
 * a reader sees every message of it or none.
 */
export function createQueueRepo(sql: Sql) {
  return {
    async enqueue(messages: readonly { orgId: string; payload: string }[]): Promise<void> {
      if (messages.length === 0) return;
      const runs = runsOf(messages, (m) => m.payload.length, ENQUEUE_STATEMENT_CHARS, ENQUEUE_STATEMENT_ROWS);
      if (runs.length === 1) {
        await insert(sql, runs[0]!, null);
        return;
      }
      if (sql.kind === 'postgres') {
        // One transaction of bounded statements. Enqueues take turns, so that seqs commit in
        // their order: a reader past a seq never misses a lower one committed later.
        await sql.transaction(async (tx) => {
          await tx.query('select pg_advisory_xact_lock(hashtext($1))', ['logdrain:ingest_queue']);
          for (const run of runs) await insert(tx, run, null);
        });
        return;
      }
      // The embedded store runs statements one at a time and a transaction would hold every
      // other statement of the process: the runs are written pending, with turns between them,
      // and published by one statement (migration 014).
      const write = randomUUID();
      try {
        for (const run of runs) {
          await insert(sql, run, write);
          await nextTurn();
        }
        await sql.query('update ingest_queue set pending = null where pending = $1', [write], BACKGROUND);
      } catch (e) {
        await sql.query('delete from ingest_queue where pending = $1', [write]).catch(() => {});
        throw e;
      }
    },

    /**
     * Messages after `seq` in order: at most `limit`, and at most `maxBytes` of payload (at least
     * one message), stopping before the first message still pending (its enqueue not yet whole).
     */
    async readAfter(seq: number, limit: number, maxBytes = READ_BYTES): Promise<QueuedMessage[]> {
      const sizes = await sql.query<{ seq: number; bytes: number }>(
        `select seq, octet_length(payload) as bytes from ingest_queue
         where seq > $1 and seq < coalesce((select min(seq) from ingest_queue where pending is not null), 9223372036854775807)
         order by seq limit $2`,
        [seq, limit],
        BACKGROUND,
      );
      if (sizes.length === 0) return [];
      let last = Number(sizes[0]!.seq);
      let bytes = Number(sizes[0]!.bytes);
      for (let i = 1; i < sizes.length; i++) {
        bytes += Number(sizes[i]!.bytes);
        if (bytes > maxBytes) break;
        last = Number(sizes[i]!.seq);
      }
      const rows = await sql.query<{ seq: number; org_id: string; payload: string }>(
        'select seq, org_id, payload from ingest_queue where seq > $1 and seq <= $2 order by seq',
        [seq, last],
        BACKGROUND,
      );
      return rows.map((r) => ({ seq: Number(r.seq), orgId: r.org_id, payload: r.payload }));
    },

    /**
     * Deletes what an enqueue left pending when its process stopped. Only the embedded store (one
     * process, locked to its directory) writes pending rows; Postgres enqueues are transactions.
     */
    async discardPending(): Promise<void> {
      if (sql.kind !== 'pglite') return;
      await sql.query('delete from ingest_queue where pending is not null');
    },

    async cursor(consumer: string): Promise<number> {
      const rows = await sql.query<{ seq: number }>('select seq from queue_cursors where consumer = $1', [consumer]);
      return rows[0] ? Number(rows[0].seq) : 0;
    },

    /** Commits the cursor and deletes what every consumer has passed. */
    async commit(consumer: string, seq: number): Promise<void> {
      await sql.transaction(async (tx) => {
        await tx.query(
          `insert into queue_cursors (consumer, seq) values ($1, $2)
           on conflict (consumer) do update set seq = greatest(queue_cursors.seq, excluded.seq)`,
          [consumer, seq],
        );
        await tx.query('delete from ingest_queue where seq <= (select min(seq) from queue_cursors)');
      });
    },
  };
}

export type QueueRepo = ReturnType<typeof createQueueRepo>;
