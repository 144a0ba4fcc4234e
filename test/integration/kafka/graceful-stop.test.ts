/**
 * CONTRACT part 1's graceful stop, proven with a real process: a worker
 * receiving SIGTERM (and another SIGINT) in the middle of a stream, while
 * deliveries to a slow destination are in flight, exits 0 within
 * SHUTDOWN_TIMEOUT_MS. What it had delivered and accounted for before
 * stopping is committed: the next worker delivers the rest and nothing
 * twice, and the delivery records add up to what the destination received.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaFixture, produceStream, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/app.js';

const SHUTDOWN_TIMEOUT_MS = 10_000;

describe('graceful stop in the middle of a stream', () => {
  let fx: KafkaFixture;
  let drainId: string;
  const workers: LogdrainProcess[] = [];

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: 2 });
    drainId = await fx.createVerifiedDrain('org_acme', 'lk_acme_manage', { name: 'stop', type: 'http', endpoint: `${fx.receiver.url}/stop`, format: 'ndjson' });
    // A slow destination: every batch is in flight for 300 ms.
    fx.answerSlowly(300);
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fx?.close();
  });

  it('exits 0 within the limit on SIGTERM and SIGINT, losing nothing and resending nothing it had accounted for', async () => {
    const env = { ...fx.workerEnv, SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) };
    const producer = await fx.producer();
    const total = 4000;
    const first = spawnLogdrain(['worker'], env);
    workers.push(first);
    await first.waitForEvent('kafka.joined');
    const producing = produceStream(producer, fx.topic, {
      count: total, orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot' }], idPrefix: 'stop', chunk: 50, pauseMs: 200,
    });
    let produced = false;
    void producing.then(() => (produced = true));

    const stops: { signal: NodeJS.Signals; ms: number; code: number | null; receivedBefore: number; midStream: boolean }[] = [];
    const stopMidStream = async (w: LogdrainProcess, signal: NodeJS.Signals, after: number) => {
      await waitFor(() => fx.receivedIds('/stop').size >= after, { what: `${after} records before ${signal}`, timeoutMs: 60_000 });
      const started = Date.now();
      const midStream = !produced;
      w.kill(signal);
      const { code } = await w.exited;
      stops.push({ signal, ms: Date.now() - started, code, receivedBefore: after, midStream });
    };

    await stopMidStream(first, 'SIGTERM', 1000);
    const second = spawnLogdrain(['worker'], env);
    workers.push(second);
    await second.waitForEvent('kafka.joined');
    await stopMidStream(second, 'SIGINT', 2200);
    const third = spawnLogdrain(['worker'], env);
    workers.push(third);
    const ids = await producing;
    await waitFor(() => fx.receivedIds('/stop').size >= total, { what: 'every record', timeoutMs: 90_000, intervalMs: 250 });

    for (const s of stops) {
      expect(s.midStream, `${s.signal} came while records were still being produced`).toBe(true);
      expect(s.code, `${s.signal} exit code`).toBe(0);
      expect(s.ms, `${s.signal} took ${s.ms} ms`).toBeLessThanOrEqual(SHUTDOWN_TIMEOUT_MS + 2000);
    }
    for (const w of [first, second]) {
      expect(w.lines.some((l) => l.event === 'worker.stopped')).toBe(true);
      // Structured logs: every line is JSON (anything else lands in stderr here) with a level, a time and an event name.
      expect(w.stderr).toEqual([]);
      for (const l of w.lines) {
        expect(typeof l.level, JSON.stringify(l)).toBe('number');
        expect(l.time).toMatch(/^\d{4}-\d{2}-\d{2}T/);
        expect(typeof l.event, JSON.stringify(l)).toBe('string');
      }
      expect(w.lines.map((l) => l.event)).toEqual(expect.arrayContaining(['process.started', 'kafka.joined', 'process.stopping', 'worker.stopped']));
    }

    const received = fx.receivedIds('/stop');
    expect(ids.filter((id) => !received.has(id))).toEqual([]);
    // A graceful stop commits everything accounted for: nothing was delivered twice.
    const twice = [...received].filter(([, n]) => n > 1).map(([id]) => id);
    expect(twice).toEqual([]);

    // The accounting matches the destination: successful batch rows cover exactly what it received.
    const rows = await waitFor(async () => {
      const r = await fx.api.store.sql.query<{ n: number }>("select coalesce(sum(record_count), 0)::int as n from deliveries where drain_id = $1 and ok and kind = 'batch'", [drainId]);
      return r[0]!.n >= total ? r : undefined;
    }, { what: 'delivery records', timeoutMs: 10_000 });
    expect(rows[0]!.n).toBe(total);
    console.info(`graceful stop: ${stops.map((s) => `${s.signal} after ${s.receivedBefore} in ${s.ms} ms`).join(', ')}; ${total} delivered once each`);
    third.kill('SIGTERM');
    expect((await third.exited).code).toBe(0);
  }, 180_000);
});
