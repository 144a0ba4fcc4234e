/**
 * Drain replays (migration 020): the API inserts and cancels them; a worker claims one for a
 * lease, renews it, records the position it reached after each page and ends it. Every write a
 * worker makes is conditional on holding the lease (`lease_owner`) and on the replay still
 * running, so a worker whose lease passed (or whose replay was cancelled) learns it by the write
 * answering false, and stops before sending another page.
 */
import type { Sql } from '../../../store/sql.js';
import { keysetAfter, keysetOrder, type KeysetColumn } from '../../../store/keyset.js';

export const REPLAY_STATUSES = ['queued', 'running', 'completed', 'cancelled', 'failed'] as const;
export type ReplayStatus = (typeof REPLAY_STATUSES)[number];
/** Statuses a replay is not ended in: at most one replay of a drain is in one of them. */
export const OPEN_REPLAY_STATUSES: readonly ReplayStatus[] = ['queued', 'running'];

export interface ReplayActor {
  type: 'user' | 'api_key' | 'system';
  id: string;
}

/** The position reached: the last record sent or passed over, in the order agent_logs is read (ts, id). */
export interface ReplayPosition {
  /** The record's time as stored, to the microsecond (ISO 8601, UTC): a Date would round it to the millisecond. */
  ts: string;
  id: string;
}

export interface Replay {
  id: string;
  orgId: string;
  drainId: string;
  since: Date;
  until: Date;
  status: ReplayStatus;
  position: ReplayPosition | null;
  /** The window's records in the platform copy, counted when first claimed; null until then. */
  recordsTotal: number | null;
  recordsRead: number;
  recordsSent: number;
  batchesSent: number;
  error: string | null;
  requestedBy: ReplayActor;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
}

export interface NewReplay {
  id: string;
  orgId: string;
  drainId: string;
  since: Date;
  until: Date;
  requestedBy: ReplayActor;
  createdAt: Date;
}

/** What one page added: the position reached and the counts to add. */
export interface ReplayProgress {
  position: ReplayPosition;
  read: number;
  sent: number;
  batches: number;
}

interface Row {
  id: string;
  org_id: string;
  drain_id: string;
  since: Date | string;
  until: Date | string;
  status: ReplayStatus;
  position_ts: string | null;
  position_id: string | null;
  records_total: number | string | null;
  records_read: number | string;
  records_sent: number | string;
  batches_sent: number;
  error: string | null;
  requested_by: ReplayActor | string;
  created_at: Date | string;
  updated_at: Date | string;
  ended_at: Date | string | null;
}

const fromRow = (r: Row): Replay => ({
  id: r.id,
  orgId: r.org_id,
  drainId: r.drain_id,
  since: new Date(r.since),
  until: new Date(r.until),
  status: r.status,
  position: r.position_ts === null || r.position_id === null ? null : { ts: r.position_ts, id: r.position_id },
  recordsTotal: r.records_total === null ? null : Number(r.records_total),
  recordsRead: Number(r.records_read),
  recordsSent: Number(r.records_sent),
  batchesSent: r.batches_sent,
  error: r.error,
  requestedBy: typeof r.requested_by === 'string' ? (JSON.parse(r.requested_by) as ReplayActor) : r.requested_by,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  endedAt: r.ended_at === null ? null : new Date(r.ended_at),
});

export const ISO_MICROS = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;
const COLUMNS = `id, org_id, drain_id, since, until, status, to_char(position_ts at time zone 'UTC', ${ISO_MICROS}) as position_ts, position_id, records_total, records_read, records_sent, batches_sent, error, requested_by, created_at, updated_at, ended_at`;
const LEASE = (n: number) => `now() + make_interval(secs => $${n}::double precision / 1000)`;

/** The replays' keyset sort: newest first, ties by id. */
const REPLAY_SORT: readonly KeysetColumn[] = [{ expr: 'created_at', cast: 'timestamptz' }, { expr: 'id' }];

