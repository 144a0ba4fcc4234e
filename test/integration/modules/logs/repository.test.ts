/** The platform copy of records (modules/logs/repository.ts) on PGlite and on Postgres. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../../helpers/stores.js';
import { record } from '../../../helpers/records.js';
import type { Store } from '../../../../src/store/store.js';
import { copyRow, createLogsRepo, packRows, type LogQuery } from '../../../../src/modules/logs/repository.js';
import type { QueryOptions, Sql } from '../../../../src/store/sql.js';
import { migrate } from '../../../../src/store/migrate.js';
import type { AgentRecord } from '../../../../src/model/record.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-20T12:00:00.000Z');
const at = (msBeforeNow: number) => new Date(NOW - msBeforeNow).toISOString();

describe.each(STORE_KINDS)('logs repo on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  // Each test uses its own organization, so they do not see each other's rows.
  let orgN = 0;
  const org = () => `org_logs_${++orgN}`;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
  });
  afterAll(async () => dispose?.());

  const ids = async (q: LogQuery, limit = 1000) => (await store.logs.page(q, limit)).map((r) => r.id);

  it('stores records once and reads them newest first, ties broken by id, every field kept', async () => {
    const o = org();
    const full = record({
      id: 'b', orgId: o, timestamp: at(1000), agentVersion: '7', traceId: 'a'.repeat(32), spanId: 'b'.repeat(16),
      attributes: { tool: 'search', n: 3, ok: true }, severity: 'warn', source: 'skill', event: 'done',
    });
    const recs = [record({ id: 'a', orgId: o, timestamp: at(1000) }), full, record({ id: 'c', orgId: o, timestamp: at(5000) }), record({ id: 'd', orgId: o, timestamp: at(0) })];
    expect(await store.logs.insert(recs, 7, NOW)).toBe(0);
    expect(await store.logs.insert(recs, 7, NOW)).toBe(0); // a re-read after a crash
    expect(await ids({ orgId: o })).toEqual(['d', 'b', 'a', 'c']);
    const [row] = await store.logs.page({ orgId: o, source: 'skill' }, 10);
    expect(row).toMatchObject({
      id: 'b', orgId: o, agentId: full.agentId, agentName: full.agentName, agentVersion: '7', environment: 'production',
      source: 'skill', event: 'done', severity: 'warn', executionId: full.executionId, message: full.message,
      traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), attributes: { tool: 'search', n: 3, ok: true },
    });
    expect(row!.ts.toISOString()).toBe(full.timestamp);
  });

  it('stores copies handed over as the consumed bytes and as text alike, multi-byte characters intact', async () => {
    const o = org();
    const asBytes = record({ id: 'u1', orgId: o, timestamp: at(2000), message: 'grüße ✓ 日本 🚀', attributes: { note: 'naïve' } });
    const asText = record({ id: 'u2', orgId: o, timestamp: at(1000), message: 'plain' });
    const outside = record({ id: 'u3', orgId: o, timestamp: at(30 * DAY) });
    const copies = [asBytes, asText, outside].map((r, i) => ({ json: i === 1 ? JSON.stringify(r) : Buffer.from(JSON.stringify(r)), day: Math.floor(Date.parse(r.timestamp) / DAY) }));
    expect(await store.logs.insertCopies(copies, 7, NOW)).toEqual({ stored: 2, outside: 1 });
    const rows = await store.logs.page({ orgId: o }, 10);
    expect(rows.map((r) => [r.id, r.message])).toEqual([['u2', 'plain'], ['u1', 'grüße ✓ 日本 🚀']]);
    expect(rows[1]!.attributes).toEqual({ note: 'naïve' });
  });

  it("stores text holding COPY's special characters, and absent fields, as they came; re-written copies once", async () => {
    const o = org();
    const special = record({
      id: 'x\\1', orgId: o, timestamp: at(3000), agentVersion: 'v\t2', message: 'tab\there\nnew line\r\\N and \\ back\\slash \\t',
      attributes: { 'k\\ey': 'a\tb\nc\\d', quote: '"q"', n: 1.5, big: 12345678901234, ok: false },
    });
    const bare = record({ id: 'x2', orgId: o, timestamp: at(2000) });
    delete bare.message;
    delete bare.agentVersion;
    delete bare.attributes;
    delete bare.traceId;
    delete bare.spanId;
    expect(await store.logs.insert([special, bare], 7, NOW)).toBe(0);
    const rows = await store.logs.page({ orgId: o }, 10);
    expect(rows.map((r) => r.id)).toEqual(['x2', 'x\\1']);
    expect(rows[1]).toMatchObject({ agentVersion: 'v\t2', message: special.message, attributes: special.attributes });
    expect(rows[0]).toMatchObject({ agentVersion: null, message: null, attributes: null, traceId: null, spanId: null });
    expect(rows[0]!.ts.toISOString()).toBe(bare.timestamp);
    // Written again, alone and beside a new one: each stored once, the count the new ones.
    const copies = (rs: AgentRecord[]) => {
      const rows = packRows(rs.map((r) => (store.logs.takesRows ? copyRow(r, Date.parse(r.timestamp)) : undefined)));
      return rs.map((r, i) => ({ json: JSON.stringify(r), day: Math.floor(Date.parse(r.timestamp) / DAY), row: rows[i] }));
    };
    expect(await store.logs.insertCopies(copies([special, bare]), 7, NOW)).toEqual({ stored: 0, outside: 0 });
    const fresh = record({ id: 'x3', orgId: o, timestamp: at(1000) });
    expect(await store.logs.insertCopies(copies([bare, fresh, fresh]), 7, NOW)).toEqual({ stored: 1, outside: 0 });
    expect(await ids({ orgId: o })).toEqual(['x3', 'x2', 'x\\1']);
  });

  it('stores a flush of many rows, past one COPY message, and a row longer than a message alone, each field intact', async () => {
    const o = org();
    // About 300 KB of rows: several CopyData messages; one row of 100,000 multi-byte characters on its own.
    const many = Array.from({ length: 600 }, (_, i) => record({ id: `m${String(i).padStart(4, '0')}`, orgId: o, timestamp: at(i), message: `line ${i} ${'x'.repeat(400)}`, attributes: { i } }));
    const long = record({ id: 'm-long', orgId: o, timestamp: at(700), message: 'ü✓'.repeat(50_000), attributes: { tab: 'a\tb' } });
    const special = record({ id: 'm-special', orgId: o, timestamp: at(701), message: 'back\\slash\nnew\rline\tend' });
    const all = [...many, long, special];
    const packed = packRows(all.map((r) => (store.logs.takesRows ? copyRow(r, Date.parse(r.timestamp), !JSON.stringify(r).includes('\\')) : undefined)));
    const copies = all.map((r, i) => ({ json: Buffer.from(JSON.stringify(r)), day: Math.floor(Date.parse(r.timestamp) / DAY), row: packed[i] }));
    // Written by COPY alone on Postgres: a refused COPY would go the statement path and hide it.
    let statements = 0;
    const spy: Sql = Object.assign(Object.create(store.sql) as Sql, {
      query: <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => {
        if (/insert into agent_logs/.test(text)) statements++;
        return store.sql.query<T>(text, params, options);
      },
    });
    expect(await createLogsRepo(spy).insertCopies(copies, 7, NOW)).toEqual({ stored: 602, outside: 0 });
    expect(statements > 0).toBe(!store.logs.takesRows);
    const rows = await store.logs.page({ orgId: o }, 1000);
    expect(rows).toHaveLength(602);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const r of many) expect(byId.get(r.id)).toMatchObject({ message: r.message, attributes: r.attributes });
    expect(byId.get('m-long')).toMatchObject({ message: long.message, attributes: { tab: 'a\tb' } });
    expect(byId.get('m-special')!.message).toBe(special.message);
  });

  it('makes the same row from a record known to hold no escaped character as from one searched field by field', () => {
    const r = record({ id: 'p1', orgId: 'o', timestamp: at(0), agentVersion: '3', message: 'plain text, "quoted" ü', attributes: { a: 'b', n: 2 } });
    expect(copyRow(r, Date.parse(r.timestamp), true)).toBe(copyRow(r, Date.parse(r.timestamp), false));
    const bare: AgentRecord = { ...r };
    delete bare.agentVersion;
    delete bare.message;
    delete bare.attributes;
    expect(copyRow(bare, Date.parse(r.timestamp), true)).toBe(copyRow(bare, Date.parse(r.timestamp), false));
  });

  it('writes the copies with COPY on Postgres (the statement path on PGlite, and for a record COPY could not say)', async () => {
    const o = org();
    const calls: string[] = [];
    const spy: Sql = Object.assign(Object.create(store.sql) as Sql, {
      query: <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => {
        if (/insert into agent_logs/.test(text)) calls.push('insert');
        return store.sql.query<T>(text, params, options);
      },
      ...(store.sql.copyIn ? { copyIn: (text: string, rows: readonly Buffer[]) => (calls.push(`copy ${rows.length}`), store.sql.copyIn!(text, rows)) } : {}),
    });
    const repo = createLogsRepo(spy);
    expect(repo.takesRows).toBe(kind.name === 'postgres');
    await repo.insert([record({ id: 'c1', orgId: o, timestamp: at(2000) }), record({ id: 'c2', orgId: o, timestamp: at(1000) })], 7, NOW);
    expect(calls).toEqual(kind.name === 'postgres' ? ['copy 2'] : ['insert']);
    // A number JSON.parse made infinite has no row: its run goes the statement path, which reads the JSON as it came.
    const huge = record({ id: 'c3', orgId: o, timestamp: at(500) });
    expect(copyRow({ ...huge, attributes: { n: Infinity } }, Date.parse(huge.timestamp))).toBeUndefined();
    calls.length = 0;
    const json = JSON.stringify({ ...huge, attributes: { n: 1 } }).replace('"n":1', '"n":1e400');
    expect(await repo.insertCopies([{ json, day: Math.floor(Date.parse(huge.timestamp) / DAY), row: undefined }], 7, NOW)).toEqual({ stored: 1, outside: 0 });
    expect(calls).toEqual(['insert']);
    expect(await ids({ orgId: o })).toEqual(['c3', 'c2', 'c1']);
  });

  it('keeps times to the millisecond so a keyset continuation never skips a row', async () => {
    const o = org();
    await store.logs.insert([
      record({ id: 'x1', orgId: o, timestamp: '2026-11-20T11:00:00.123900Z' }),
      record({ id: 'x2', orgId: o, timestamp: '2026-11-20T11:00:00.123200+00:00' }),
      record({ id: 'x3', orgId: o, timestamp: '2026-11-20T12:00:00.123456+01:00' }),
    ], 7, NOW);
    const first = await store.logs.page({ orgId: o }, 1);
    expect(first.map((r) => r.ts.toISOString())).toEqual(['2026-11-20T11:00:00.123Z']);
    const rest = await store.logs.page({ orgId: o }, 10, { after: { at: first[0]!.ts, id: first[0]!.id } });
    expect([first[0]!.id, ...rest.map((r) => r.id)]).toEqual(['x3', 'x2', 'x1']);
  });

  it("reads a replay's window a page at a time in (ts, id) order: records sharing a time across a page's end each read once", async () => {
    const o = org();
    // Three times, seven records at each (two id families at one time, as a copy beside its
    // records stored again): pages of three end inside each group of one time.
    const times = [at(3000), at(2000), at(1000)];
    const named = (t: number) => ['e1', 'e2', 'e3', 'e4', 'r1', 'r2', 'r3'].map((x) => `${x}t${t}`);
    const recs = times.flatMap((timestamp, t) => named(t).map((id) => record({ id, orgId: o, timestamp })));
    await store.logs.insert([...recs].reverse(), 7, NOW);
    await store.logs.insert([record({ id: 'later', orgId: o, timestamp: at(0) }), record({ id: 'x0t0', orgId: 'org_elsewhere', timestamp: times[0] })], 7, NOW);
    const since = new Date(times[0]!);
    const until = new Date(times[2]!);

    const read: string[] = [];
    let position: { ts: string; id: string } | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const page = await store.logs.replayPage(o, since, until, position, 3);
      if (page.length === 0) break;
      read.push(...page.map((r) => r.id));
      const last = page[page.length - 1]!;
      position = { ts: last.tsText, id: last.id };
      if (pages === 1) {
        // Stored while the replay reads: behind its position (not read), and ahead of it at the last time (read).
        await store.logs.insert([record({ id: 'e0t0', orgId: o, timestamp: times[0] }), record({ id: 'e0t2', orgId: o, timestamp: times[2] })], 7, NOW);
      }
    }
    expect(read).toEqual([...named(0), ...named(1), 'e0t2', ...named(2)]);
    expect(new Set(read).size).toBe(read.length);
  });

  it('filters by agent, hidden agents, source, environment and inclusive time bounds', async () => {
    const o = org();
    await store.logs.insert([
      record({ id: 'f1', orgId: o, agentId: 'a1', source: 'mcp', environment: 'production', timestamp: at(3000) }),
      record({ id: 'f2', orgId: o, agentId: 'a2', source: 'skill', environment: 'sandbox', timestamp: at(2000) }),
      record({ id: 'f3', orgId: o, agentId: 'a1', source: 'skill', environment: 'production', timestamp: at(1000) }),
      record({ id: 'f4', orgId: 'org_elsewhere', agentId: 'a1', timestamp: at(1000) }),
    ], 7, NOW);
    expect(await ids({ orgId: o, agentId: 'a1' })).toEqual(['f3', 'f1']);
    expect(await ids({ orgId: o, hiddenAgents: ['a1'] })).toEqual(['f2']);
    expect(await ids({ orgId: o, source: 'skill' })).toEqual(['f3', 'f2']);
    expect(await ids({ orgId: o, environment: 'sandbox' })).toEqual(['f2']);
    expect(await ids({ orgId: o, since: new Date(at(2000)), until: new Date(at(1000)) })).toEqual(['f3', 'f2']);
    expect(await ids({ orgId: o, since: new Date(at(2000)), until: new Date(at(2000)) })).toEqual(['f2']);
    expect(await store.logs.countUpTo({ orgId: o }, 2)).toBe(3);
    expect(await store.logs.countUpTo({ orgId: o }, 5)).toBe(3);
  });

  it('pages by offset and by keyset to the same rows', async () => {
    const o = org();
    await store.logs.insert(Array.from({ length: 25 }, (_, i) => record({ id: `p${String(i).padStart(2, '0')}`, orgId: o, timestamp: at(i * 10) })), 7, NOW);
    const byOffset = await store.logs.page({ orgId: o }, 10, { offset: 10 });
    const first = await store.logs.page({ orgId: o }, 10);
    const last = first[9]!;
    const byKeyset = await store.logs.page({ orgId: o }, 10, { after: { at: last.ts, id: last.id } });
    expect(byKeyset.map((r) => r.id)).toEqual(byOffset.map((r) => r.id));
    expect(byOffset[0]!.id).toBe('p10');
  });

  it("selects one skill's records: source skill and attributes.skillId equal to the id, as a string", async () => {
    const o = org();
    const skill = (id: string, attributes: Record<string, string | number | boolean> | undefined, p: Partial<AgentRecord> = {}) =>
      record({ id, orgId: o, agentId: 'agt_s', source: 'skill', timestamp: at(Number(id.replace(/\D/g, '') || 0) * 1000 + 1000), ...(attributes ? { attributes } : {}), ...p });
    await store.logs.insert([
      skill('k1', { skillId: 'skl_a', step: 1 }), skill('k2', { skillId: 'skl_a' }, { environment: 'sandbox' }),
      skill('k3', { skillId: 'skl_b' }), skill('k4', { skillId: 'skl_a' }, { source: 'mcp' }), skill('k5', { skillId: 'skl_a' }, { agentId: 'agt_t' }),
      skill('k6', undefined), skill('k7', { skillId: 7 }), skill('k8', { skillId: '7' }), skill('k9', { skill: 'skl_a' }),
    ], 7, NOW);
    expect(await ids({ orgId: o, agentId: 'agt_s', skillId: 'skl_a' })).toEqual(['k1', 'k2']);
    expect(await ids({ orgId: o, agentId: 'agt_s', skillId: 'skl_a', environment: 'sandbox' })).toEqual(['k2']);
    expect(await ids({ orgId: o, agentId: 'agt_s', skillId: 'skl_a', source: 'mcp' })).toEqual([]);
    expect(await ids({ orgId: o, agentId: 'agt_s', skillId: '7' })).toEqual(['k8']);
    expect(await ids({ orgId: o, agentId: 'agt_t', skillId: 'skl_a' })).toEqual(['k5']);
    expect(await store.logs.countUpTo({ orgId: o, agentId: 'agt_s', skillId: 'skl_a' }, 10)).toBe(2);
  });

  it("reads a skill's records through agent_logs_skill, in the index's order (no sort), on every day partition", async () => {
    const o = org();
    // A busy agent: 1,800 records a minute apart over two days, one in a hundred a record of skl_a.
    const recs = Array.from({ length: 1800 }, (_, i) => record({
      id: `b${String(i).padStart(4, '0')}`, orgId: o, agentId: 'agt_busy', timestamp: at(i * 60_000),
      source: i % 100 === 0 ? 'skill' : i % 2 ? 'mcp' : 'execution', attributes: { skillId: i % 100 === 0 ? 'skl_a' : 'skl_b' },
    }));
    await store.logs.insert(recs, 7, NOW);
    await store.sql.exec('analyze agent_logs');
    // The statements the repository runs, explained as they ran.
    const ran: { text: string; params: readonly unknown[] }[] = [];
    const spy: Sql = Object.assign(Object.create(store.sql) as Sql, {
      query: <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => {
        ran.push({ text, params: params ?? [] });
        return store.sql.query<T>(text, params, options);
      },
    });
    const repo = createLogsRepo(spy);
    const q: LogQuery = { orgId: o, agentId: 'agt_busy', skillId: 'skl_a' };
    const first = await repo.page(q, 5);
    expect(first.map((r) => r.id)).toEqual(['b0000', 'b0100', 'b0200', 'b0300', 'b0400']);
    const last = first[4]!;
    expect((await repo.page(q, 100, { after: { at: last.ts, id: last.id } })).map((r) => r.id)).toEqual(Array.from({ length: 13 }, (_, i) => `b${String((i + 5) * 100).padStart(4, '0')}`));
    expect(await repo.countUpTo(q, 10_000)).toBe(18);
    const skillIndexes = new Set((await store.sql.query<{ n: string }>(
      `select c.relname as n from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where p.relname = 'agent_logs_skill'`,
    )).map((r) => r.n));
    expect(skillIndexes.size).toBeGreaterThan(0);
    expect(ran).toHaveLength(3);
    for (const { text, params } of ran) {
      // Whether the statement can use the index at all, not how the planner weighs a partition of a
      // few pages (a sequential read of one and a sort can cost less there than an index).
      const [row] = await store.sql.transaction(async (tx) => {
        await tx.exec('set local enable_seqscan = off');
        return tx.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${text}`, params);
      });
      const plan = row!['QUERY PLAN'];
      const nodes: { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string }[] = [];
      const walk = (n: Record<string, unknown>) => {
        nodes.push(n as (typeof nodes)[number]);
        for (const c of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(c);
      };
      walk((typeof plan === 'string' ? JSON.parse(plan) : plan as { Plan: Record<string, unknown> }[])[0]!.Plan);
      const scans = nodes.filter((n) => n['Relation Name']?.startsWith('agent_logs'));
      expect(scans.length, text).toBeGreaterThan(0);
      for (const n of scans) {
        expect(n['Node Type'], text).toMatch(/^Index (Only )?Scan$/);
        expect(skillIndexes.has(n['Index Name']!), `${n['Index Name']} in ${text}`).toBe(true);
      }
      expect(nodes.some((n) => n['Node Type'] === 'Sort'), text).toBe(false);
    }
  });

  it('builds agent_logs_skill on every day partition that exists when the store upgrades to it', async () => {
    const o = org();
    await store.logs.insert([record({ id: 'u1', orgId: o, source: 'skill', timestamp: at(DAY), attributes: { skillId: 'skl_u' } })], 7, NOW);
    // The store as the release before the index left it, with partitions and rows.
    await store.sql.exec("drop index agent_logs_skill; delete from schema_migrations where id = '015-agent-logs-skill-index'");
    expect(await migrate(store.sql)).toEqual(['015-agent-logs-skill-index']);
    const children = async (parent: string) => (await store.sql.query<{ n: string; t: string | null }>(
      `select c.relname as n, (select t.relname from pg_index x join pg_class t on t.oid = x.indrelid where x.indexrelid = c.oid) as t
       from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where p.relname = $1`, [parent],
    ));
    const partitions = (await children('agent_logs')).map((r) => r.n).sort();
    expect(partitions.length).toBeGreaterThan(1);
    expect((await children('agent_logs_skill')).map((r) => r.t).sort()).toEqual(partitions);
    expect(await ids({ orgId: o, agentId: 'agt_support', skillId: 'skl_u' })).toEqual(['u1']);
  });

  it('takes the key led by the organization, without agent_logs_org, on a store with partitions and rows', async () => {
    const o = org();
    const recs = [record({ id: 'k1', orgId: o, timestamp: at(DAY) }), record({ id: 'k2', orgId: o, timestamp: at(0) })];
    // The store as the release before 018 left it: key (ts, org_id, id) and agent_logs_org, with rows.
    await store.sql.exec(`alter table agent_logs drop constraint agent_logs_pkey;
      alter table agent_logs add primary key (ts, org_id, id);
      create index agent_logs_org on agent_logs (org_id, ts desc, id desc);
      delete from schema_migrations where id = '018-agent-logs-org-first-key'`);
    await store.logs.insert(recs, 7, NOW);
    expect(await migrate(store.sql)).toEqual(['018-agent-logs-org-first-key']);
    const [key] = await store.sql.query<{ def: string }>(
      "select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'agent_logs_pkey'",
    );
    expect(key!.def).toBe('PRIMARY KEY (org_id, ts, id)');
    // No index of the parent or of a partition holds what the key holds.
    const indexes = await store.sql.query<{ n: string }>(
      "select indexname as n from pg_indexes where tablename like 'agent_logs%' and indexdef like '%(org_id, ts DESC, id DESC)'",
    );
    expect(indexes).toEqual([]);
    // Every partition has the new key; the rows are there once and a re-write stores none.
    const partitionKeys = await store.sql.query<{ def: string }>(
      `select pg_get_constraintdef(k.oid) as def from pg_inherits i join pg_class p on p.oid = i.inhparent
       join pg_constraint k on k.conrelid = i.inhrelid and k.contype = 'p' where p.relname = 'agent_logs'`,
    );
    expect(partitionKeys.length).toBeGreaterThan(1);
    for (const k of partitionKeys) expect(k.def).toBe('PRIMARY KEY (org_id, ts, id)');
    expect(await store.logs.insert(recs, 7, NOW)).toBe(0);
    expect(await ids({ orgId: o })).toEqual(['k2', 'k1']);
  });

  it('keeps only the retention window and drops whole day partitions past it', async () => {
    const o = org();
    const old = record({ id: 'old', orgId: o, timestamp: at(9 * DAY) });
    const recent = record({ id: 'recent', orgId: o, timestamp: at(2 * DAY) });
    const tooOld = record({ id: 'ancient', orgId: o, timestamp: at(40 * DAY) });
    const farFuture = record({ id: 'future', orgId: o, timestamp: new Date(NOW + 5 * DAY).toISOString() });
    // With 30 days kept, the 9-day-old record is stored; the 40-day-old one and one 5 days ahead are not.
    expect(await store.logs.insert([old, recent, tooOld, farFuture], 30, NOW)).toBe(2);
    expect(await ids({ orgId: o })).toEqual(['recent', 'old']);
    // Retention shortened to 7 days: upkeep drops the old record's day.
    const { dropped } = await store.logs.maintain(7, NOW);
    expect(dropped).toContain(`agent_logs_${new Date(NOW - 9 * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`);
    expect(await ids({ orgId: o })).toEqual(['recent']);
    // Upkeep made today's and the next days' partitions, and is idempotent.
    expect((await store.logs.maintain(7, NOW)).dropped).toEqual([]);
    const parts = await store.sql.query<{ n: string }>(
      `select c.relname as n from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where p.relname = 'agent_logs'`,
    );
    const names = parts.map((p) => p.n);
    for (let d = 0; d <= 2; d++) expect(names).toContain(`agent_logs_${new Date(NOW + d * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`);
    // A record for a day whose partition was dropped is stored again once it is back in the window.
    expect(await store.logs.insert([record({ id: 'again', orgId: o, timestamp: at(6 * DAY) })], 7, NOW)).toBe(0);
    expect(await ids({ orgId: o })).toEqual(['recent', 'again']);
  });
});
