/**
 * The drain-wide brake (docs/delivery.md, "The circuit"). Retries and parking act batch by batch;
 * a destination that is down or throttling the drain as a whole is better left alone as a whole:
 *
 *   closed    live batches are sent. `openAfterFailures` consecutive retryable failures of the
 *             drain's batches (live or from the backlog), or a 429 with Retry-After, open it.
 *   open      no live batch is sent: they and every record arriving are parked (the existing
 *             parking path), for the Retry-After asked (at most `openMaxMs`) or a backoff.
 *   half_open the time is up and one worker claimed the probe: the backlog pump sends ONE batch.
 *             Delivered: closed (the backlog then drains as it always does). Failed: open again,
 *             for a longer backoff.
 *
 * The state is shared by every worker through the store (modules/drains/tables/circuits.ts: one row per
 * drain, conditional updates): the worker whose update opened the circuit writes the audit entry,
 * counts the opening and tells the metrics; the others see the row on their next refresh (every
 * backlog pump pass) or when their own opening loses. Locally a drain is braked from the moment
 * this worker decides to open it, before the store answers, so its next retry is already held.
 */
import type { Drain } from '../model/drain.js';
import type { AttemptOutcome } from '../model/delivery.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../telemetry/logger.js';
import type { PipelineEvents } from '../telemetry/events.js';
import { createCircuitsRepo, type CircuitRow } from '../modules/drains/tables/circuits.js';
import { auditDrain } from '../audit/drain-audit.js';
import { hourOf } from '../model/time.js';
import { circuitOpenMs } from './retry-policy.js';

/** Who circuit moves are made by, in the audit. */
const CIRCUIT_ACTOR = { type: 'system', id: 'drain-circuit' } as const;
export const CIRCUIT_OPENED = 'logs.drain.circuit_opened';
export const CIRCUIT_CLOSED = 'logs.drain.circuit_closed';

export interface CircuitOptions {
  store: Pick<Store, 'sql' | 'unitOfWork'>;
  logger: Logger;
  events: Pick<PipelineEvents, 'circuitOpened'>;
  /** This worker's name in probe claims. */
  owner: string;
  openAfterFailures: number;
  openBaseMs: number;
  openMaxMs: number;
  /** How long a probe claim holds: a worker that dies while probing leaves it to another after it. */
  probeLeaseMs?: number;
  /** Told when live sends to a drain stop (true) or may start again (false). */
  onBrake?: (drainId: string, braked: boolean) => void;
  random?: () => number;
}

export type OpenReason = 'retry_after' | 'failures' | 'probe_failed';

export interface DrainCircuits {
  /** Whether the drain's live batches are held back now (open or half open, as this worker knows). */
  braked(drainId: string): boolean;
  /** A batch attempt's outcome (not a test, verify or heartbeat): counts failures, opens when due. */
  observe(drain: Drain, outcome: AttemptOutcome, statusCode: number | undefined): void;
  /** Reads every circuit not closed from the store: what other workers opened and closed. */
  refresh(): Promise<void>;
  /** `wait`: open, time not up; `probe`: a probe is due (claim it); `closed`: send as usual. */
  phase(drainId: string, nowMs?: number): 'closed' | 'wait' | 'probe';
  /** Claims the drain's probe in the store; true: this worker sends the one probe batch. */
  claimProbe(drain: Drain): Promise<boolean>;
  /** The claimed probe's outcome: closes the circuit, or opens it again for longer. */
  probed(drain: Drain, outcome: AttemptOutcome): Promise<void>;
  /** Openings in flight (tests wait on them). */
  settled(): Promise<void>;
}

