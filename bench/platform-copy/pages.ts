/**
 * What the platform copy costs Postgres (`npm run bench:platform-copy`), as pages (the logs
 * repository's insertCopies, modules/logs/pages.ts) against the former layout of a row a record
 * (row-layout.ts: COPY of text rows into a table with its key and two indexes): RECORDS synthetic
 * records (the e2e data set's generator) in flushes of FLUSH, each way in turn on a fresh database
 * of the server at BENCH_POSTGRES_URL, rounds alternating.
 *
 * Figures: the CPU of the connection's backend (/proc, so the server must run on this machine) and
 * of the whole server (its postmaster's processes), per 100,000 records; the backend's minor page
 * faults (memory it touched afresh: a count, steadier than CPU time); the worker's CPU decoding and
 * building what it sends; stored MB. VARIANTS=rows,pages (the default), and `pages-pglz`,
 * `pages-external`: the pages with their body compressed by Postgres's default (pglz) or not at all,
 * rather than lz4. AGENTS_PER_ORG=2500 for the 10,000-agent data set. Point BENCH_POSTGRES_URL at a
 * server nothing else uses for clean figures.
 */

import pg from 'pg';
import { syntheticRecords } from '../../src/devtools/synthetic.js';
import { decodeRecord } from '../../src/model/record.js';
import { dayOf } from '../../src/model/time.js';
import { openStore } from '../../src/store/store.js';
import { logCopyOf, type LogCopy } from '../../src/modules/logs/pages.js';
import { manyAgentOrgs, ORGS } from '../e2e/harness.js';
import { postgresCpu, postgresCpuBetween, statFields, CLK_TCK } from '../e2e/proc-stat.js';
import { copyRow, packRows, ROW_COPY_SQL, ROW_TABLE, rowPartition } from './row-layout.js';

const RECORDS = Number(process.env.RECORDS ?? 100_000);
const FLUSH = Number(process.env.FLUSH ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const AGENTS_PER_ORG = process.env.AGENTS_PER_ORG ? Number(process.env.AGENTS_PER_ORG) : undefined;
const orgs = AGENTS_PER_ORG === undefined ? ORGS : manyAgentOrgs(AGENTS_PER_ORG);
const raws = [...syntheticRecords(RECORDS, { orgs, idPrefix: 'pg', seed: 2026 })].map((r) => Buffer.from(JSON.stringify(r)));
const cpuOf = (pid: number) => {
  const f = statFields(`/proc/${pid}/stat`);
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
};
/** The backend's minor page faults so far: memory it touched for the first time (a count, steadier than CPU time). */
const faultsOf = (pid: number) => Number(statFields(`/proc/${pid}/stat`)[7]);

async function once(variant: string) {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const db = `logdrain_pc_${Date.now().toString(36)}`;
  await admin.query(`create database ${db}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${db}`;
  const store = await openStore({ databaseUrl: url.toString(), maxConnections: 1 });
  try {
    const pages = variant.startsWith('pages');
    const pid = (await store.sql.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]!.pid;
    const postmaster = Number(statFields(`/proc/${pid}/stat`)[1]);
    await store.logs.maintain(7);
    if (!pages) {
      await store.sql.exec(ROW_TABLE);
      const today = dayOf(Date.now());
      for (let d = today - 7; d <= today + 2; d++) await store.sql.exec(rowPartition(d));
    }
    if (variant !== 'pages') {
      const partitions = await store.sql.query<{ name: string }>("select relname as name from pg_class where relname ~ '^agent_log_pages_[0-9]{8}$'");
      for (const { name } of partitions) await store.sql.exec(`alter table ${name} alter column body set ${variant === 'pages-external' ? 'storage external' : 'compression pglz'}`);
    }
    await store.sql.exec('checkpoint');
    // The worker's side: decode as the pipeline does, and the COPY rows of the row layout.
    const t0 = process.cpuUsage();
    const rows: (string | undefined)[] = [];
    const copies: LogCopy[] = raws.map((raw) => {
      const d = decodeRecord(raw);
      if (!d.ok) throw new Error(d.reason);
      if (!pages) rows.push(copyRow(d.record, d.timeMs, d.plain));
      return logCopyOf(d.record, d.json!, d.timeMs);
    });
    const packed = pages ? [] : packRows(rows);
    const workerCpu = process.cpuUsage(t0);
    const backendAt = cpuOf(pid);
    const faultsAt = faultsOf(pid);
    const serverAt = postgresCpu(postmaster);
    let stored = 0;
    for (let i = 0; i < copies.length; i += FLUSH) {
      if (pages) stored += (await store.logs.insertCopies(copies.slice(i, i + FLUSH), 7)).stored;
      else stored += await store.sql.copyIn!(ROW_COPY_SQL, packed.slice(i, i + FLUSH) as Buffer[]);
    }
    await store.sql.exec('checkpoint');
    const backend = cpuOf(pid) - backendAt;
    const faults = faultsOf(pid) - faultsAt;
    const server = postgresCpuBetween(serverAt, postgresCpu(postmaster));
    if (stored !== RECORDS) throw new Error(`${variant}: stored ${stored} of ${RECORDS}`);
    const per = (s: number) => (s / RECORDS) * 100_000;
    const table = pages ? 'agent_log_pages' : 'agent_log_rows';
    const size = await store.sql.query<{ b: number }>(
      `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as b from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where p.relname = '${table}'`,
    );
    return { variant, backendCpuPer100k: per(backend), serverCpuPer100k: per(server), workerCpuPer100k: per((workerCpu.user + workerCpu.system) / 1e6), backendMinorFaultsPer100k: per(faults), storedMB: Number(size[0]!.b) / 1e6 };
  } finally {
    await store.close();
    await admin.query(`drop database if exists ${db} with (force)`);
    await admin.end();
  }
}

const VARIANTS = (process.env.VARIANTS ?? 'rows,pages').split(',');
const out = [];
for (let r = 0; r < ROUNDS; r++) for (const v of VARIANTS) out.push(await once(v));
console.table(out.map((o) => ({ ...o, backendMinorFaultsPer100k: Math.round(o.backendMinorFaultsPer100k), backendCpuPer100k: o.backendCpuPer100k.toFixed(2), serverCpuPer100k: o.serverCpuPer100k.toFixed(2), workerCpuPer100k: o.workerCpuPer100k.toFixed(2), storedMB: o.storedMB.toFixed(1) })));