export function createReplaysRepo(sql: Sql) {
  return {
    /** Inserts a queued replay; null when the drain already has one not ended (the partial unique index). */
    async insert(r: NewReplay): Promise<Replay | null> {
      // No error on the conflict: inside a unit of work it would abort the transaction.
      const rows = await sql.query<Row>(
        `insert into drain_replays (id, org_id, drain_id, since, until, status, requested_by, created_at, updated_at)
         values ($1, $2, $3, $4, $5, 'queued', $6, $7, $7)
         on conflict (drain_id) where status in ('queued', 'running') do nothing
         returning ${COLUMNS}`,
        [r.id, r.orgId, r.drainId, r.since.toISOString(), r.until.toISOString(), JSON.stringify(r.requestedBy), r.createdAt.toISOString()],
      );
      return rows[0] ? fromRow(rows[0]) : null;
    },

    async get(orgId: string, drainId: string, id: string): Promise<Replay | null> {
      const rows = await sql.query<Row>(`select ${COLUMNS} from drain_replays where id = $1 and org_id = $2 and drain_id = $3`, [id, orgId, drainId]);
      return rows[0] ? fromRow(rows[0]) : null;
    },

    /** The drain's replays, newest first, after the keyset cursor when given. */
    async list(orgId: string, drainId: string, limit: number, after?: { at: Date; id: string }): Promise<Replay[]> {
      const params: unknown[] = [orgId, drainId, limit];
      let where = 'org_id = $1 and drain_id = $2';
      if (after) where += ` and ${keysetAfter(REPLAY_SORT, [after.at, after.id], 'desc', (v) => `$${params.push(v)}`)}`;
      const rows = await sql.query<Row>(`select ${COLUMNS} from drain_replays where ${where} order by ${keysetOrder(REPLAY_SORT, 'desc')} limit $3`, params);
      return rows.map(fromRow);
    },

    /** The drain's replay not ended, if any. */
    async open(drainId: string): Promise<Replay | null> {
      const rows = await sql.query<Row>(`select ${COLUMNS} from drain_replays where drain_id = $1 and status in ('queued', 'running')`, [drainId]);
      return rows[0] ? fromRow(rows[0]) : null;
    },

    /** Cancels a replay not ended; null when it had ended (or is not there). The worker learns of it at its next write. */
    async cancel(orgId: string, drainId: string, id: string): Promise<Replay | null> {
      const rows = await sql.query<Row>(
        `update drain_replays set status = 'cancelled', ended_at = now(), updated_at = now(), lease_owner = null, lease_until = null
         where id = $1 and org_id = $2 and drain_id = $3 and status in ('queued', 'running') returning ${COLUMNS}`,
        [id, orgId, drainId],
      );
      return rows[0] ? fromRow(rows[0]) : null;
    },

    /**
     * Claims up to `limit` replays not ended whose lease is free (never taken, given back, or
     * passed: its worker died), oldest first, for `owner` until `leaseMs` from now. Two workers
     * claiming at once never take the same row (FOR UPDATE SKIP LOCKED, and the lease re-checked).
     */
    async claim(owner: string, leaseMs: number, limit: number, exceptIds: readonly string[] = []): Promise<Replay[]> {
      if (limit <= 0) return [];
      const rows = await sql.query<Row>(
        `update drain_replays set status = 'running', lease_owner = $1, lease_until = ${LEASE(2)}, updated_at = now()
         where id in (
           select id from drain_replays
           where status in ('queued', 'running') and (lease_until is null or lease_until < now()) and id <> all($4::text[])
           order by created_at, id
           limit $3
           for update skip locked
         ) and (lease_until is null or lease_until < now())
         returning ${COLUMNS}`,
        [owner, leaseMs, limit, exceptIds],
        { prepare: 'drain-replays-claim' },
      );
      return rows.map(fromRow);
    },

    /** Extends `owner`'s lease; false when it is no longer theirs or the replay no longer runs (cancelled). */
    async renew(id: string, owner: string, leaseMs: number): Promise<boolean> {
      const rows = await sql.query(
        `update drain_replays set lease_until = ${LEASE(3)} where id = $1 and lease_owner = $2 and status = 'running' returning id`,
        [id, owner, leaseMs],
      );
      return rows.length > 0;
    },

    /** Records the window's count (the first claim's); false as renew is. */
    async setTotal(id: string, owner: string, total: number): Promise<boolean> {
      const rows = await sql.query(
        "update drain_replays set records_total = $3, updated_at = now() where id = $1 and lease_owner = $2 and status = 'running' returning id",
        [id, owner, total],
      );
      return rows.length > 0;
    },

    /** Records a page sent: the position reached and its counts, the lease renewed; false as renew is. */
    async advance(id: string, owner: string, leaseMs: number, p: ReplayProgress): Promise<boolean> {
      const rows = await sql.query(
        `update drain_replays set position_ts = $4, position_id = $5, records_read = records_read + $6, records_sent = records_sent + $7,
           batches_sent = batches_sent + $8, lease_until = ${LEASE(3)}, updated_at = now()
         where id = $1 and lease_owner = $2 and status = 'running' returning id`,
        [id, owner, leaseMs, p.position.ts, p.position.id, p.read, p.sent, p.batches],
      );
      return rows.length > 0;
    },

    /** Ends `owner`'s running replay (completed or failed, with the reason); false as renew is. */
    async finish(id: string, owner: string, status: 'completed' | 'failed', error?: string): Promise<boolean> {
      const rows = await sql.query(
        `update drain_replays set status = $3, error = $4, ended_at = now(), updated_at = now(), lease_owner = null, lease_until = null
         where id = $1 and lease_owner = $2 and status = 'running' returning id`,
        [id, owner, status, error ?? null],
      );
      return rows.length > 0;
    },

    /** Gives `owner`'s lease back (a worker stopping): another worker resumes it from its position at once. */
    async release(id: string, owner: string): Promise<void> {
      await sql.query('update drain_replays set lease_owner = null, lease_until = null where id = $1 and lease_owner = $2', [id, owner]);
    },
  };
}

export type ReplaysRepo = ReturnType<typeof createReplaysRepo>;
