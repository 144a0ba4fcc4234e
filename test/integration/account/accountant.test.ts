/**
 * The accountant (account/accountant.ts) on a real Postgres server: a flush's
 * accounting transaction and the platform copy of its records are written at
 * the same time, on two connections, and a copy that fails is written again
 * alone, without counting the transaction's rows twice.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { openStore, type Store } from '../../../src/store/store.js';
import { createAccountant, type Accountant } from '../../../src/account/accountant.js';
import { silentLogger } from '../../../src/telemetry/logger.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { waitFor } from '../../helpers/app.js';
import { record } from '../../helpers/records.js';
import { logCopyOf, type LogCopy } from '../../../src/modules/logs/pages.js';

describe('accountant on Postgres', () => {
  let db: TestDatabase;
  let store: Store;
  let admin: pg.Client;
  let accountant: Accountant;
  let n = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = await openStore({ databaseUrl: db.url, maxConnections: 4 });
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    // The day partition the copies below land in, made before any test holds a lock on the table.
    await store.logs.insert([record({ id: 'warm-up' })], 7);
  });
  afterAll(async () => {
    await accountant?.stop();
    await admin?.end();
    await store?.close();
    await db?.drop();
  });
  beforeEach(() => {
    accountant = createAccountant({ store, logs: { repo: store.logs, retentionDays: 7 }, logger: silentLogger(), flushIntervalMs: 10 });
  });

  /** One delivered record: its delivery row, its hourly count and its platform copy. */
  function delivered(drainId: string) {
    const rec = record({ id: `acc-${++n}` });
    const copy: LogCopy = logCopyOf(rec, JSON.stringify(rec), Date.parse(rec.timestamp));
    return {
      recordId: rec.id,
      entry: {
        deliveries: [{
          id: `dlv-${n}`, orgId: rec.orgId, drainId, batchId: `bat-${n}`, kind: 'batch' as const, attempt: 1, recordCount: 1,
          ok: true, statusCode: 200, startedAt: new Date(), expiresAt: new Date(Date.now() + 86_400_000),
        }],
        hourly: [{ drainId, h: 1, delivered: 1, dropped: 0, rejected: 0 }],
        logs: [copy],
      },
    };
  }

  const deliveryRows = async (drainId: string) => Number((await admin.query('select count(*) as n from deliveries where drain_id = $1', [drainId])).rows[0].n);
  const hourlyDelivered = async (drainId: string) => Number((await admin.query('select coalesce(sum(delivered), 0) as n from drain_hourly where drain_id = $1', [drainId])).rows[0]?.n ?? 0);
  const copies = async (id: string) => Number((await admin.query('select count(*) as n from agent_logs where id = $1', [id])).rows[0].n);

  /** Runs `fn` while the platform copy's table is locked by another session: every copy waits. (Promises `fn` answers must come wrapped, or the lock is held until they settle.) */
  async function withCopiesBlocked<T>(fn: () => Promise<T>): Promise<T> {
    await admin.query('begin');
    try {
      await admin.query('lock table agent_log_pages in access exclusive mode');
      return await fn();
    } finally {
      await admin.query('rollback');
    }
  }

  it('commits the accounting transaction while the platform copy of the same flush still waits', async () => {
    const { recordId, entry } = delivered('drn_acc_parallel');
    let done = false;
    const accounted = await withCopiesBlocked(async () => {
      const p = accountant.record(entry).then(() => (done = true));
      // Written one after the other, the delivery row would wait behind the blocked copy.
      await waitFor(async () => (await deliveryRows('drn_acc_parallel')) === 1, { timeoutMs: 5000, what: 'the delivery row' });
      expect(await copies(recordId)).toBe(0);
      expect(done).toBe(false); // the record's offset still waits for its copy
      return { p };
    });
    await accounted.p;
    expect(await copies(recordId)).toBe(1);
    expect(await hourlyDelivered('drn_acc_parallel')).toBe(1);
  });

  it('writes a failed copy again alone: the transaction of its flush counted once', async () => {
    const { recordId, entry } = delivered('drn_acc_retry');
    let withoutCopyDone = false;
    const accounted = await withCopiesBlocked(async () => {
      const p = accountant.record(entry);
      // An entry with no records to copy, in the same flush: released once its transaction commits.
      const q = accountant.record({ hourly: [{ drainId: 'drn_acc_retry', h: 2, delivered: 5, dropped: 0, rejected: 0 }] }).then(() => (withoutCopyDone = true));
      await waitFor(async () => (await deliveryRows('drn_acc_retry')) === 1, { timeoutMs: 5000, what: 'the delivery row' });
      // The copy's connection is cut while it waits for the lock: the copy fails, the transaction stands.
      const cut = await waitFor(async () => {
        const r = await admin.query<{ ok: boolean }>(
          "select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()",
        );
        return r.rows.length > 0 ? r.rows : undefined;
      }, { timeoutMs: 5000, what: 'the waiting copy' });
      expect(cut.length).toBe(1);
      await q;
      expect(withoutCopyDone).toBe(true);
      return { p };
    });
    await accounted.p;
    expect(await copies(recordId)).toBe(1);
    expect(await deliveryRows('drn_acc_retry')).toBe(1);
    // Written twice, the hourly counters would read 2 and 10.
    expect(await hourlyDelivered('drn_acc_retry')).toBe(6);
  });
});
