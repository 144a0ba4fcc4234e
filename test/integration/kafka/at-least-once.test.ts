/**
 * ARCHITECTURE invariant 1, proven with real parts: a `logdrain worker` child
 * process consuming from the librdkafka broker is killed with SIGKILL in the
 * middle of a stream and restarted; every produced record id still reaches
 * the HTTPS receiver. Duplicates are allowed (at least once) and reported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaFixture, produceStream, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/app.js';
import { Kafka, logLevel } from 'kafkajs';

describe('at least once across a worker SIGKILL', () => {
  let fx: KafkaFixture;
  const workers: LogdrainProcess[] = [];

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: 4 });
    await fx.createVerifiedDrain('org_acme', 'lk_acme_manage', { name: 'crash', type: 'http', endpoint: `${fx.receiver.url}/crash`, format: 'ndjson' });
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fx?.close();
  });

  it('delivers every produced record after a kill -9 mid-stream and a restart', async () => {
    const first = spawnLogdrain(['worker'], fx.workerEnv);
    workers.push(first);
    await first.waitForEvent('kafka.joined');

    const producer = await fx.producer();
    const total = 3000;
    const producing = produceStream(producer, fx.topic, {
      count: total, orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot' }, { id: 'agt_sales', name: 'sales-bot' }],
      idPrefix: 'crash', chunk: 100, pauseMs: 60, junkEvery: 1,
    });

    await waitFor(() => fx.receivedIds('/crash').size >= 1500, { what: 'half the records to arrive', timeoutMs: 30_000 });
    first.kill('SIGKILL');
    const atKill = fx.receivedIds('/crash').size;
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(atKill).toBeLessThan(total);

    const second = spawnLogdrain(['worker'], fx.workerEnv);
    workers.push(second);
    const ids = await producing;
    await waitFor(() => fx.receivedIds('/crash').size >= total, { what: 'every record after the restart', timeoutMs: 60_000 });

    const received = fx.receivedIds('/crash');
    const missing = ids.filter((id) => !received.has(id));
    expect(missing).toEqual([]);
    const duplicates = [...received.values()].filter((n) => n > 1).length;
    console.info(`at-least-once: ${total} produced, ${atKill} received before SIGKILL, ${duplicates} delivered more than once`);

    // Malformed messages were dead-lettered, not delivered and not blocking.
    const letters = await fx.api.store.deadLetters.count();
    expect(letters).toBeGreaterThanOrEqual(ids.length / 100);

    second.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);

    // The graceful stop committed everything accounted for: the group's offsets stand at the end of each partition.
    const admin = new Kafka({ clientId: 'test-admin', brokers: fx.broker.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const ends = await admin.fetchTopicOffsets(fx.topic);
      const [committed] = await admin.fetchOffsets({ groupId: fx.workerEnv.KAFKA_GROUP_ID!, topics: [fx.topic] });
      // Keys are orgIds, so this single-org stream fills one partition; the others stay empty and uncommitted.
      for (const end of ends.filter((e) => e.high !== '0')) {
        expect(committed!.partitions.find((p) => p.partition === end.partition)?.offset).toBe(end.high);
      }
    } finally {
      await admin.disconnect();
    }
  }, 120_000);
});