export function createDrainCircuits(opts: CircuitOptions): DrainCircuits {
  const repo = createCircuitsRepo(opts.store.sql);
  const leaseMs = opts.probeLeaseMs ?? 60_000;
  /** Circuits not closed, as this worker last knew them. */
  const known = new Map<string, CircuitRow>();
  /** Drains this worker is opening (braked before the store answers). */
  const opening = new Map<string, Promise<void>>();
  const streaks = new Map<string, number>();

  /**
   * How long an opening holds: a first opening for the Retry-After asked, if any, else a backoff;
   * a reopening (failed probe) for a backoff whose ceiling doubles each time, or longer if asked.
   * Never past `openMaxMs`.
   */
  const openForMs = (reopenings: number, retryAfterMs: number | undefined): number =>
    circuitOpenMs(reopenings, { baseMs: opts.openBaseMs, maxMs: opts.openMaxMs, random: opts.random }, retryAfterMs);

  const isBraked = (drainId: string) => known.has(drainId) || opening.has(drainId);

  /** Records `row` as this worker's view, telling the parking side when the drain's brake changes. */
  function learn(drainId: string, row: CircuitRow | undefined): void {
    const before = isBraked(drainId);
    if (row && row.state !== 'closed') known.set(drainId, row);
    else known.delete(drainId);
    const after = isBraked(drainId);
    if (before !== after) opts.onBrake?.(drainId, after);
  }

  /** Writes an opening won by this worker: its audit entry and its hourly count, with the move. */
  async function recordOpening(
    drain: Drain,
    move: (r: ReturnType<typeof createCircuitsRepo>) => Promise<CircuitRow | undefined>,
    details: Record<string, unknown>,
  ): Promise<CircuitRow | undefined> {
    const row = await opts.store.unitOfWork(async (tx) => {
      const r = createCircuitsRepo(tx.sql);
      const moved = await move(r);
      if (!moved) return undefined;
      await r.countOpening(drain.id, hourOf(Date.now()));
      await auditDrain(tx, CIRCUIT_ACTOR, CIRCUIT_OPENED, drain, { ...details, openedAt: moved.openedAt?.toISOString(), openUntil: moved.openUntil?.toISOString() });
      return moved;
    });
    if (row) {
      opts.events.circuitOpened?.(drain.type);
      opts.logger.warn({ event: 'drain.circuit_opened', drainId: drain.id, openUntil: row.openUntil?.toISOString(), ...details }, 'drain circuit open: live sends held');
    }
    return row;
  }

  function open(drain: Drain, reason: OpenReason, retryAfterMs: number | undefined, failures: number): void {
    if (isBraked(drain.id)) return;
    const done = (async () => {
      try {
        const forMs = openForMs(0, retryAfterMs);
        const won = await recordOpening(drain, (r) => r.open(drain.id, forMs), { reason, failures, retryAfterMs });
        // Lost: another worker opened it first (or it is half open); either way it is not closed.
        learn(drain.id, won ?? (await repo.get(drain.id)));
      } catch (e) {
        opts.logger.warn({ event: 'drain.circuit_failed', drainId: drain.id, err: (e as Error).message }, 'could not open the drain circuit');
      } finally {
        opening.delete(drain.id);
        if (!isBraked(drain.id)) opts.onBrake?.(drain.id, false);
      }
    })();
    opening.set(drain.id, done);
    opts.onBrake?.(drain.id, true);
  }

  return {
    braked: isBraked,

    observe(drain, outcome, statusCode) {
      // A braked drain's attempts (the probe, batches sent before it opened) do not count again.
      if (isBraked(drain.id)) return;
      if (outcome.status === 'success') {
        streaks.delete(drain.id);
        return;
      }
      // A final failure (a redirect, a refused batch) is the batch's, not the destination being down.
      if (outcome.status !== 'retryable') return;
      const n = (streaks.get(drain.id) ?? 0) + 1;
      streaks.set(drain.id, n);
      if (statusCode === 429 && outcome.retryAfterMs !== undefined) {
        streaks.delete(drain.id);
        open(drain, 'retry_after', outcome.retryAfterMs, n);
      } else if (n >= opts.openAfterFailures) {
        streaks.delete(drain.id);
        open(drain, 'failures', outcome.retryAfterMs, n);
      }
    },

    async refresh() {
      const rows = await repo.notClosed();
      const seen = new Set<string>();
      for (const row of rows) {
        seen.add(row.drainId);
        learn(row.drainId, row);
      }
      for (const drainId of [...known.keys()]) if (!seen.has(drainId)) learn(drainId, undefined);
    },

    phase(drainId, nowMs = Date.now()) {
      if (opening.has(drainId)) return 'wait';
      const row = known.get(drainId);
      if (!row) return 'closed';
      if (row.state === 'open') return row.openUntil && row.openUntil.getTime() <= nowMs ? 'probe' : 'wait';
      // Half open: another worker's probe, unless its claim lapsed.
      return row.probeUntil && row.probeUntil.getTime() <= nowMs ? 'probe' : 'wait';
    },

    async claimProbe(drain) {
      const row = await repo.claimProbe(drain.id, opts.owner, leaseMs);
      if (row) {
        learn(drain.id, row);
        opts.logger.info({ event: 'drain.circuit_half_open', drainId: drain.id }, 'drain circuit half open: sending one probe batch');
        return true;
      }
      // Not claimable: another worker claimed it, or it closed; read what it is.
      learn(drain.id, await repo.get(drain.id));
      return false;
    },

    async probed(drain, outcome) {
      // Delivered, or refused for good (the batch's fault, not the destination's): it answers again.
      if (outcome.status !== 'retryable') {
        const row = await opts.store.unitOfWork(async (tx) => {
          const closed = await createCircuitsRepo(tx.sql).close(drain.id, opts.owner);
          if (closed) await auditDrain(tx, CIRCUIT_ACTOR, CIRCUIT_CLOSED, drain, {});
          return closed;
        });
        if (row) opts.logger.info({ event: 'drain.circuit_closed', drainId: drain.id }, 'drain circuit closed: the probe was answered');
        learn(drain.id, row ?? (await repo.get(drain.id)));
        return;
      }
      const reopenings = (known.get(drain.id)?.reopenings ?? 0) + 1;
      const row = await recordOpening(drain, (r) => r.reopen(drain.id, opts.owner, openForMs(reopenings, outcome.retryAfterMs)), {
        reason: 'probe_failed', reopenings, retryAfterMs: outcome.retryAfterMs, errorClass: outcome.errorClass,
      });
      learn(drain.id, row ?? (await repo.get(drain.id)));
    },

    async settled() {
      await Promise.all([...opening.values()]);
    },
  };
}
