/** The platform copy of records as pages (modules/logs/repository.ts, pages.ts) on PGlite and on Postgres. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../../helpers/stores.js';
import { record } from '../../../helpers/records.js';
import type { Store } from '../../../../src/store/store.js';
import { createLogsRepo, PageLines, type LogQuery, type LogRow } from '../../../../src/modules/logs/repository.js';
import { logCopyOf, PAGE_RECORDS } from '../../../../src/modules/logs/pages.js';
import * as m004 from '../../../../src/store/migrations/004-agent-logs.js';
import * as m015 from '../../../../src/store/migrations/015-agent-logs-skill-index.js';
import * as m018 from '../../../../src/store/migrations/018-agent-logs-org-first-key.js';
import type { QueryOptions, Sql } from '../../../../src/store/sql.js';
import { migrate } from '../../../../src/store/migrate.js';
import type { AgentRecord } from '../../../../src/model/record.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-20T12:00:00.000Z');
const at = (msBeforeNow: number) => new Date(NOW - msBeforeNow).toISOString();
/** The copy the worker hands over: the record's JSON (bytes or text), its time and keys. */
const copyOf = (r: AgentRecord, json: string | Buffer = JSON.stringify(r)) => logCopyOf(r, json, Date.parse(r.timestamp));

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
    const copies = [asBytes, asText, outside].map((r, i) => copyOf(r, i === 1 ? JSON.stringify(r) : Buffer.from(JSON.stringify(r))));
    expect(await store.logs.insertCopies(copies, 7, NOW)).toEqual({ stored: 2, outside: 1 });
    const rows = await store.logs.page({ orgId: o }, 10);
    expect(rows.map((r) => [r.id, r.message])).toEqual([['u2', 'plain'], ['u1', 'grüße ✓ 日本 🚀']]);
    expect(rows[1]!.attributes).toEqual({ note: 'naïve' });
  });

  it("stores text holding escapes, tabs and newlines, and absent fields, as they came; re-written copies answered once", async () => {
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
    // Written again, alone and beside a new one (a re-read after a crash): each answered once.
    expect(await store.logs.insertCopies([special, bare].map((r) => copyOf(r)), 7, NOW)).toEqual({ stored: 2, outside: 0 });
    const fresh = record({ id: 'x3', orgId: o, timestamp: at(1000) });
    expect(await store.logs.insertCopies([bare, fresh, fresh].map((r) => copyOf(r)), 7, NOW)).toEqual({ stored: 3, outside: 0 });
    expect(await store.logs.countUpTo({ orgId: o }, 10)).toBe(3);
    expect(await ids({ orgId: o })).toEqual(['x3', 'x2', 'x\\1']);
  });

  it('stores a flush of many records in pages of its organization, a record longer than a message intact, each field intact', async () => {
    const o = org();
    // About 300 KB of records and one of 100,000 multi-byte characters: more than one page, several CopyData messages.
    const many = Array.from({ length: 600 }, (_, i) => record({ id: `m${String(i).padStart(4, '0')}`, orgId: o, timestamp: at(i), message: `line ${i} ${'x'.repeat(400)}`, attributes: { i } }));
    const long = record({ id: 'm-long', orgId: o, timestamp: at(700), message: 'ü✓'.repeat(50_000), attributes: { tab: 'a\tb' } });
    const special = record({ id: 'm-special', orgId: o, timestamp: at(701), message: 'back\\slash\nnew\rline\tend' });
    const other = record({ id: 'm-other', orgId: `${o}_other`, timestamp: at(702) });
    const all = [...many, long, special, other];
    const writes: string[] = [];
    const spy: Sql = Object.assign(Object.create(store.sql) as Sql, {
      query: <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => {
        if (/insert into agent_log_pages/.test(text)) writes.push('insert');
        return store.sql.query<T>(text, params, options);
      },
      ...(store.sql.copyIn ? { copyIn: (text: string, rows: readonly Buffer[]) => (writes.push('copy'), store.sql.copyIn!(text, rows)) } : {}),
    });
    expect(await createLogsRepo(spy).insertCopies(all.map((r) => copyOf(r, Buffer.from(JSON.stringify(r)))), 7, NOW)).toEqual({ stored: 603, outside: 0 });
    // One COPY a flush on Postgres; a statement a page on the embedded store (two of this organization, one of the other's).
    expect(writes).toEqual(kind.name === 'postgres' ? ['copy'] : ['insert', 'insert', 'insert']);
    const pages = await store.sql.query<{ org_id: string; records: number }>('select org_id, records from agent_log_pages where org_id like $1 order by records desc', [`${o}%`]);
    expect(pages).toEqual([{ org_id: o, records: PAGE_RECORDS }, { org_id: o, records: 602 - PAGE_RECORDS }, { org_id: `${o}_other`, records: 1 }]);
    const rows = await store.logs.page({ orgId: o }, 1000);
    expect(rows).toHaveLength(602);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const r of many) expect(byId.get(r.id)).toMatchObject({ message: r.message, attributes: r.attributes });
    expect(byId.get('m-long')).toMatchObject({ message: long.message, attributes: { tab: 'a\tb' } });
    expect(byId.get('m-special')!.message).toBe(special.message);
  });

  it('keeps a record sent with newlines between its tokens, and numbers JSON cannot say as a double, as they came', async () => {
    const o = org();
    const pretty = record({ id: 'n1', orgId: o, timestamp: at(2000), message: 'two\nlines', attributes: { a: 'b' } });
    const huge = record({ id: 'n2', orgId: o, timestamp: at(1000), attributes: { n: 1 } });
    const copies = [copyOf(pretty, Buffer.from(JSON.stringify(pretty, null, 2))), copyOf(huge, JSON.stringify(huge).replace('"n":1', '"n":1e400'))];
    expect(await store.logs.insertCopies(copies, 7, NOW)).toEqual({ stored: 2, outside: 0 });
    const rows = await store.logs.page({ orgId: o }, 10);
    expect(rows.map((r) => r.id)).toEqual(['n2', 'n1']);
    expect(rows[1]).toMatchObject({ message: 'two\nlines', attributes: { a: 'b' } });
    expect(rows[0]!.attributes).toEqual({ n: Infinity });
    // The view of the pages a record a row reads it too.
    const viewed = await store.sql.query<{ id: string; message: string }>('select id, message from agent_logs where org_id = $1 order by id', [o]);
    expect(viewed.map((r) => r.id)).toEqual(['n1', 'n2']);
    expect(viewed[0]!.message).toBe('two\nlines');
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

  it("reads a skill's records from the pages holding that skill, on every day partition", async () => {
    const o = org();
    // A busy agent: 1,800 records a minute apart over two days, one in a hundred a record of skl_a,
    // written a flush of 100 at a time (as the worker's flushes would): the skill's records lie in 18 of 18+ pages.
    const recs = Array.from({ length: 1800 }, (_, i) => record({
      id: `b${String(i).padStart(4, '0')}`, orgId: o, agentId: 'agt_busy', timestamp: at(i * 60_000),
      source: i % 100 === 0 ? 'skill' : i % 2 ? 'mcp' : 'execution', attributes: { skillId: i % 100 === 0 ? 'skl_a' : 'skl_b' },
    }));
    for (let i = 0; i < recs.length; i += 100) await store.logs.insert(recs.slice(i, i + 100), 7, NOW);
    await store.logs.insert(Array.from({ length: 300 }, (_, i) => record({ id: `c${i}`, orgId: o, agentId: 'agt_busy', timestamp: at(i * 1000 + 7) })), 7, NOW);
    // The pages each statement read.
    let pagesRead = 0;
    const spy: Sql = Object.assign(Object.create(store.sql) as Sql, {
      query: async <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => {
        const rows = await store.sql.query<T>(text, params, options);
        if (/from agent_log_pages/.test(text)) pagesRead += rows.length;
        return rows;
      },
    });
    const repo = createLogsRepo(spy);
    const q: LogQuery = { orgId: o, agentId: 'agt_busy', skillId: 'skl_a' };
    const first = await repo.page(q, 5);
    expect(first.map((r) => r.id)).toEqual(['b0000', 'b0100', 'b0200', 'b0300', 'b0400']);
    const last = first[4]!;
    expect((await repo.page(q, 100, { after: { at: last.ts, id: last.id } })).map((r) => r.id)).toEqual(Array.from({ length: 13 }, (_, i) => `b${String((i + 5) * 100).padStart(4, '0')}`));
    expect(await repo.countUpTo(q, 10_000)).toBe(18);
    // Only pages holding the skill: the agent's other pages (its 300 records of no skill) are never read.
    pagesRead = 0;
    await repo.countUpTo(q, 10_000);
    expect(pagesRead).toBe(18);
  });

  it("reads on into a page whose bound is the time of the last record held: a record of that time there may come first", async () => {
    const o = org();
    // Two flushes, two pages: the first's last time (newest first) is the second page's bound, and
    // the second holds a record of that time whose id comes before the first's (newest first: larger).
    await store.logs.insert([record({ id: 'a', orgId: o, timestamp: at(1000) }), record({ id: 'b', orgId: o, timestamp: at(2000) })], 7, NOW);
    await store.logs.insert([record({ id: 'z', orgId: o, timestamp: at(2000) }), record({ id: 'c', orgId: o, timestamp: at(3000) })], 7, NOW);
    expect(await ids({ orgId: o }, 2)).toEqual(['a', 'z']);
    expect((await store.logs.page({ orgId: o }, 1, { offset: 1 })).map((r) => r.id)).toEqual(['z']);
    // Oldest first, the same: the first page's first time is the second's bound.
    const p = org();
    await store.logs.insert([record({ id: 'y', orgId: p, timestamp: at(3000) }), record({ id: 'x', orgId: p, timestamp: at(2000) })], 7, NOW);
    await store.logs.insert([record({ id: 'm', orgId: p, timestamp: at(2000) }), record({ id: 'n', orgId: p, timestamp: at(1000) })], 7, NOW);
    expect((await store.logs.replayPage(p, new Date(at(5000)), new Date(at(0)), null, 2)).map((r) => r.id)).toEqual(['y', 'm']);
  });

  it('reads each body once when a caller reading page after page keeps the last answer\'s pages', async () => {
    const o = org();
    // Three busy agents, pages of their own, each page's records spread over the whole walk.
    const recs = Array.from({ length: 180 }, (_, i) => record({ id: `w${String(i).padStart(3, '0')}`, orgId: o, agentId: `agt_w${i % 3}`, timestamp: at(i * 10) }));
    await store.logs.insert(recs, 7, NOW);
    let bodies = 0;
    const spy: Sql = Object.assign(Object.create(store.sql) as Sql, {
      query: async <T>(text: string, params?: readonly unknown[], options?: QueryOptions) => {
        const rows = await store.sql.query<T>(text, params, options);
        if (/select page, body/.test(text)) bodies += rows.length;
        return rows;
      },
    });
    const repo = createLogsRepo(spy);
    const lines = new PageLines();
    const walked: string[] = [];
    let after: LogRow | undefined;
    for (;;) {
      const page = await repo.page({ orgId: o }, 20, { lines, ...(after ? { after: { at: after.ts, id: after.id } } : {}) });
      walked.push(...page.map((r) => r.id));
      if (page.length < 20) break;
      after = page.at(-1);
    }
    expect(walked).toEqual(recs.map((r) => r.id));
    expect(bodies).toBe(3);
  });

  it('answers each record once however many pages hold it, by offset, keyset, count and replay alike', async () => {
    const o = org();
    // Records at 300 times over ten seconds (five or so sharing each), written in flushes of random
    // size, some of them twice (read twice from the source): pages overlap in time, and their
    // bounds are times other pages' records share.
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const recs = Array.from({ length: 1500 }, (_, i) => record({
      id: `d${String(i).padStart(4, '0')}`, orgId: o, agentId: `agt_${i % 3}`, timestamp: at(Math.floor(rand() * 300) * 33),
      source: i % 4 === 0 ? 'skill' : 'mcp', environment: i % 5 === 0 ? 'sandbox' : 'production',
    }));
    // In about the order of their times, as a source hands them over (each moved by up to 30
    // places), so that pages hold narrow spans and a page's bound is a time its neighbours share;
    // then a stretch of them again, as a re-read after a crash.
    const arrival = [...recs].sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
    for (let i = 0; i < arrival.length; i++) {
      const j = Math.min(arrival.length - 1, i + Math.floor(rand() * 30));
      [arrival[i], arrival[j]] = [arrival[j]!, arrival[i]!];
    }
    const written = [...arrival, ...arrival.slice(400, 900)];
    for (let i = 0; i < written.length; ) {
      const n = 1 + Math.floor(rand() * 120);
      await store.logs.insert(written.slice(i, i + n), 7, NOW);
      i += n;
    }
    const key = (r: { ts: Date; id: string } | AgentRecord) => ('ts' in r ? [r.ts.getTime(), r.id] : [Date.parse(r.timestamp), r.id]) as [number, string];
    const newest = (a: AgentRecord, b: AgentRecord) => { const [x, y] = [key(a), key(b)]; return y[0] - x[0] || (x[1] < y[1] ? 1 : -1); };
    const model = (f: (r: AgentRecord) => boolean) => recs.filter(f).sort(newest).map((r) => r.id);
    const queries: [LogQuery, (r: AgentRecord) => boolean][] = [
      [{ orgId: o }, () => true],
      [{ orgId: o, agentId: 'agt_1' }, (r) => r.agentId === 'agt_1'],
      [{ orgId: o, hiddenAgents: ['agt_0'], environment: 'sandbox' }, (r) => r.agentId !== 'agt_0' && r.environment === 'sandbox'],
      [{ orgId: o, source: 'skill', since: new Date(at(6000)), until: new Date(at(2000)) }, (r) => r.source === 'skill' && Date.parse(r.timestamp) >= NOW - 6000 && Date.parse(r.timestamp) <= NOW - 2000],
    ];
    for (const [q, f] of queries) {
      const want = model(f);
      expect(await ids(q, 5000), JSON.stringify(q)).toEqual(want);
      expect(await store.logs.countUpTo(q, 10_000)).toBe(want.length);
      expect(await store.logs.countUpTo(q, 10)).toBe(Math.min(want.length, 11));
      expect((await store.logs.page(q, 37, { offset: 111 })).map((r) => r.id)).toEqual(want.slice(111, 148));
      // Keyset pages of 100 to the end.
      const walked: string[] = [];
      let after: LogRow | undefined;
      for (;;) {
        const page: LogRow[] = await store.logs.page(q, 100, after ? { after: { at: after.ts, id: after.id } } : {});
        walked.push(...page.map((r) => r.id));
        if (page.length < 100) break;
        after = page.at(-1);
      }
      expect(walked).toEqual(want);
    }
    // A replay's pages, oldest first, from its recorded position to the end.
    const replayed: string[] = [];
    let position: { ts: string; id: string } | null = null;
    for (;;) {
      const page = await store.logs.replayPage(o, new Date(at(10_000)), new Date(at(0)), position, 250);
      if (page.length === 0) break;
      replayed.push(...page.map((r) => r.id));
      position = { ts: page.at(-1)!.tsText, id: page.at(-1)!.id };
    }
    expect(replayed).toEqual(model(() => true).reverse());
    // The view of the pages, a record a row, holds each once too.
    expect((await store.sql.query<{ n: number }>('select count(*)::int as n from agent_logs where org_id = $1', [o]))[0]!.n).toBe(recs.length);
  });

  it('moves the records of the row layout into pages when the store upgrades, each field and every read the same', async () => {
    const { store: fresh, dispose: disposeFresh } = await kind.open();
    try {
      const o = org();
      const recs = [
        record({ id: 'g1', orgId: o, timestamp: at(DAY), agentVersion: '2', attributes: { skillId: 'skl_g', n: 2 }, source: 'skill', traceId: 'c'.repeat(32) }),
        record({ id: 'g2', orgId: o, timestamp: at(1000), message: 'tab\there' }),
        ...Array.from({ length: 600 }, (_, i) => record({ id: `g3_${String(i).padStart(3, '0')}`, orgId: o, agentId: 'agt_many', timestamp: at(2000 + i) })),
      ];
      delete recs[1]!.agentVersion;
      // The store as the release before pages left it: the row layout, with a partition a day and rows.
      await fresh.sql.exec(`drop view agent_logs; drop table agent_log_pages; ${m004.sql}; ${m015.sql}; ${m018.sql};
        delete from schema_migrations where id = '024-agent-log-pages'`);
      for (const d of [0, 1]) {
        const day = Math.floor(NOW / DAY) - d;
        await fresh.sql.exec(`create table agent_logs_${day} partition of agent_logs for values from ('${new Date(day * DAY).toISOString()}') to ('${new Date((day + 1) * DAY).toISOString()}')`);
      }
      await fresh.sql.query(
        `insert into agent_logs (ts, id, org_id, agent_id, agent_name, agent_version, environment, source, event, severity, execution_id, message, trace_id, span_id, attributes)
         select (r->>'timestamp')::timestamptz, r->>'id', r->>'orgId', r->>'agentId', r->>'agentName', r->>'agentVersion', r->>'environment', r->>'source', r->>'event',
           r->>'severity', r->>'executionId', r->>'message', r->>'traceId', r->>'spanId', (r->'attributes')::jsonb from json_array_elements($1::text::json) r`,
        [JSON.stringify(recs)],
      );
      expect(await migrate(fresh.sql)).toEqual(['024-agent-log-pages']);
      const repo = createLogsRepo(fresh.sql);
      const read = await repo.page({ orgId: o }, 1000);
      expect(read.map((r) => r.id)).toEqual([...recs].sort((a, b) => Date.parse(b.timestamp) - Date.parse(a.timestamp) || (a.id < b.id ? 1 : -1)).map((r) => r.id));
      expect(read.find((r) => r.id === 'g1')).toMatchObject({ agentVersion: '2', attributes: { skillId: 'skl_g', n: 2 }, source: 'skill', traceId: 'c'.repeat(32), message: recs[0]!.message });
      expect(read.find((r) => r.id === 'g2')).toMatchObject({ agentVersion: null, message: 'tab\there', attributes: null, spanId: null });
      expect(read.find((r) => r.id === 'g1')!.ts.toISOString()).toBe(recs[0]!.timestamp);
      expect((await repo.page({ orgId: o, agentId: recs[0]!.agentId, skillId: 'skl_g' }, 10)).map((r) => r.id)).toEqual(['g1']);
      expect(await repo.countUpTo({ orgId: o, agentId: 'agt_many' }, 10_000)).toBe(600);
      // Pages of 500 at most, of one organization and day.
      const pages = await fresh.sql.query<{ records: number }>('select records from agent_log_pages order by records desc');
      expect(pages.map((p) => p.records)).toEqual([500, 101, 1]);
      // Written after the upgrade, beside the moved ones.
      await repo.insert([record({ id: 'g4', orgId: o, timestamp: at(0) })], 7, NOW);
      expect((await repo.page({ orgId: o }, 2)).map((r) => r.id)).toEqual(['g4', 'g2']);
    } finally {
      await disposeFresh();
    }
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
    expect(dropped).toContain(`agent_log_pages_${new Date(NOW - 9 * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`);
    expect(await ids({ orgId: o })).toEqual(['recent']);
    // Upkeep made today's and the next days' partitions, and is idempotent.
    expect((await store.logs.maintain(7, NOW)).dropped).toEqual([]);
    const parts = await store.sql.query<{ n: string }>(
      `select c.relname as n from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where p.relname = 'agent_log_pages'`,
    );
    const names = parts.map((p) => p.n);
    for (let d = 0; d <= 2; d++) expect(names).toContain(`agent_log_pages_${new Date(NOW + d * DAY).toISOString().slice(0, 10).replace(/-/g, '')}`);
    // A record for a day whose partition was dropped is stored again once it is back in the window.
    expect(await store.logs.insert([record({ id: 'again', orgId: o, timestamp: at(6 * DAY) })], 7, NOW)).toBe(0);
    expect(await ids({ orgId: o })).toEqual(['recent', 'again']);
  });
});
