import type { Sql } from '../../../store/sql.js';
import { keysetAfter, keysetOrder, type KeysetColumn } from '../../../store/keyset.js';
import type { DeliveryKind, DeliveryRecord } from '../../../model/delivery.js';

interface DeliveryRow {
  id: string;
  org_id: string;
  drain_id: string;
  batch_id: string;
  kind: DeliveryKind;
  attempt: number;
  record_count: number | null;
  bytes: number | null;
  bytes_compressed: number | null;
  status_code: number | null;
  latency_ms: number | null;
  ok: boolean;
  error_class: string | null;
  response_excerpt: string | null;
  scrub_hits: number | null;
  started_at: Date;
  expires_at: Date;
  first_record_id: string | null;
  last_record_id: string | null;
}

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

const fromRow = (r: DeliveryRow): DeliveryRecord => ({
  id: r.id,
  orgId: r.org_id,
  drainId: r.drain_id,
  batchId: r.batch_id,
  kind: r.kind,
  attempt: r.attempt,
  recordCount: opt(r.record_count),
  bytes: opt(r.bytes),
  bytesCompressed: opt(r.bytes_compressed),
  statusCode: opt(r.status_code),
  latencyMs: opt(r.latency_ms),
  ok: r.ok,
  errorClass: opt(r.error_class),
  responseExcerpt: opt(r.response_excerpt),
  scrubHits: opt(r.scrub_hits),
  startedAt: r.started_at,
  expiresAt: r.expires_at,
  firstRecordId: opt(r.first_record_id),
  lastRecordId: opt(r.last_record_id),
});

const COLUMNS = [
  'id', 'org_id', 'drain_id', 'batch_id', 'kind', 'attempt', 'record_count', 'bytes', 'bytes_compressed',
  'status_code', 'latency_ms', 'ok', 'error_class', 'response_excerpt', 'scrub_hits', 'started_at', 'expires_at',
  'first_record_id', 'last_record_id',
] as const;
const TYPES = [
  'text', 'text', 'text', 'text', 'text', 'int', 'int', 'int', 'int', 'int', 'int', 'bool', 'text', 'text', 'int',
  'timestamptz', 'timestamptz', 'text', 'text',
] as const;

/** A row for json_to_recordset: the columns by name, absent values null, times as ISO text. */
const toJsonRow = (d: DeliveryRecord) => ({
  id: d.id, org_id: d.orgId, drain_id: d.drainId, batch_id: d.batchId, kind: d.kind, attempt: d.attempt,
  record_count: d.recordCount ?? null, bytes: d.bytes ?? null, bytes_compressed: d.bytesCompressed ?? null,
  status_code: d.statusCode ?? null, latency_ms: d.latencyMs ?? null, ok: d.ok, error_class: d.errorClass ?? null,
  response_excerpt: d.responseExcerpt ?? null, scrub_hits: d.scrubHits ?? null, started_at: d.startedAt.toISOString(),
  expires_at: d.expiresAt.toISOString(), first_record_id: d.firstRecordId ?? null, last_record_id: d.lastRecordId ?? null,
  record_ids: d.recordIds ?? null,
});

export interface DeliveryPageQuery {
  kind?: DeliveryKind | undefined;
  limit: number;
  /** Position after which to continue: the last row of the previous page. */
  after?: { startedAt: Date; id: string } | undefined;
}

/** The delivery records' keyset sort: newest attempt first, ties by id. */
const DELIVERY_SORT: readonly KeysetColumn[] = [{ expr: 'started_at', cast: 'timestamptz' }, { expr: 'id' }];

export function createDeliveriesRepo(sql: Sql) {
  return {
    /**
     * One multi-row insert, whatever the count: the rows travel as one JSON array (json_to_recordset),
     * which `JSON.stringify` writes natively; as Postgres arrays, pg's serializer escaped every value
     * in JavaScript, about 3% of the worker's time when thousands of agents make every batch small.
     */
    async insertMany(rows: readonly DeliveryRecord[]): Promise<void> {
      if (rows.length === 0) return;
      await sql.query(
        `insert into deliveries (${COLUMNS.join(', ')}, record_ids)
         select ${COLUMNS.map((c) => `u.${c}`).join(', ')},
                case when u.record_ids is null then null else array(select jsonb_array_elements_text(u.record_ids)) end
         from json_to_recordset($1::json) as u(${COLUMNS.map((c, i) => `${c} ${TYPES[i]}`).join(', ')}, record_ids jsonb)
         on conflict (id) do nothing`,
        [JSON.stringify(rows.map(toJsonRow))],
        { prepare: 'deliveries-insert' },
      );
    },

    /** The drain's `dropped` rows still kept: each reason with the ids of the records it stands for. */
    async droppedRecords(drainId: string): Promise<{ reason: string; recordIds: string[] }[]> {
      const rows = await sql.query<{ error_class: string | null; record_ids: string[] | null }>(
        "select error_class, record_ids from deliveries where drain_id = $1 and kind = 'dropped' and expires_at > now() order by started_at, id",
        [drainId],
      );
      return rows.map((r) => ({ reason: r.error_class ?? 'unknown', recordIds: r.record_ids ?? [] }));
    },

    /** Newest first; keyset pagination on (started_at, id). */
    async page(drainId: string, q: DeliveryPageQuery): Promise<DeliveryRecord[]> {
      const params: unknown[] = [drainId, q.limit];
      let where = 'drain_id = $1 and expires_at > now()';
      if (q.kind) {
        params.push(q.kind);
        where += ` and kind = $${params.length}`;
      }
      if (q.after) where += ` and ${keysetAfter(DELIVERY_SORT, [q.after.startedAt, q.after.id], 'desc', (v) => `$${params.push(v)}`)}`;
      const rows = await sql.query<DeliveryRow>(
        `select ${COLUMNS.join(', ')} from deliveries where ${where} order by ${keysetOrder(DELIVERY_SORT, 'desc')} limit $2`,
        params,
      );
      return rows.map(fromRow);
    },

    /** When the drain last had an attempt of any kind, or null. */
    async lastAttemptAt(drainId: string): Promise<Date | null> {
      const rows = await sql.query<{ started_at: Date }>(
        'select started_at from deliveries where drain_id = $1 order by started_at desc, id desc limit 1',
        [drainId],
      );
      return rows[0]?.started_at ?? null;
    },

    /** Removes rows past their seven-day expiry. */
    async sweepExpired(now = new Date()): Promise<number> {
      const rows = await sql.query('delete from deliveries where expires_at <= $1 returning 1', [now.toISOString()]);
      return rows.length;
    },
  };
}

export type DeliveriesRepo = ReturnType<typeof createDeliveriesRepo>;
