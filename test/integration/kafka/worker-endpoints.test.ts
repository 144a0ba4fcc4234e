/**
 * What an orchestrator and Prometheus see of a `logdrain worker`:
 * its METRICS_PORT answers from the moment the store is up, before the
 * consumer has joined its group (/healthz 200, /readyz 503 naming the
 * consumer check, then 200 once joined), and after a rebalance its
 * per-partition consumer lag lists only the partitions it still reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaFixture, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/app.js';
import { syntheticRecords } from '../../../src/devtools/synthetic.js';

const PARTITIONS = 4;
/** Long enough that the held join is plain to see, short enough for a quick test. */
const SLOW_SESSION = { KAFKA_SESSION_TIMEOUT_MS: '10000' };

const get = async (port: number, path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, text: await res.text() };
};
const listeningPort = async (w: LogdrainProcess) => (await w.waitForEvent('process.listening')).port as number;
/** The partitions of the worker's latest group join (its `kafka.joined` log line). */
const ownedPartitions = (w: LogdrainProcess) => w.lines.filter((l) => l.event === 'kafka.joined').at(-1)?.partitions as number[] | undefined;
/** The partitions `logdrain_consumer_lag` has a series for. */
const lagPartitions = (exposition: string) =>
  [...exposition.matchAll(/^logdrain_consumer_lag\{[^}]*partition="(\d+)"[^}]*\} \S+$/gm)].map((m) => Number(m[1])).sort((a, b) => a - b);

describe('the worker operator endpoints', () => {
  let fx: KafkaFixture;
  const workers: LogdrainProcess[] = [];
  const spawnWorker = (group: string, env: Record<string, string> = {}) => {
    const w = spawnLogdrain(['worker'], { ...fx.workerEnv, KAFKA_GROUP_ID: group, ...env });
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: PARTITIONS });
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fx?.close();
  });

  it('answer /healthz and /metrics while the group join is held, with /readyz 503 naming the consumer until it has joined', async () => {
    const group = 'endpoints-join';
    // A member that has stopped answering (frozen) holds the next rebalance: the broker keeps a
    // newcomer's JoinGroup until that member's session times out, as after a worker crash.
    const frozen = spawnWorker(group, SLOW_SESSION);
    await frozen.waitForEvent('kafka.joined', 60_000);
    frozen.kill('SIGSTOP');
    const w = spawnWorker(group, SLOW_SESSION);
    const port = await listeningPort(w);
    expect(await get(port, '/healthz')).toEqual({ status: 200, text: '{"status":"ok"}' });
    const notReady = await get(port, '/readyz');
    expect(notReady.status).toBe(503);
    expect(JSON.parse(notReady.text)).toEqual({ status: 'not_ready', checks: { store: true, consumer: false, shuttingDown: false } });
    const metrics = await get(port, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^logdrain_process_start_time_seconds\{role="worker"\} \d+/m);

    await w.waitForEvent('kafka.joined', 60_000);
    const ready = await waitFor(async () => {
      const r = await get(port, '/readyz');
      return r.status === 200 ? r : undefined;
    }, { what: '/readyz 200 after joining', timeoutMs: 10_000 });
    expect(JSON.parse(ready.text)).toEqual({ status: 'ready', checks: { store: true, consumer: true, shuttingDown: false } });
    frozen.kill('SIGKILL');
    w.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
  }, 90_000);

  it('stop reporting the lag of partitions lost in a rebalance', async () => {
    const group = 'endpoints-lag';
    const first = spawnWorker(group);
    const port = await listeningPort(first);
    await waitFor(() => ownedPartitions(first)?.length === PARTITIONS, { what: 'the first worker reading every partition', timeoutMs: 60_000, intervalMs: 200 });
    // Records on every partition, so the worker has a lag figure for each.
    const producer = await fx.producer();
    const records = [...syntheticRecords(PARTITIONS * 10, { orgs: [{ orgId: 'org_acme', agents: [{ id: 'agt_support', name: 'support-bot' }] }], idPrefix: 'lag' })];
    await producer.send({ topic: fx.topic, messages: records.map((r, i) => ({ partition: i % PARTITIONS, value: JSON.stringify(r) })) });
    await waitFor(async () => lagPartitions((await get(port, '/metrics')).text).length === PARTITIONS, { what: 'a lag series per partition', timeoutMs: 30_000, intervalMs: 200 });

    const second = spawnWorker(group);
    // The group has settled once the two latest assignments share out every partition.
    await waitFor(() => {
      const both = [...(ownedPartitions(first) ?? []), ...(ownedPartitions(second) ?? [])];
      return both.length === PARTITIONS && new Set(both).size === PARTITIONS && (ownedPartitions(second)?.length ?? 0) > 0;
    }, { what: 'the two workers sharing the partitions', timeoutMs: 60_000, intervalMs: 200 });
    const kept = ownedPartitions(first)!;
    const lost = ownedPartitions(second)!;

    // New records everywhere: the first worker fetches again only from what it kept.
    await producer.send({ topic: fx.topic, messages: records.map((r, i) => ({ partition: i % PARTITIONS, value: JSON.stringify({ ...r, id: `${r.id}-again` }) })) });
    await waitFor(async () => (await get(port, '/readyz')).status === 200, { what: 'the first worker ready again', timeoutMs: 10_000 });
    const reported = await waitFor(async () => {
      const r = lagPartitions((await get(port, '/metrics')).text);
      return kept.every((p) => r.includes(p)) ? r : undefined;
    }, { what: 'lag of the partitions kept, after the new records', timeoutMs: 30_000, intervalMs: 200 });
    expect(reported.filter((p) => lost.includes(p)), `lag still reported for lost partitions ${lost.join(',')}`).toEqual([]);
    expect(reported, 'one lag series per partition the worker reads').toEqual([...kept].sort((a, b) => a - b));
    for (const w of [first, second]) w.kill('SIGTERM');
    expect((await Promise.all([first.exited, second.exited])).map((e) => e.code)).toEqual([0, 0]);
  }, 120_000);
});
