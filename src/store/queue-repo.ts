import type { Sql } from './sql.js';

export interface QueuedMessage {
  seq: number;
  orgId: string;
  payload: string;
}

/**
 * The embedded durable queue: an append-only table standing in for the Kafka
 * topic, with one committed cursor per consumer.
 */
export function createQueueRepo(sql: Sql) {
  return {
    async enqueue(messages: readonly { orgId: string; payload: string }[]): Promise<void> {
      if (messages.length === 0) return;
      await sql.query(
        'insert into ingest_queue (org_id, payload) select * from unnest($1::text[], $2::text[])',
        [messages.map((m) => m.orgId), messages.map((m) => m.payload)],
      );
    },

    async readAfter(seq: number, limit: number): Promise<QueuedMessage[]> {
      const rows = await sql.query<{ seq: number; org_id: string; payload: string }>(
        'select seq, org_id, payload from ingest_queue where seq > $1 order by seq limit $2',
        [seq, limit],
      );
      return rows.map((r) => ({ seq: Number(r.seq), orgId: r.org_id, payload: r.payload }));
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
