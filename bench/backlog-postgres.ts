/**
 * Postgres's CPU per parked record, and the worker's own beside it, by phase of a spill: parked (BacklogRepo.park, 5,000 rows a
 * call as a spilling worker's flush gives them), read back bucket by bucket in reads of about 2,000
 * records (roundRead, as a round does) and removed (remove). The CPU is the server backend's own, read
 * from /proc; the worker's (this process's CPU while it waits on the statements: building their
 * parameters, parsing their rows) is measured apart, the probe's reads of /proc included in neither. Needs the machine's Postgres (TEST_POSTGRES_URL,
 * default postgres://postgres@127.0.0.1:5432/test) on this host; makes and drops its own database.
 *   npm run bench:backlog            (N=100000 records of 10,000 agents by default)
 */
import pg from 'pg';
import { openStore } from '../src/store/store.js';
import type { ParkedRecord, RoundCursor } from '../src/modules/drains/tables/backlog.js';
import { bucketOf } from '../src/modules/drains/tables/backlog-pages.js';
import { createTestDatabase } from '../test/helpers/postgres.js';
import { statCpuSeconds } from './e2e/proc-stat.js';

const N = Number(process.env.N ?? 100_000);
const AGENTS = 10_000;
const PARK_CALL = Number(process.env.PARK_CALL ?? 5_000);
const PAGE = 2_000;
const DRAIN = 'drn_01JBENCHBACKLOG000000000A1';

const db = await createTestDatabase();
// One connection: the store's work is one backend's.
const store = await openStore({ databaseUrl: db.url, maxConnections: 1 });
const probe = new pg.Client({ connectionString: db.url });
await probe.connect();

/** CPU seconds of the store's backend (every backend of the database but the probe's own). */
async function backendCpu(): Promise<number> {
  const { rows } = await probe.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
  return rows.reduce((s, { pid }) => s + statCpuSeconds(`/proc/${pid}/stat`), 0);
}

const message = 'lorem ipsum dolor '.repeat(22);
const resources = Array.from({ length: AGENTS }, (_, i) => JSON.stringify({
  'service.name': 'agent-runtime', 'org.id': 'org_bench', 'agent.id': `agt_${String(i).padStart(8, '0')}`, 'agent.name': `Agent ${i}`,
  'agent.version': '1.2.3', 'deployment.environment': 'production', 'cloud.region': 'eu-west-1',
}));
const buckets = resources.map(bucketOf);
const rows: ParkedRecord[] = Array.from({ length: N }, (_, i) => {
  const id = `rec_${String(i).padStart(10, '0')}`;
  const record = { id, timestamp: new Date().toISOString(), severity: 'info', source: 'runtime', event: 'step', message, executionId: 'exe_1', attributes: { model: 'm', tokens: i } };
  return { drainId: DRAIN, orgId: 'org_bench', resourceJson: resources[i % AGENTS]!, bucket: buckets[i % AGENTS]!, recordJson: JSON.stringify(record), recordId: id, bytes: 600, scrubHits: 0 };
});

// Warm the connection and the statements.
await store.backlog.park(rows.slice(0, 10));
await store.backlog.remove((await store.backlog.roundRead(DRAIN, Number.MAX_SAFE_INTEGER, undefined, 100)).rows.map((r) => r.id));

/** This process's CPU seconds. */
const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const parkStart = await backendCpu();
const parkOwn = ownCpu();
for (let i = 0; i < N; i += PARK_CALL) await store.backlog.park(rows.slice(i, i + PARK_CALL));
const parkWorker = ownCpu() - parkOwn;
const parkCpu = (await backendCpu()) - parkStart;

const upTo = (await store.backlog.lastId(DRAIN))!;
let readCpu = 0;
let removeCpu = 0;
let readWorker = 0;
let removeWorker = 0;
let read = 0;
for (let after: RoundCursor | undefined; ;) {
  const a = await backendCpu();
  const aOwn = ownCpu();
  const { rows: page, next } = await store.backlog.roundRead(DRAIN, upTo, after, PAGE);
  const bOwn = ownCpu();
  readWorker += bOwn - aOwn;
  const b = await backendCpu();
  readCpu += b - a;
  read += page.length;
  const cOwn = ownCpu();
  await store.backlog.remove(page.map((r) => r.id));
  removeWorker += ownCpu() - cOwn;
  removeCpu += (await backendCpu()) - b;
  if (next === undefined) break;
  after = next;
}

const us = (s: number) => Math.round((s / N) * 1e7) / 10;
console.log(JSON.stringify({ records: N, readBack: read, backendCpuUsPerRecord: { park: us(parkCpu), read: us(readCpu), remove: us(removeCpu) },
  workerCpuUsPerRecord: { park: us(parkWorker), read: us(readWorker), remove: us(removeWorker) } }));
await probe.end();
await store.close();
await db.drop();
