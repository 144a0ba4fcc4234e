import type { Sql } from '../../../store/sql.js';
import { RECORD_LIMITS } from '../../../model/record-limits.js';

/** Payloads are kept up to this many characters: enough to diagnose, bounded against hostile input. */
export const DEAD_LETTER_PAYLOAD_MAX = RECORD_LIMITS.deadLetterPayload;

/**
 * Postgres text cannot hold NUL, and a malformed message may carry raw NUL bytes: one such payload
 * would fail the whole accounting write (retried forever, holding the offset). Kept visible as U+FFFD.
 */
const storable = (text: string, max: number): string => text.slice(0, max).replaceAll('\u0000', '\uFFFD');

export interface DeadLetter {
  source: string;
  reason: string;
  payload: string;
}

export function createDeadLettersRepo(sql: Sql) {
  return {
    async insertMany(letters: readonly DeadLetter[]): Promise<void> {
      if (letters.length === 0) return;
      await sql.query(
        'insert into dead_letters (source, reason, payload) select * from unnest($1::text[], $2::text[], $3::text[])',
        [
          letters.map((l) => storable(l.source, 64)),
          letters.map((l) => storable(l.reason, RECORD_LIMITS.deadLetterReason)),
          letters.map((l) => storable(l.payload, DEAD_LETTER_PAYLOAD_MAX)),
        ],
      );
    },

    async count(): Promise<number> {
      const rows = await sql.query<{ n: number }>('select count(*)::int as n from dead_letters');
      return rows[0]?.n ?? 0;
    },

    async recent(limit: number): Promise<(DeadLetter & { receivedAt: Date })[]> {
      const rows = await sql.query<{ source: string; reason: string; payload: string; received_at: Date }>(
        'select source, reason, payload, received_at from dead_letters order by id desc limit $1',
        [limit],
      );
      return rows.map((r) => ({ source: r.source, reason: r.reason, payload: r.payload, receivedAt: r.received_at }));
    },
  };
}

export type DeadLettersRepo = ReturnType<typeof createDeadLettersRepo>;
