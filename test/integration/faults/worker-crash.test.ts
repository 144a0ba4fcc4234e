/**
 * Worker crashes: a `logdrain worker` child process is killed with
 * SIGKILL at random moments, up to three times in one run (at least twice),
 * while a few thousand records stream in; a fresh worker is started after
 * each kill. Each drain's ledger balances (every record received, or
 * dropped with a reason), the delivery records agree with what arrived, and
 * the last worker still stops cleanly. Each kill falls a random 0-300 ms
 * after a batch was answered (its accounting and offset commit under way);
 * the delays are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaFixture, produceStream, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/app.js';
import { expectDeliveryRecordsAgree, expectGracefulStop, expectLedgersBalanced, sleep, type DrainUnderTest } from '../../helpers/fault-kit.js';

const KILLS = 3;

describe('a worker killed with SIGKILL at random points, several times in one run', () => {
  let fx: KafkaFixture;
  const workers: LogdrainProcess[] = [];
  const drains: { drainId: string; path: string }[] = [];

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: 4 });
    // Two drains of one organization: every record must reach (or be dropped by) each of them.
    for (const [path, format] of [['/kill-ndjson', 'ndjson'], ['/kill-json', 'json']] as const) {
      const drainId = await fx.createVerifiedDrain('org_acme', 'lk_acme_manage', { name: path.slice(1), type: 'http', endpoint: `${fx.receiver.url}${path}`, format });
      drains.push({ drainId, path });
    }
    // A destination that takes its time: a kill usually finds batches in flight, not an idle worker.
    fx.receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify']) return false;
      setTimeout(() => res.writeHead(200).end(), 150);
      return true;
    });
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fx?.close();
  });

  it('loses no record on either drain, and the delivery records agree with what arrived', async () => {
    const env = { ...fx.workerEnv, HEARTBEAT_INTERVAL_MS: '0' };
    const spawnWorker = () => {
      const w = spawnLogdrain(['worker'], env);
      workers.push(w);
      return w;
    };
    let current = spawnWorker();
    await current.waitForEvent('kafka.joined', 30_000);

    const producer = await fx.producer();
    const total = 3000;
    let producedAll = false;
    const producing = produceStream(producer, fx.topic, {
      count: total, orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot' }, { id: 'agt_sales', name: 'sales-bot' }],
      idPrefix: 'kill', chunk: 30, pauseMs: 300, junkEvery: 1,
    }).finally(() => (producedAll = true));

    const kills: { afterAnswerMs: number; receivedAtKill: number }[] = [];
    // Kills only while records are still being produced, so each one falls mid-stream.
    for (let k = 0; k < KILLS && !producedAll; k++) {
      // Let this worker take over and deliver something first, so every kill hits a working worker.
      const before = fx.receiver.accepted().length;
      await waitFor(() => fx.receiver.accepted().length > before, { what: `worker ${k + 1} to deliver`, timeoutMs: 30_000, intervalMs: 10 });
      // Then a random point just after a batch was answered: its accounting and offset commit are under way.
      await sleep(Math.random() * 800);
      const answered = fx.receiver.accepted().length;
      await waitFor(() => fx.receiver.accepted().length > answered, { what: 'the next answered batch', timeoutMs: 30_000, intervalMs: 5 });
      const afterAnswerMs = Math.round(Math.random() * 300);
      await sleep(afterAnswerMs);
      current.kill('SIGKILL');
      expect((await current.exited).signal).toBe('SIGKILL');
      kills.push({ afterAnswerMs, receivedAtKill: fx.receivedIds(drains[0]!.path).size });
      current = spawnWorker();
      await current.waitForEvent('kafka.joined', 30_000);
    }
    console.info(`worker-crash: kills ${JSON.stringify(kills)}`);
    expect(kills.length, 'kills before the stream ended').toBeGreaterThanOrEqual(2);

    const ids = await producing;
    expect(ids).toHaveLength(total);
    const underTest: DrainUnderTest[] = drains.map((d) => ({ ...d, produced: ids }));
    const reports = await expectLedgersBalanced(fx, underTest, 'worker-crash', 45_000);
    for (const r of reports) expect(r.droppedByReason).toEqual({});
    for (const d of underTest) await expectDeliveryRecordsAgree(fx, d);

    // The platform copy holds every record once, whatever was re-read after each kill.
    const stored = await fx.api.store.sql.query<{ n: number }>("select count(*)::int as n from agent_logs where id like 'kill%'");
    expect(stored[0]!.n).toBe(total);
    await expectGracefulStop(current);
  }, 120_000);
});
