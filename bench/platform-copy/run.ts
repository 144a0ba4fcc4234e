/**
 * What the platform copy costs Postgres (`npm run bench:platform-copy`): RECORDS synthetic records
 * (the e2e data set's generator) written through the worker's path (the logs repository's insertCopies, in
 * flushes of FLUSH records), each way in turn on a fresh database of the server at
 * BENCH_POSTGRES_URL: the statement path (json_to_recordset) and COPY, each with the key and
 * indexes of before migration 018 and of after it. Figures: the CPU of the connection's backend
 * (/proc, so the server must run on this machine) and of the whole server (its postmaster's
 * processes: WAL writer, checkpointer, autovacuum), per 100,000 records, and the worker's CPU
 * building the rows. Point BENCH_POSTGRES_URL at a server nothing else uses for clean figures.
 * The `binary` variants write the COPY rows in COPY's binary format instead (binary-rows.ts).
 */

import pg from 'pg';
import { syntheticRecords } from '../../src/devtools/synthetic.js';
import { decodeRecord } from '../../src/model/record.js';
import { dayOf } from '../../src/model/time.js';
import { openStore } from '../../src/store/store.js';
import { copyRow, packRows, type LogCopy } from '../../src/modules/logs/repository.js';
import { asciiRecord, BINARY_COPY_SQL, BINARY_HEADER, BINARY_TRAILER, binaryRow, packBinary } from './binary-rows.js';
import { postgresCpuSeconds } from '../e2e/harness.js';
import { manyAgentOrgs, ORGS } from '../e2e/harness.js';
import { statFields, CLK_TCK } from '../e2e/proc-stat.js';

