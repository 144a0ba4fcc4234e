import type { Sql } from '../../../store/sql.js';
import type { Drain, DrainState, Selectors, StoredHeader, ScrubRule } from '../../../model/drain.js';
import { noteDrainActivity, noteDrainConfigChange } from '../../../store/change-epochs.js';

interface DrainRow {
  id: string;
  org_id: string;
  name: string;
  type: Drain['type'];
  endpoint: string | null;
  site: string | null;
  format: Drain['format'];
  headers: StoredHeader[];
  secret: string | null;
  previous_secret: string | null;
  rotation_started_at: Date | null;
  rotation_expires_at: Date | null;
  selectors: Selectors;
  sampling: { debug: number } | null;
  redact: string[] | null;
  scrub_rules: ScrubRule[] | null;
  state: DrainState;
  pause_reason: string | null;
  verified_at: Date | null;
  verification: Drain['verification'];
  version: number;
  created_by: Drain['createdBy'];
  created_at: Date;
  updated_at: Date;
}

const fromRow = (r: DrainRow): Drain => ({
  id: r.id,
  orgId: r.org_id,
  name: r.name,
  type: r.type,
  endpoint: r.endpoint,
  site: r.site,
  format: r.format,
  headers: r.headers,
  secret: r.secret,
  previousSecret: r.previous_secret,
  rotationStartedAt: r.rotation_started_at,
  rotationExpiresAt: r.rotation_expires_at,
  selectors: r.selectors,
  sampling: r.sampling,
  redact: r.redact,
  scrubRules: r.scrub_rules,
  state: r.state,
  pauseReason: r.pause_reason,
  verifiedAt: r.verified_at,
  verification: r.verification,
  version: r.version,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

/** Columns a PATCH-like update may set, by drain field. */
const UPDATABLE: Record<string, { column: string; json?: boolean }> = {
  name: { column: 'name' },
  endpoint: { column: 'endpoint' },
  site: { column: 'site' },
  format: { column: 'format' },
  headers: { column: 'headers', json: true },
  secret: { column: 'secret' },
  previousSecret: { column: 'previous_secret' },
  rotationStartedAt: { column: 'rotation_started_at' },
  rotationExpiresAt: { column: 'rotation_expires_at' },
  selectors: { column: 'selectors', json: true },
  sampling: { column: 'sampling', json: true },
  redact: { column: 'redact', json: true },
  scrubRules: { column: 'scrub_rules', json: true },
  verifiedAt: { column: 'verified_at' },
  verification: { column: 'verification', json: true },
};

/** What a plain update may set: never the state or its pause reason, which move only through `moveDrain` (src/drains/move.ts). */
export type DrainPatch = Partial<Omit<Drain, 'id' | 'orgId' | 'type' | 'state' | 'pauseReason' | 'version' | 'createdBy' | 'createdAt' | 'updatedAt'>>;

/** The channel migration 008's trigger notifies on each drain change. */
const DRAIN_CONFIG_CHANNEL = 'logdrain_drain_config';

/**
 * `onWrite`: told after each write to the drains table, besides the process's drain configuration
 * counter (change-epochs.ts); a unit of work's binding (index.ts) moves the counter again once the
 * transaction commits.
 */
export function createDrainsRepo(sql: Sql, onWrite: () => void = () => {}) {
  const changed = (): void => {
    noteDrainConfigChange();
    onWrite();
  };
  return {
    async insert(d: Drain): Promise<void> {
      await sql.query(
        `insert into drains (id, org_id, name, type, endpoint, site, format, headers, secret, selectors, sampling,
           redact, scrub_rules, state, version, created_by, created_at, updated_at)
         values ($1,$2,$3,$4,$5,$6,$7,$8::jsonb,$9,$10::jsonb,$11::jsonb,$12::jsonb,$13::jsonb,$14,$15,$16::jsonb,$17,$18)`,
        [
          d.id, d.orgId, d.name, d.type, d.endpoint, d.site, d.format, json(d.headers), d.secret, json(d.selectors),
          json(d.sampling), json(d.redact), json(d.scrubRules), d.state, d.version, json(d.createdBy), d.createdAt,
          d.updatedAt,
        ],
      );
      changed();
    },

    async get(orgId: string, id: string): Promise<Drain | undefined> {
      const rows = await sql.query<DrainRow>(
        'select * from drains where org_id = $1 and id = $2 and deleted_at is null',
        [orgId, id],
      );
      return rows[0] && fromRow(rows[0]);
    },

    async listByOrg(orgId: string): Promise<Drain[]> {
      const rows = await sql.query<DrainRow>(
        'select * from drains where org_id = $1 and deleted_at is null order by created_at, id',
        [orgId],
      );
      return rows.map(fromRow);
    },

    /** Every live drain: what a worker routes records to. */
    async listAll(): Promise<Drain[]> {
      const rows = await sql.query<DrainRow>('select * from drains where deleted_at is null order by org_id, id');
      return rows.map(fromRow);
    },

    /**
     * The drain configuration's version: a counter every write to the drains table moves, in its
     * own transaction (migration 008). Plans built from a read made after this one answered hold
     * every change committed before it was asked.
     */
    async configVersion(): Promise<number> {
      const rows = await sql.query<{ seq: number }>('select seq from drain_config_version where id = 1', [], { prepare: 'drains-config-version' });
      return rows[0]?.seq ?? 0;
    },

    /**
     * Calls `onChange` soon after any drain change commits, in this process or another (and after a
     * lost listener is back); `onDown` when the listening connection is lost (changes made until
     * the next `onChange` are not announced).
     */
    watchConfig: (onChange: () => void, onDown?: () => void): Promise<() => Promise<void>> => sql.listen(DRAIN_CONFIG_CHANNEL, onChange, onDown),

    async countLive(orgId: string): Promise<number> {
      const rows = await sql.query<{ n: number }>(
        'select count(*)::int as n from drains where org_id = $1 and deleted_at is null',
        [orgId],
      );
      return rows[0]?.n ?? 0;
    },

    /**
     * Applies `patch`; `bumpVersion` marks a configuration change (the read
     * form's `version`). Returns the updated drain, or undefined when gone.
     */
    async update(orgId: string, id: string, patch: DrainPatch, bumpVersion: boolean): Promise<Drain | undefined> {
      const sets: string[] = [];
      const params: unknown[] = [orgId, id];
      for (const [field, value] of Object.entries(patch)) {
        const col = UPDATABLE[field];
        if (!col || value === undefined) continue;
        params.push(col.json ? json(value) : value);
        sets.push(`${col.column} = $${params.length}${col.json ? '::jsonb' : ''}`);
      }
      if (bumpVersion) sets.push('version = version + 1');
      sets.push('updated_at = now()');
      const rows = await sql.query<DrainRow>(
        `update drains set ${sets.join(', ')} where org_id = $1 and id = $2 and deleted_at is null returning *`,
        params,
      );
      changed();
      return rows[0] && fromRow(rows[0]);
    },

    /**
     * Puts a drain in `to` when it is in one of `from`, with no audit entry and no lifecycle
     * rule: for setting up a drain's state from outside the service (the service's own moves go
     * through `moveDrain`, src/drains/move.ts).
     */
    async transition(id: string, from: readonly DrainState[], to: DrainState, pauseReason?: string | null): Promise<Drain | undefined> {
      const rows = await sql.query<DrainRow>(
        `update drains set state = $3, pause_reason = case when $4::boolean then $5 else pause_reason end, updated_at = now()
         where id = $1 and deleted_at is null and state = any($2::text[]) returning *`,
        [id, from, to, pauseReason !== undefined, pauseReason ?? null],
      );
      if (rows.length > 0) changed();
      return rows[0] && fromRow(rows[0]);
    },

    /**
     * Moves the drain to `to` only while it is still as it was read (`read`: its state and pause
     * reason); undefined when either changed meanwhile or the drain is gone. The service writes a
     * drain's state only through this, from `moveDrain` (src/drains/move.ts).
     */
    async moveState(
      id: string,
      read: { state: DrainState; pauseReason: string | null },
      to: { state: DrainState; pauseReason: string | null },
    ): Promise<Drain | undefined> {
      const rows = await sql.query<DrainRow>(
        `update drains set state = $4, pause_reason = $5::text, updated_at = now()
         where id = $1 and state = $2 and pause_reason is not distinct from $3::text and deleted_at is null returning *`,
        [id, read.state, read.pauseReason, to.state, to.pauseReason],
      );
      if (rows.length > 0) changed();
      return rows[0] && fromRow(rows[0]);
    },

    /** Soft delete: purges header values and secrets, frees the name, drops the backlog. */
    async softDelete(orgId: string, id: string): Promise<boolean> {
      await sql.query('delete from drain_backlog_pages where drain_id = $1 and exists (select 1 from drains where id = $1 and org_id = $2)', [id, orgId]);
      const rows = await sql.query(
        `update drains set deleted_at = now(), updated_at = now(), secret = null, previous_secret = null,
           headers = (select coalesce(jsonb_agg(jsonb_build_object('name', h->>'name')), '[]'::jsonb)
                      from jsonb_array_elements(headers) h)
         where org_id = $1 and id = $2 and deleted_at is null returning id`,
        [orgId, id],
      );
      changed();
      noteDrainActivity();
      return rows.length > 0;
    },
  };
}

export type DrainsRepo = ReturnType<typeof createDrainsRepo>;
