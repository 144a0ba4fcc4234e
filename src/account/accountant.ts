/**
 * Accounting: delivery records, hourly health counters and dead letters are
 * buffered and written in batches (one multi-row statement per table per
 * flush). A caller's promise resolves once its rows are durable, which is
 * when the records they cover count as accounted for. A failed write keeps
 * the rows and tries again: nothing is released before it is written. One
 * flush is one transaction (five multi-row statements at most), written at the
 * same time as the platform copy of the flush's records (one insert, on
 * another connection).
 *
 * The platform copy is written apart from the transaction, so one bad row
 * must not hold every other organization's copies: when Postgres refuses a
 * copy for what it holds (write-errors.ts), the copies are halved until the
 * refused ones stand alone, and those become dead letters; the rest are
 * written. Copies held for another try are bounded (`maxHeldCopies`): past
 * it the oldest are given up, counted and logged, rather than growing
 * without end while Postgres is away. `healthy()` turns false once writes
 * have failed for `stuckAfterMs`, which readiness reports.
 */
import type { DeliveryRecord } from '../model/delivery.js';
import { noteDrainActivity } from '../store/change-epochs.js';
import type { DeadLetter } from '../modules/drains/tables/dead-letters.js';
import type { HourlyIncrement } from '../modules/drains/tables/health.js';
import type { DropReason } from '../model/drop-reasons.js';
import type { ParkedRecord } from '../modules/drains/tables/backlog.js';
import type { Sql } from '../store/sql.js';
import { createDeliveriesRepo } from '../modules/drains/tables/deliveries.js';
import { createHealthRepo } from '../modules/drains/tables/health.js';
import { createDeadLettersRepo } from '../modules/drains/tables/dead-letters.js';
import { createBacklogRepo } from '../modules/drains/tables/backlog.js';
import type { LogCopy, LogsRepo } from '../modules/logs/repository.js';
import type { Logger } from '../telemetry/logger.js';
import { isPermanentWriteError } from '../store/write-errors.js';

export interface AccountantOptions {
  store: { sql: Sql };
  /** The platform copy of records (log read routes), written alongside each flush's transaction. */
  logs?: { repo: LogsRepo; retentionDays: number; onStored?: (count: number) => void };
  logger: Logger;
  flushIntervalMs?: number;
  maxBufferedRows?: number;
  /** Platform copies held for another try at most; past it the oldest are given up. */
  maxHeldCopies?: number;
  /** Writes failing this long make the accountant unhealthy (readiness). */
  stuckAfterMs?: number;
}

/** Dead letters of copies Postgres refused are recorded under this source. */
export const PLATFORM_COPY_SOURCE = 'platform-copy';

export interface UsageIncrement {
  drainId: string;
  day: number;
  events: number;
  bytes: number;
}

export interface AccountingEntry {
  deliveries?: DeliveryRecord[];
  hourly?: HourlyIncrement[];
  deadLetters?: DeadLetter[];
  /** Records parked in the durable backlog. */
  backlog?: ParkedRecord[];
  /** Delivered events and bytes, for the quota ladder. */
  usage?: UsageIncrement[];
  /** Consumed records, for the platform copy. */
  logs?: LogCopy[];
}

interface Waiting extends Required<AccountingEntry> {
  resolve: () => void;
}

const EMPTY_ROWS: Omit<Waiting, 'resolve' | 'logs'> = { deliveries: [], hourly: [], deadLetters: [], backlog: [], usage: [] };

/** Adds `h`'s counts to `into` (the same drain and hour): a flush writes one row per drain and hour. */
export function addHourly(into: HourlyIncrement, h: HourlyIncrement): void {
  into.delivered += h.delivered;
  into.dropped += h.dropped;
  into.rejected += h.rejected;
  if (h.seen) into.seen = (into.seen ?? 0) + h.seen;
  if (!h.droppedBy) return;
  const by = (into.droppedBy ??= {});
  for (const [reason, n] of Object.entries(h.droppedBy) as [DropReason, number][]) by[reason] = (by[reason] ?? 0) + n;
}

