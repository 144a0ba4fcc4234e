/**
 * A drain replay survives a worker restart: a `logdrain worker` child process running a replay is
 * stopped (SIGTERM) mid-window; it ends the page it is sending, records its position and gives the
 * lease back, and a fresh worker resumes after that position. Every record of the window reaches
 * the receiver exactly once: no page is sent twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaFixture, type KafkaFixture } from '../../helpers/kafka-fixture.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/app.js';
import { records } from '../../helpers/records.js';

const PATH = '/replay-restart';
const TOTAL = 4000;

describe('a replay across a worker restart', () => {
  let fx: KafkaFixture;
  let drainId: string;
  const workers: LogdrainProcess[] = [];

  beforeAll(async () => {
    fx = await startKafkaFixture({ partitions: 2 });
    drainId = await fx.createVerifiedDrain('org_acme', 'lk_acme_manage', { name: 'replay-restart', type: 'http', endpoint: `${fx.receiver.url}${PATH}`, format: 'ndjson' });
    // The window: records in the platform copy, as a worker wrote them.
    const now = Date.now();
    const recs = records(TOTAL).map((r, i) => ({ ...r, id: `rr-${String(i).padStart(5, '0')}`, timestamp: new Date(now - 600_000 + i * 100).toISOString() }));
    await fx.api.store.logs.insert(recs, 7);
    // Replay batches take their time: a stop finds the replay mid-window.
    fx.receiver.respondWith((r, res) => {
      if (r.headers['logdrain-replay'] === undefined) return false;
      setTimeout(() => res.writeHead(200).end(), 40);
      return true;
    });
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fx?.close();
  });

  it('resumes from the recorded position and sends every record once', async () => {
    const env = { ...fx.workerEnv, REPLAY_POLL_MS: '100', REPLAY_LEASE_MS: '5000', BATCH_MAX_RECORDS: '50', HEARTBEAT_INTERVAL_MS: '0' };
    const spawnWorker = () => {
      const w = spawnLogdrain(['worker'], env);
      workers.push(w);
      return w;
    };
    const first = spawnWorker();
    await first.waitForEvent('worker.started', 60_000);

    const res = await fx.api.request('POST', `/admin/orgs/org_acme/log-drains/${drainId}/replays`, { token: 'lk_acme_manage', body: { since: '1h', until: '0s' } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const replayId = res.body.id as string;
    const read = async () => (await fx.api.request('GET', `/admin/orgs/org_acme/log-drains/${drainId}/replays/${replayId}`, { token: 'lk_acme_manage' })).body;

    // Past its first page (1,000 records, 20 batches), then stopped.
    await waitFor(() => fx.receiver.accepted().filter((r) => r.path === PATH).length >= 25, { what: 'the replay past its first page', timeoutMs: 60_000, intervalMs: 10 });
    first.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);

    const stopped = await read();
    expect(stopped.status).toBe('running');
    expect(stopped.progress.recordsRead % 1000).toBe(0);
    expect(stopped.progress.recordsRead).toBeGreaterThanOrEqual(2000);
    expect(stopped.progress.recordsRead).toBeLessThan(TOTAL);
    // What arrived is what the recorded pages hold: the page under way at the stop was ended.
    expect(fx.receivedIds(PATH).size).toBe(stopped.progress.recordsSent);

    const second = spawnWorker();
    const claimed = await second.waitForEvent('replay.claimed', 60_000, (l) => l.replayId === replayId);
    expect(claimed.resumedAfter).toBe(stopped.progress.position.recordId);
    const done = await waitFor(async () => {
      const r = await read();
      return r.status === 'completed' ? r : undefined;
    }, { what: 'the replay completed', timeoutMs: 90_000 });
    expect(done.progress).toMatchObject({ recordsTotal: TOTAL, recordsRead: TOTAL, recordsSent: TOTAL });

    const counts = fx.receivedIds(PATH);
    expect(counts.size).toBe(TOTAL);
    const twice = [...counts].filter(([, n]) => n !== 1);
    expect(twice).toEqual([]);
    for (const r of fx.receiver.accepted().filter((x) => x.path === PATH)) expect(r.headers['logdrain-replay']).toBe(replayId);

    second.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  }, 240_000);
});
