/** The command line as an operator runs it: real child processes against a real Postgres database. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnLogdrain } from '../../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { SEED_FIXTURE } from '../../helpers/app.js';
import { openStore } from '../../../src/store/store.js';
import { hashToken } from '../../../src/security/token-hash.js';

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
    writeFileSync(file, JSON.stringify({ orgs: [{ id: '', name: 'x', plan: 'gold' }], agents: [{ id: 'a', orgId: 'nowhere', name: 'n' }] }));
    const r = await runCli(['seed', file], { DATABASE_URL: db.url });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('orgs[0].id must be a non-empty string');
    expect(r.stderr).toContain('orgs[0].plan must be one of standard, enterprise');
    expect(r.stderr).toContain('agents[0].orgId names no org of this file');
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
});
