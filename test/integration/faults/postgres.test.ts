/**
 * Postgres connections dropped: while a few thousand records stream
 * through a `logdrain worker`, every connection the worker holds to Postgres
 * is terminated by the server (`pg_terminate_backend`), again and again, at
 * random intervals: mid-query, mid-transaction, idle in the pool. The worker
 * must stay up and reconnect through its pool, account every batch it
 * delivered before the offset moves (the ledger balances, the delivery
 * records agree with what arrived, the platform copy holds each record once),
 * and still stop cleanly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startKafkaFixture, produceStream, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/app.js';
import { dumpLogOnFailure, expectDeliveryRecordsAgree, expectGracefulStop, expectLedgersBalanced, sleep } from '../../helpers/fault-kit.js';

/** Names the worker's connections, so only they are cut (the test's own API shares the database). */
const WORKER_APP_NAME = 'logdrain-fault-worker';

describe('Postgres connections of the worker dropped and restored, repeatedly, mid-stream', () => {
  let fx: KafkaFixture;
  let drainId: string;
  let admin: pg.Client;
  const workers: LogdrainProcess[] = [];

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: 2 });
    drainId = await fx.createVerifiedDrain('org_acme', 'lk_acme_manage', { name: 'pg', type: 'http', endpoint: `${fx.receiver.url}/pg`, format: 'ndjson' });
    admin = new pg.Client({ connectionString: fx.db.url });
    await admin.connect();
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await admin?.end().catch(() => {});
    await fx?.close();
  });

  /** Terminates every backend serving the worker; answers how many there were. */
  async function cutWorkerConnections(): Promise<number> {
    const rows = await admin.query<{ ok: boolean }>(
      'select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = current_database() and application_name = $1 and pid <> pg_backend_pid()',
      [WORKER_APP_NAME],
    );
    return rows.rows.filter((r) => r.ok).length;
  }

  /**
   * Holds a lock on deliveries until a worker backend waits on it (its
   * accounting transaction, mid-flush), then cuts the worker's connections;
   * answers whether a waiting write was cut.
   */
  async function cutMidWrite(): Promise<boolean> {
    await admin.query('begin');
    try {
      await admin.query('lock table deliveries in access exclusive mode');
      // Records arrive in fetches a few seconds apart; the next one's accounting will queue here.
      const waiting = await waitFor(async () => {
        const r = await admin.query(
          "select 1 from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
          [WORKER_APP_NAME],
        );
        return r.rows.length > 0;
      }, { timeoutMs: 8000, intervalMs: 20 }).catch(() => false);
      if (waiting) await cutWorkerConnections();
      return waiting;
    } finally {
      await admin.query('commit');
    }
  }

  it('keeps the worker running, reconnecting, and loses no record', async () => {
    const url = new URL(fx.db.url);
    url.searchParams.set('application_name', WORKER_APP_NAME);
    const env = { ...fx.workerEnv, DATABASE_URL: url.toString(), HEARTBEAT_INTERVAL_MS: '0' };
    const worker = spawnLogdrain(['worker'], env);
    workers.push(worker);
    dumpLogOnFailure(worker, 60);
    await worker.waitForEvent('kafka.joined', 30_000);

    const producer = await fx.producer();
    const total = 3000;
    let producing = true;
    const produced = produceStream(producer, fx.topic, {
      count: total, orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot' }, { id: 'agt_sales', name: 'sales-bot' }],
      idPrefix: 'pgcut', chunk: 40, pauseMs: 300,
    }).finally(() => (producing = false));
    await waitFor(() => fx.receivedIds('/pg').size > 0, { what: 'the first delivery', timeoutMs: 20_000 });

    // Two kinds of cut, in turn: any moment (connections idle in the pool, or busy), and
    // mid-write: deliveries locked until the worker's accounting transaction waits on the
    // lock, then its connection is terminated. Rounds go on while records are produced.
    const cuts = { anyMoment: 0, midWrite: 0, connections: 0 };
    while (producing) {
      const n = await cutWorkerConnections();
      cuts.connections += n;
      if (n > 0) cuts.anyMoment++;
      await sleep(100 + Math.random() * 500);
      if (await cutMidWrite()) cuts.midWrite++;
    }
    cuts.connections += await cutWorkerConnections();
    console.info(`postgres: cuts ${JSON.stringify(cuts)}`);
    expect({ exitCode: worker.child.exitCode, signal: worker.child.signalCode }, 'the worker process ended during the cuts').toEqual({ exitCode: null, signal: null });
    // Records arrive in fetches seconds apart, so a run holds a few mid-write cuts, not dozens.
    expect(cuts.anyMoment).toBeGreaterThanOrEqual(2);
    expect(cuts.midWrite).toBeGreaterThanOrEqual(2);

    const ids = await produced;
    const [report] = await expectLedgersBalanced(fx, [{ drainId, path: '/pg', produced: ids }], 'postgres', 45_000);
    expect(report!.droppedByReason).toEqual({});
    await expectDeliveryRecordsAgree(fx, { drainId, path: '/pg', produced: ids });
    // The platform copy is written by its own accounting write, retried after a cut like the
    // others, so it can land after the deliveries balance: wait for it, then hold it to exactly once.
    const storedCount = async () =>
      (await fx.api.store.sql.query<{ n: number }>("select count(*)::int as n from agent_logs where id like 'pgcut%'"))[0]!.n;
    await waitFor(async () => (await storedCount()) >= total, { what: 'the platform copy of every record', timeoutMs: 30_000 });
    expect(await storedCount()).toBe(total);

    // The worker lived through every cut, and said so in its log.
    expect(worker.child.exitCode).toBeNull();
    const warnings = worker.lines.filter((l) => typeof l.event === 'string' && /failed/.test(l.event)).map((l) => l.event);
    console.info(`postgres: worker warnings ${JSON.stringify([...new Set(warnings)])}`);
    expect(warnings).toContain('account.write_failed');
    await expectGracefulStop(worker);
  }, 120_000);
});