const RECORDS = Number(process.env.RECORDS ?? 100_000);
const FLUSH = Number(process.env.FLUSH ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** AGENTS_PER_ORG=2500: the records spread over that many agents of each organization (the e2e's 10,000-agent set), not the harness's two. */
const AGENTS_PER_ORG = process.env.AGENTS_PER_ORG ? Number(process.env.AGENTS_PER_ORG) : undefined;
const orgs = AGENTS_PER_ORG === undefined ? ORGS : manyAgentOrgs(AGENTS_PER_ORG);
const raws = [...syntheticRecords(RECORDS, { orgs, idPrefix: 'pc', seed: 2026 })].map((r) => Buffer.from(JSON.stringify(r)));
const cpuOf = (pid: number) => {
  const f = statFields(`/proc/${pid}/stat`);
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
};

/** The key and indexes as they were before migration 018. */
const BEFORE_018 = `
alter table agent_logs drop constraint agent_logs_pkey;
alter table agent_logs add primary key (ts, org_id, id);
create index agent_logs_org on agent_logs (org_id, ts desc, id desc);`;

/**
 * For comparison only: the statement path's insert without `on conflict do nothing` (which a
 * re-read record would fail), to tell what the conflict check costs from what reading JSON costs.
 */
const NO_CONFLICT = `insert into agent_logs (ts, id, org_id, agent_id, agent_name, agent_version, environment, source, event, severity,
    execution_id, message, trace_id, span_id, attributes)
  select date_trunc('milliseconds', r."timestamp"), r.id, r."orgId", r."agentId", r."agentName", r."agentVersion",
    r.environment, r.source, r.event, r.severity, r."executionId", r.message, r."traceId", r."spanId", r.attributes
  from json_to_recordset($1::text::json) as r(id text, "orgId" text, "agentId" text, "agentName" text, "agentVersion" text,
    environment text, source text, event text, severity text, "timestamp" timestamptz, "executionId" text,
    message text, "traceId" text, "spanId" text, attributes jsonb)`;

/**
 * Changes to the schema that the COPY variants below measure (comparison only: each takes away
 * something a read needs, or the database's collation), to tell what each part of the row costs.
 */
interface SchemaChange {
  /** SQL run after the migrations. */
  alter?: string;
  /** The new database's collation (from template0). */
  collate?: string;
}

async function once(name: string, schema: 'before-018' | 'after-018', useCopy: boolean, noConflict = false, change: SchemaChange = {}, binary = false) {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const db = `logdrain_pc_${Date.now().toString(36)}`;
  await admin.query(`create database ${db}${change.collate ? ` template template0 lc_collate '${change.collate}'` : ''}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${db}`;
  const store = await openStore({ databaseUrl: url.toString(), maxConnections: 1 });
  try {
    if (schema === 'before-018') await store.sql.exec(BEFORE_018);
    if (change.alter) await store.sql.exec(change.alter);
    const pid = (await store.sql.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]!.pid;
    const postmaster = Number(statFields(`/proc/${pid}/stat`)[1]);
    await store.logs.maintain(7);
    await store.sql.exec('checkpoint');
    // The worker's side: decode (as the pipeline does), and the COPY rows when COPY is used.
    // Not counted: decodeRecord could say it for nothing (a text without escapes as long as its bytes).
    const ascii = binary ? raws.map((raw) => asciiRecord(raw, true)) : [];
    const t0 = process.cpuUsage();
    const rows: (string | undefined)[] = [];
    const copies: LogCopy[] = raws.map((raw, i) => {
      const d = decodeRecord(raw);
      if (!d.ok) throw new Error(d.reason);
      if (useCopy) rows.push(binary ? binaryRow(d.record, d.timeMs, d.plain === true && ascii[i]!) : copyRow(d.record, d.timeMs, d.plain));
      return { json: d.json!, day: dayOf(d.timeMs) };
    });
    (binary ? packBinary(rows) : packRows(rows)).forEach((row, i) => (copies[i]!.row = row));
    const workerCpu = process.cpuUsage(t0);
    const backendAt = cpuOf(pid);
    const serverAt = postgresCpuSeconds(postmaster);
    let stored = 0;
    for (let i = 0; i < copies.length; i += FLUSH) {
      const run = copies.slice(i, i + FLUSH);
      // The binary rows are written as insertCopies writes text rows (the window and partitions are
      // ready), one header and trailer a COPY.
      if (binary) stored += await store.sql.copyIn!(BINARY_COPY_SQL, [BINARY_HEADER, ...run.map((c) => c.row!), BINARY_TRAILER]);
      else if (!noConflict) stored += (await store.logs.insertCopies(run, 7)).stored;
      else {
        await store.sql.query(NO_CONFLICT, [`[${run.map((c) => c.json.toString()).join(',')}]`]);
        stored += run.length;
      }
    }
    await store.sql.exec('checkpoint');
    const backend = cpuOf(pid) - backendAt;
    const server = postgresCpuSeconds(postmaster) - serverAt;
    if (stored !== RECORDS) throw new Error(`${name}: stored ${stored} of ${RECORDS}`);
    const per = (s: number) => (s / RECORDS) * 100_000;
    const size = await store.sql.query<{ b: number }>(`select sum(pg_total_relation_size(c.oid))::bigint as b from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where p.relname = 'agent_logs'`);
    return { name, backendCpuPer100k: per(backend), serverCpuPer100k: per(server), workerRowsCpuPer100k: per((workerCpu.user + workerCpu.system) / 1e6), storedMB: Number(size[0]!.b) / 1e6 };
  } finally {
    await store.close();
    await admin.query(`drop database if exists ${db} with (force)`);
    await admin.end();
  }
}

/** What each index and the attributes' type cost COPY (comparison only; VARIANTS names them). */
const COPY_PARTS: Record<string, [string, SchemaChange]> = {
  'copy-c': ['COPY, database collation C', { collate: 'C' }],
  'copy-json': ['COPY, attributes json, no skill index', { alter: 'drop index agent_logs_skill; alter table agent_logs alter column attributes type json' }],
  'copy-no-skill': ['COPY, no skill index', { alter: 'drop index agent_logs_skill' }],
  'copy-no-agent': ['COPY, no agent index', { alter: 'drop index agent_logs_agent' }],
  'copy-key-only': ['COPY, the key alone', { alter: 'drop index agent_logs_agent; drop index agent_logs_skill' }],
};

/**
 * VARIANTS=before-018,insert,no-conflict,copy: the ways to run (these four by default); `binary`
 * is `copy` with rows in COPY's binary format; the names of COPY_PARTS add those, and each of
 * them prefixed `binary-` the same in binary.
 */
const VARIANTS = (process.env.VARIANTS ?? 'before-018,insert,no-conflict,copy').split(',');
const out = [];
for (let r = 0; r < ROUNDS; r++) {
  if (VARIANTS.includes('before-018')) out.push(await once(`insert, key (ts, org_id, id) + agent_logs_org`, 'before-018', false));
  if (VARIANTS.includes('insert')) out.push(await once(`insert, key (org_id, ts, id)`, 'after-018', false));
  if (VARIANTS.includes('no-conflict')) out.push(await once(`insert without on conflict, key (org_id, ts, id)`, 'after-018', false, true));
  if (VARIANTS.includes('copy')) out.push(await once(`COPY, key (org_id, ts, id)`, 'after-018', true));
  if (VARIANTS.includes('binary')) out.push(await once(`COPY binary, key (org_id, ts, id)`, 'after-018', true, false, {}, true));
  for (const [variant, [name, change]] of Object.entries(COPY_PARTS)) {
    if (VARIANTS.includes(variant)) out.push(await once(name, 'after-018', true, false, change));
    if (VARIANTS.includes(`binary-${variant}`)) out.push(await once(`${name}, binary`, 'after-018', true, false, change, true));
  }
}
console.table(out.map((o) => ({ ...o, backendCpuPer100k: o.backendCpuPer100k.toFixed(2), serverCpuPer100k: o.serverCpuPer100k.toFixed(2), workerRowsCpuPer100k: o.workerRowsCpuPer100k.toFixed(2), storedMB: o.storedMB.toFixed(1) })));
