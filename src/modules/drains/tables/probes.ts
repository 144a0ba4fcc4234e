/**
 * The probe queue (migration 012): the API enqueues, workers claim with a
 * lease. Claims take rows FOR UPDATE SKIP LOCKED, so two workers claiming at
 * once never take the same row, and a row whose lease has passed is free
 * again: the worker that held it stopped renewing (it died).
 */
import type { Sql } from '../../../store/sql.js';

export const PROBES_CHANNEL = 'logdrain_probes';

export type ProbeKind = 'verify' | 'test';

export interface ProbeActor {
  type: 'user' | 'api_key' | 'system';
  id: string;
}

export interface NewProbe {
  id: string;
  kind: ProbeKind;
  orgId: string;
  drainId: string;
  /** test: the batch id of the 202; verify: the verification id. */
  batchId: string;
  /** verify only: the single-use token, sealed (store.secretBox). */
  sealedToken?: string | undefined;
  actor: ProbeActor;
  enqueuedAt: Date;
}

export interface ClaimedProbe extends NewProbe {
  /** How many times a worker has claimed it, this claim included. */
  claims: number;
}

interface Row {
  id: string;
  kind: ProbeKind;
  org_id: string;
  drain_id: string;
  batch_id: string;
  sealed_token: string | null;
  actor: ProbeActor | string;
  enqueued_at: Date | string;
  claims: number;
}

const fromRow = (r: Row): ClaimedProbe => ({
  id: r.id,
  kind: r.kind,
  orgId: r.org_id,
  drainId: r.drain_id,
  batchId: r.batch_id,
  sealedToken: r.sealed_token ?? undefined,
  actor: typeof r.actor === 'string' ? (JSON.parse(r.actor) as ProbeActor) : r.actor,
  enqueuedAt: new Date(r.enqueued_at),
  claims: r.claims,
});

const lease = 'now() + make_interval(secs => $2::double precision / 1000)';

export function createProbesRepo(sql: Sql) {
  return {
    /** Enqueues a probe; workers hear of it on commit (PROBES_CHANNEL). */
    async insert(p: NewProbe): Promise<void> {
      await sql.query(
        `insert into drain_probes (id, kind, org_id, drain_id, batch_id, sealed_token, actor, enqueued_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [p.id, p.kind, p.orgId, p.drainId, p.batchId, p.sealedToken ?? null, JSON.stringify(p.actor), p.enqueuedAt.toISOString()],
      );
    },

    /** Claims up to `limit` free probes, oldest first, for `owner` until `leaseMs` from now. */
    async claim(owner: string, leaseMs: number, limit: number): Promise<ClaimedProbe[]> {
      if (limit <= 0) return [];
      const rows = await sql.query<Row>(
        `update drain_probes set claimed_by = $1, claimed_until = ${lease}, claims = claims + 1
         where id in (
           select id from drain_probes
           where claimed_until is null or claimed_until < now()
           order by enqueued_at, id
           limit $3
           for update skip locked
         )
         returning id, kind, org_id, drain_id, batch_id, sealed_token, actor, enqueued_at, claims`,
        [owner, leaseMs, limit],
        { prepare: 'drain-probes-claim' },
      );
      return rows.map(fromRow).sort((a, b) => a.enqueuedAt.getTime() - b.enqueuedAt.getTime());
    },

    /** Extends `owner`'s claims on `ids`; a claim another worker took over meanwhile is left alone. */
    async renew(ids: readonly string[], owner: string, leaseMs: number): Promise<void> {
      if (ids.length === 0) return;
      await sql.query(
        `update drain_probes set claimed_until = ${lease} where id = any($3::text[]) and claimed_by = $1`,
        [owner, leaseMs, ids],
      );
    },

    /** Gives `owner`'s claims on `ids` back unrun (a worker stopping as it claimed them): free again at once. */
    async release(ids: readonly string[], owner: string): Promise<void> {
      if (ids.length === 0) return;
      await sql.query(
        'update drain_probes set claimed_by = null, claimed_until = null, claims = claims - 1 where id = any($2::text[]) and claimed_by = $1',
        [owner, ids],
      );
    },

    /** Removes a probe that has run; only its current claimant may. */
    async finish(id: string, owner: string): Promise<void> {
      await sql.query('delete from drain_probes where id = $1 and claimed_by = $2', [id, owner]);
    },

    /** Probes not yet run (the operator's view of probes waiting for a worker). */
    async pending(): Promise<number> {
      const rows = await sql.query<{ n: number }>('select count(*)::int as n from drain_probes');
      return rows[0]?.n ?? 0;
    },

    /** Calls `onEnqueued` when a probe is enqueued (and after a lost listening connection is back). */
    watch: (onEnqueued: () => void): Promise<() => Promise<void>> => sql.listen(PROBES_CHANNEL, onEnqueued),
  };
}

export type ProbesRepo = ReturnType<typeof createProbesRepo>;