export interface Accountant {
  record(entry: AccountingEntry): Promise<void>;
  flush(): Promise<void>;
  stop(): Promise<void>;
  /** False once writes have kept failing for `stuckAfterMs`: records are no longer being accounted for. */
  healthy(nowMs?: number): boolean;
}

export function createAccountant(opts: AccountantOptions): Accountant {
  const intervalMs = opts.flushIntervalMs ?? 100;
  const maxRows = opts.maxBufferedRows ?? 1000;
  let buffer: Waiting[] = [];
  let rows = 0;
  let flushing: Promise<void> | undefined;
  let failures = 0;
  let failingSinceMs: number | undefined;
  const maxHeldCopies = opts.maxHeldCopies ?? 100_000;
  const stuckAfterMs = opts.stuckAfterMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (ms: number) => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, ms);
  };

  async function copyLogs(to: NonNullable<AccountantOptions['logs']>, logs: LogCopy[]): Promise<void> {
    const refused = await copyIsolating(to, logs);
    if (refused.length === 0) return;
    await createDeadLettersRepo(opts.store.sql).insertMany(refused);
    opts.logger.warn({ event: 'account.copy_refused', count: refused.length, reason: refused[0]!.reason }, 'platform copies refused by the store were dead-lettered');
  }

  /**
   * Writes the copies; when Postgres refuses them for what they hold, halves them until each
   * refused copy stands alone (log2 of the batch in extra statements per bad row) and returns
   * those as dead letters. Any other failure is thrown: the whole copy is tried again.
   */
  async function copyIsolating(to: NonNullable<AccountantOptions['logs']>, logs: LogCopy[]): Promise<DeadLetter[]> {
    try {
      const { stored } = await to.repo.insertCopies(logs, to.retentionDays);
      to.onStored?.(stored);
      return [];
    } catch (e) {
      if (!isPermanentWriteError(e)) throw e;
      if (logs.length === 1) {
        const json = logs[0]!.json;
        return [{ source: PLATFORM_COPY_SOURCE, reason: `platform copy refused: ${(e as Error).message}`, payload: typeof json === 'string' ? json : json.toString('utf8') }];
      }
      const mid = logs.length >> 1;
      return [...(await copyIsolating(to, logs.slice(0, mid))), ...(await copyIsolating(to, logs.slice(mid)))];
    }
  }

  /** Gives up the oldest copies held for another try past `maxHeldCopies` (their entries resolve). */
  function boundHeldCopies(held: Waiting[]): Waiting[] {
    let count = held.reduce((n, w) => n + w.logs.length, 0);
    if (count <= maxHeldCopies) return held;
    let dropped = 0;
    const kept: Waiting[] = [];
    for (const w of held) {
      if (count > maxHeldCopies) {
        count -= w.logs.length;
        dropped += w.logs.length;
        w.resolve();
      } else kept.push(w);
    }
    opts.logger.error({ event: 'account.copies_given_up', count: dropped, maxHeldCopies }, 'platform copies given up: the store kept refusing them');
    return kept;
  }

  async function writeOnce(): Promise<void> {
    let taken = buffer;
    buffer = [];
    rows = 0;
    try {
      const hourly = new Map<string, HourlyIncrement>();
      for (const w of taken) {
        for (const h of w.hourly) {
          const k = `${h.drainId}\u0000${h.h}`;
          const cur = hourly.get(k);
          if (cur) addHourly(cur, h);
          else hourly.set(k, { ...h, droppedBy: { ...h.droppedBy } });
        }
      }
      const usage = new Map<string, UsageIncrement>();
      for (const w of taken) {
        for (const u of w.usage) {
          const k = `${u.drainId}\u0000${u.day}`;
          const cur = usage.get(k);
          if (cur) {
            cur.events += u.events;
            cur.bytes += u.bytes;
          } else usage.set(k, { ...u });
        }
      }
      // The platform copy and the accounting transaction go to Postgres at once, on two connections:
      // a spilling worker's flush is one of each, and written one after the other they were most of
      // the time records waited for their offsets (pg_stat_statements, 10,000 agents: 47 s of copies
      // and 37 s of transactions in a two-minute run, all on the accountant's one path).
      const logs = opts.logs ? taken.flatMap((w) => w.logs) : [];
      const copying = opts.logs && logs.length > 0 ? copyLogs(opts.logs, logs) : Promise.resolve();
      // One transaction: a flush is written whole or not at all, so a retry never counts twice.
      const accounting = opts.store.sql.transaction(async (tx) => {
        await createDeliveriesRepo(tx).insertMany(taken.flatMap((w) => w.deliveries));
        await createHealthRepo(tx).addHourly([...hourly.values()]);
        await createDeadLettersRepo(tx).insertMany(taken.flatMap((w) => w.deadLetters));
        const backlog = createBacklogRepo(tx);
        await backlog.park(taken.flatMap((w) => w.backlog));
        await backlog.addUsage([...usage.values()]);
      }).then(() => {
        // Caches of the drains' live counters in this process re-read them (store/change-epochs.ts),
        // from the moment the rows are visible: not once the flush's copy is written too, or a read
        // that already sees a delivery could still be answered the counters from before it.
        noteDrainActivity();
      });
      const [copied, accounted] = await Promise.allSettled([copying, accounting]);
      // Written again whole: a copy stored by an attempt whose answer was lost is stored twice, and
      // the log reads answer it once (modules/logs/pages.ts).
      if (accounted.status === 'rejected') throw accounted.reason;
      if (copied.status === 'rejected') {
        // The transaction is durable: only the copy is tried again, the entries holding records waiting for it.
        for (const w of taken) if (w.logs.length === 0) w.resolve();
        taken = boundHeldCopies(taken.filter((w) => w.logs.length > 0).map((w) => ({ ...EMPTY_ROWS, logs: w.logs, resolve: w.resolve })));
        throw copied.reason;
      }
      failures = 0;
      failingSinceMs = undefined;
      for (const w of taken) w.resolve();
    } catch (e) {
      buffer = taken.concat(buffer);
      rows += taken.length;
      failures++;
      failingSinceMs ??= Date.now();
      opts.logger.warn({ event: 'account.write_failed', err: (e as Error).message, failures }, 'accounting write failed; retrying');
      schedule(Math.min(5000, 100 * 2 ** Math.min(failures, 6)));
    }
  }

  function flush(): Promise<void> {
    if (flushing) return flushing;
    if (buffer.length === 0) return Promise.resolve();
    flushing = writeOnce().finally(() => {
      flushing = undefined;
      if (buffer.length > 0 && failures === 0) schedule(0);
    });
    return flushing;
  }

  return {
    record(entry) {
      return new Promise<void>((resolve) => {
        const w: Waiting = {
          deliveries: entry.deliveries ?? [],
          hourly: entry.hourly ?? [],
          deadLetters: entry.deadLetters ?? [],
          backlog: entry.backlog ?? [],
          usage: entry.usage ?? [],
          logs: entry.logs ?? [],
          resolve,
        };
        buffer.push(w);
        rows += w.deliveries.length + w.hourly.length + w.deadLetters.length + w.backlog.length + w.logs.length;
        if (rows >= maxRows) void flush();
        else schedule(intervalMs);
      });
    },
    flush,
    healthy(nowMs = Date.now()) {
      return failingSinceMs === undefined || nowMs - failingSinceMs < stuckAfterMs;
    },
    async stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (let i = 0; i < 3 && buffer.length > 0; i++) await flush();
      await flushing;
    },
  };
}
