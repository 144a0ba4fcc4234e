/**
 * Drain circuits (migration 021): one row per drain whose circuit ever opened, shared by every
 * worker. Each move is one conditional statement on the state it leaves, so of two workers making
 * the same move at once one wins and the other reads what won (deliver/circuit.ts):
 *
 *   closed (or no row) --open--> open --claimProbe (time up)--> half_open --close (probe owner)--> closed
 *                                  ^                               |
 *                                  +------reopen (probe owner)-----+
 *
 * Times are the database's (`now()`), as the probe queue's leases are, so workers' clocks do not
 * decide who probes.
 */
import type { Sql } from '../../../store/sql.js';

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitRow {
  drainId: string;
  state: CircuitState;
  openedAt: Date | null;
  /** While open: when a probe may be sent. */
  openUntil: Date | null;
  /** Openings since the circuit last closed: 0 for the first. */
  reopenings: number;
  /** While half open: the worker sending the probe, and until when its claim holds. */
  probeOwner: string | null;
  probeUntil: Date | null;
}

interface Row {
  drain_id: string;
  state: CircuitState;
  opened_at: Date | string | null;
  open_until: Date | string | null;
  reopenings: number;
  probe_owner: string | null;
  probe_until: Date | string | null;
}

const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

const fromRow = (r: Row): CircuitRow => ({
  drainId: r.drain_id,
  state: r.state,
  openedAt: date(r.opened_at),
  openUntil: date(r.open_until),
  reopenings: Number(r.reopenings),
  probeOwner: r.probe_owner,
  probeUntil: date(r.probe_until),
});

const COLUMNS = 'drain_id, state, opened_at, open_until, reopenings, probe_owner, probe_until';
const after = (param: string) => `now() + make_interval(secs => ${param}::double precision / 1000)`;

export function createCircuitsRepo(sql: Sql) {
  const one = async (text: string, params: readonly unknown[]): Promise<CircuitRow | undefined> => {
    const rows = await sql.query<Row>(text, params);
    return rows[0] ? fromRow(rows[0]) : undefined;
  };
  return {
    /** The drain's circuit; undefined: never opened (closed). */
    get: (drainId: string) => one(`select ${COLUMNS} from drain_circuits where drain_id = $1`, [drainId]),

    /** Every circuit not closed. */
    async notClosed(): Promise<CircuitRow[]> {
      const rows = await sql.query<Row>(`select ${COLUMNS} from drain_circuits where state <> 'closed'`, [], { prepare: 'drain-circuits-not-closed' });
      return rows.map(fromRow);
    },

    /** Opens a closed circuit for `forMs`; undefined when it was not closed (another worker opened it). */
    open: (drainId: string, forMs: number) =>
      one(
        `insert into drain_circuits (drain_id, state, opened_at, open_until, reopenings, updated_at)
         values ($1, 'open', now(), ${after('$2')}, 0, now())
         on conflict (drain_id) do update set
           state = 'open', opened_at = excluded.opened_at, open_until = excluded.open_until, reopenings = 0,
           probe_owner = null, probe_until = null, updated_at = now()
         where drain_circuits.state = 'closed'
         returning ${COLUMNS}`,
        [drainId, forMs],
      ),

    /**
     * Claims the half-open probe for `owner` for `leaseMs`: from open once its time is up, or from
     * half open once the last claim's lease passed (its worker died). Undefined when not claimable.
     */
    claimProbe: (drainId: string, owner: string, leaseMs: number) =>
      one(
        `update drain_circuits set state = 'half_open', probe_owner = $2, probe_until = ${after('$3')}, updated_at = now()
         where drain_id = $1
           and ((state = 'open' and open_until <= now()) or (state = 'half_open' and probe_until <= now()))
         returning ${COLUMNS}`,
        [drainId, owner, leaseMs],
      ),

    /** The probe of `owner` succeeded: closed. Undefined when `owner` no longer holds the probe. */
    close: (drainId: string, owner: string) =>
      one(
        `update drain_circuits set state = 'closed', open_until = null, reopenings = 0, probe_owner = null, probe_until = null, updated_at = now()
         where drain_id = $1 and state = 'half_open' and probe_owner = $2
         returning ${COLUMNS}`,
        [drainId, owner],
      ),

    /** The probe of `owner` failed: open again for `forMs`. Undefined when `owner` no longer holds the probe. */
    reopen: (drainId: string, owner: string, forMs: number) =>
      one(
        `update drain_circuits set state = 'open', opened_at = now(), open_until = ${after('$3')}, reopenings = reopenings + 1,
           probe_owner = null, probe_until = null, updated_at = now()
         where drain_id = $1 and state = 'half_open' and probe_owner = $2
         returning ${COLUMNS}`,
        [drainId, owner, forMs],
      ),

    /** Counts one opening of the drain's circuit in hour `h`. */
    async countOpening(drainId: string, h: number): Promise<void> {
      await sql.query(
        `insert into drain_circuit_hourly (drain_id, h, openings) values ($1, $2, 1)
         on conflict (drain_id, h) do update set openings = drain_circuit_hourly.openings + 1`,
        [drainId, h],
      );
    },

    /** Openings of the drain's circuit by hour, hours `fromH` to `toH`, only hours with any. */
    async openingsByHour(drainId: string, fromH: number, toH: number): Promise<Map<number, number>> {
      const rows = await sql.query<{ h: number; openings: number }>(
        'select h, openings from drain_circuit_hourly where drain_id = $1 and h between $2 and $3',
        [drainId, fromH, toH],
      );
      return new Map(rows.map((r) => [Number(r.h), Number(r.openings)]));
    },

    /** Circuits not closed, of live drains, by drain type and state (the metrics gauge). */
    async countsByType(): Promise<{ drainType: string; state: 'open' | 'half_open'; count: number }[]> {
      const rows = await sql.query<{ type: string; state: 'open' | 'half_open'; n: number }>(
        `select d.type, c.state, count(*)::int as n from drain_circuits c join drains d on d.id = c.drain_id
         where c.state <> 'closed' and d.deleted_at is null group by d.type, c.state`,
      );
      return rows.map((r) => ({ drainType: r.type, state: r.state, count: Number(r.n) }));
    },
  };
}

export type CircuitsRepo = ReturnType<typeof createCircuitsRepo>;
