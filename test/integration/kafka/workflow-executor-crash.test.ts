/**
 * The workflow executor's guarantees with real processes: two `logdrain worker` children (each
 * runs an executor beside its pipeline) share the runs a `serve` API starts on Postgres; one is
 * killed with SIGKILL in the middle of a step. Its runs are taken over after their lease: every
 * run completes, the killed attempts are recorded as `lost`, and every step completed exactly
 * once, in attempts that never overlapped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { startMockBroker, type MockBroker } from '../../helpers/broker.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { WF_BASE, writeWorkflowsSeed } from '../../helpers/workflows-seed.js';

interface AttemptRow { run_id: string; idx: number; attempt: number; executor: string; outcome: string | null; started_at: Date; ended_at: Date | null }

const LEASE_MS = 1500;

describe('workflow executors as worker processes, one killed mid-step', () => {
  let db: TestDatabase;
  let broker: MockBroker;
  let api: TestApp;
  const workers: LogdrainProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    const topic = `agent-logs-${randomBytes(4).toString('hex')}`;
    broker = await startMockBroker({ topics: [{ name: topic, partitions: 2 }] });
    // The API only serves the routes: the workers' executors run every step.
    api = await startApp({
      DATABASE_URL: db.url, SEED_FILE: writeWorkflowsSeed(), WORKFLOW_EXECUTOR: 'false',
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000',
    }, 'serve');
    env = {
      DATABASE_URL: db.url, KAFKA_BROKERS: broker.bootstrap, KAFKA_TOPIC: topic, KAFKA_GROUP_ID: `workers-${topic}`,
      KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_HEARTBEAT_INTERVAL_MS: '500', METRICS_PORT: '0', HOST: '127.0.0.1',
      SHUTDOWN_TIMEOUT_MS: '10000', WORKFLOW_LEASE_MS: String(LEASE_MS), WORKFLOW_POLL_MS: '100', WORKFLOW_EXECUTOR_SLOTS: '4',
    };
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await api?.stop().catch(() => {});
    await broker?.stop().catch(() => {});
    await db?.drop().catch(() => {});
  });

  const spawnWorker = async (): Promise<{ proc: LogdrainProcess; executorId: string }> => {
    const proc = spawnLogdrain(['worker'], env);
    workers.push(proc);
    const started = await proc.waitForEvent('workflows.executor.started', 60_000);
    return { proc, executorId: started.executorId as string };
  };
  const attempts = (runIds: string[]) =>
    api.store.sql.query<AttemptRow>('select * from workflow_step_attempts where run_id = any($1::text[]) order by run_id, idx, attempt', [runIds]);

  it('finishes every run after a SIGKILL mid-step: lost attempts recorded, each step completed exactly once', async () => {
    const a = await spawnWorker();
    const b = await spawnWorker();
    const graph = { steps: [{ id: 'prep', kind: 'noop' }, { id: 'work', kind: 'sleep', ms: 2500 }, { id: 'done', kind: 'output', value: 'ok' }] };
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await api.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body: { graph, idempotencyKey: `crash-${i}` } });
      expect(res.status).toBe(202);
      ids.push(res.body.runId as string);
    }
    // Both executors mid-step: the runs are shared (four slots each), and A's are asleep in `work`.
    await waitFor(async () => {
      const open = (await attempts(ids)).filter((r) => r.ended_at === null && r.idx === 1);
      return open.some((r) => r.executor === a.executorId) && open.some((r) => r.executor === b.executorId);
    }, { what: 'both executors inside the sleeping step', timeoutMs: 30_000 });

    a.proc.kill('SIGKILL');
    expect((await a.proc.exited).signal).toBe('SIGKILL');
    const killedAt = Date.now();
    const openAtKill = (await attempts(ids)).filter((r) => r.executor === a.executorId && r.ended_at === null);
    expect(openAtKill.length).toBeGreaterThan(0);

    await waitFor(async () => {
      const [{ n }] = (await api.store.sql.query<{ n: number }>("select count(*)::int as n from workflow_runs where id = any($1::text[]) and status = 'completed'", [ids])) as [{ n: number }];
      return n === ids.length;
    }, { what: 'every run to complete after the kill', timeoutMs: 60_000 });

    const rows = await attempts(ids);
    // Nothing left open, and the only attempts not completed are the killed executor's.
    expect(rows.filter((r) => r.outcome === null)).toEqual([]);
    const lost = rows.filter((r) => r.outcome === 'lost');
    expect(lost.map((r) => `${r.run_id}/${r.idx}/${r.attempt}`).sort()).toEqual(openAtKill.map((r) => `${r.run_id}/${r.idx}/${r.attempt}`).sort());
    for (const id of ids) {
      const own = rows.filter((r) => r.run_id === id);
      for (const idx of [0, 1, 2]) expect(own.filter((r) => r.idx === idx && r.outcome === 'completed')).toHaveLength(1);
      // One executor at a time on a run: each attempt starts after the one before it ended.
      for (let i = 1; i < own.length; i++) expect(own[i]!.started_at.getTime()).toBeGreaterThanOrEqual(own[i - 1]!.ended_at!.getTime());
    }
    // The killed steps ran again on the survivor, after the lease ran out.
    for (const l of lost) {
      const again = rows.find((r) => r.run_id === l.run_id && r.idx === l.idx && r.attempt === l.attempt + 1)!;
      expect(again.executor).toBe(b.executorId);
      expect(again.outcome).toBe('completed');
      expect(again.started_at.getTime()).toBeGreaterThanOrEqual(killedAt - 100);
    }
    // As the API shows it: the taken-over step's attempt counts the lost try; the output is there.
    const takenOver = lost[0]!;
    const detail = (await api.request('GET', `${WF_BASE}/runs/${takenOver.run_id}?fields=full`, { token: 'lk_wf_all' })).body;
    expect(detail.status).toBe('completed');
    expect(detail.steps[takenOver.idx].attempt).toBe(takenOver.attempt + 1);
    expect(detail.output).toBe('ok');

    b.proc.kill('SIGTERM');
    expect((await b.proc.exited).code).toBe(0);
  }, 150_000);
});
