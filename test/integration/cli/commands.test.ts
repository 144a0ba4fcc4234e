/** The command line as an operator runs it: real child processes against a real Postgres database. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { spawnLogdrain } from '../../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { SEED_FIXTURE } from '../../helpers/app.js';
import { openStore } from '../../../src/store/store.js';
import { hashToken } from '../../../src/security/token-hash.js';
import { startMockBroker } from '../../helpers/broker.js';

async function runCli(args: string[], env: Record<string, string>) {
  const p = spawnLogdrain(args, env);
  const { code } = await p.exited;
  return { code, stderr: p.stderr.join('\n') };
}

describe('logdrain CLI', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('migrates, then seeds a file idempotently into Postgres', async () => {
    expect((await runCli(['migrate'], { DATABASE_URL: db.url })).code).toBe(0);
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['seed', SEED_FIXTURE], { DATABASE_URL: db.url });
      expect(r.code, r.stderr).toBe(0);
    }
    const store = await openStore({ databaseUrl: db.url, maxConnections: 2 });
    try {
      const orgs = await store.sql.query<{ n: number }>('select count(*)::int as n from orgs');
      expect(orgs[0]!.n).toBe(2);
      expect(await store.auth.findKey(hashToken('lk_acme_manage'))).toMatchObject({ orgId: 'org_acme' });
    } finally {
      await store.close();
    }
  });

  it('refuses a bad seed file with every problem listed and exit code 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logdrain-seed-'));
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({
      orgs: [{ id: '', name: 'x', plan: 'gold' }], agents: [{ id: 'a', orgId: 'nowhere', name: 'n' }],
      users: [{ id: 'u', email: 'u@x.test', memberships: [{ orgId: '', role: 'owner' }] }],
    }));
    const r = await runCli(['seed', file], { DATABASE_URL: db.url });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('orgs[0].id must be a non-empty string');
    expect(r.stderr).toContain('orgs[0].plan must be one of standard, enterprise');
    expect(r.stderr).toContain('agents[0].orgId names no org of this file');
    expect(r.stderr).toContain('users[0].memberships[0].role must be one of admin, member');
  });

  it('refuses bad configuration and a worker without Kafka clearly', async () => {
    const bad = await runCli(['start'], { PORT: 'eighty', DATA_DIR: 'memory://' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('PORT must be an integer');
    const worker = await runCli(['worker'], { DATABASE_URL: db.url });
    expect(worker.code).toBe(1);
    expect(worker.stderr).toContain('needs KAFKA_BROKERS and DATABASE_URL');
  });

  it('starts on embedded defaults with no Kafka and no Postgres, and stops with exit 0 on SIGTERM', async () => {
    const p = spawnLogdrain(['start'], { DATA_DIR: 'memory://', PORT: '0', HOST: '127.0.0.1' });
    const started = await p.waitForEvent('process.started');
    const port = started.port as number;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain('logdrain_records_consumed_total');
    p.kill('SIGTERM');
    expect((await p.exited).code).toBe(0);
  });

  it('honours a SIGTERM that arrives while it is still starting: it finishes starting, stops, exits 0', async () => {
    const p = spawnLogdrain(['start'], { DATA_DIR: 'memory://', PORT: '0', HOST: '127.0.0.1' });
    await p.waitForEvent('process.starting');
    p.kill('SIGTERM');
    const { code, signal } = await p.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(p.lines.find((l) => l.event === 'process.stopping')).toMatchObject({ signal: 'SIGTERM', starting: true });
  });

  it('exits 1 at the deadline when a signal arrives during a start that never completes', async () => {
    // A "database" that accepts connections and never answers: the store never opens.
    const sockets = new Set<Socket>();
    const blackhole = createServer((s) => void sockets.add(s));
    await new Promise<void>((r) => blackhole.listen(0, '127.0.0.1', r));
    try {
      const port = (blackhole.address() as AddressInfo).port;
      const p = spawnLogdrain(['serve'], { DATABASE_URL: `postgres://x@127.0.0.1:${port}/x`, PORT: '0', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: '1000' });
      await p.waitForEvent('process.starting');
      p.kill('SIGTERM');
      expect(await p.exited).toEqual({ code: 1, signal: null });
      expect(p.lines.find((l) => l.event === 'process.stop_timeout')).toMatchObject({ starting: true });
      expect(p.lines.some((l) => l.event === 'process.started')).toBe(false);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => blackhole.close(r));
    }
  });

  it('answers /healthz and /readyz on a worker\'s METRICS_PORT, and stops with exit 0 on SIGINT', async () => {
    const broker = await startMockBroker({ topics: [{ name: 'ready-topic', partitions: 1 }] });
    try {
      const p = spawnLogdrain(['worker'], {
        DATABASE_URL: db.url, KAFKA_BROKERS: broker.bootstrap, KAFKA_TOPIC: 'ready-topic', KAFKA_GROUP_ID: 'ready-group',
        METRICS_PORT: '0', HOST: '127.0.0.1', KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_HEARTBEAT_INTERVAL_MS: '500',
      });
      const port = (await p.waitForEvent('process.started')).port as number;
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      await p.waitForEvent('kafka.joined');
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready' });
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain('logdrain_records_in_flight{role="worker"} 0');
      p.kill('SIGINT');
      expect((await p.exited).code).toBe(0);
    } finally {
      await broker.stop();
    }
  });
});
