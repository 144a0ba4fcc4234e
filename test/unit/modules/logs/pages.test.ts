/** The platform copy's pages (modules/logs/pages.ts): what a page holds, and how a read tells a record met twice. */
import { describe, expect, it } from 'vitest';
import { AGENT_PAGE_RECORDS, agentKey, bodyText, logCopyOf, linesOf, metaRecordsOf, metaText, pagesCopyData, pagesOf, SeenRecords, SKILL_ID_MAX, skillKey } from '../../../../src/modules/logs/pages.js';
import { record } from '../../../helpers/records.js';
import type { AgentRecord } from '../../../../src/model/record.js';

const DAY = 86_400_000;
const copy = (p: Partial<AgentRecord>) => {
  const r = record(p);
  return logCopyOf(r, JSON.stringify(r), Date.parse(r.timestamp));
};

describe('pagesOf', () => {
  it("groups a flush's copies by organization and day, in the order they came, a page holding at most its bound", () => {
    const day = Date.parse('2026-11-20T00:00:00.000Z');
    const copies = [
      copy({ id: 'a1', orgId: 'org_a', timestamp: new Date(day + 5000).toISOString() }),
      copy({ id: 'b1', orgId: 'org_b', timestamp: new Date(day + 1000).toISOString() }),
      copy({ id: 'a2', orgId: 'org_a', timestamp: new Date(day + 2000).toISOString() }),
      copy({ id: 'a3', orgId: 'org_a', timestamp: new Date(day - 1).toISOString() }),
      copy({ id: 'a4', orgId: 'org_a', timestamp: new Date(day + 9000).toISOString() }),
    ];
    const pages = pagesOf(copies, 2);
    expect(pages.map((p) => [p.orgId, p.day, p.copies.map((c) => c.id)])).toEqual([
      ['org_a', day / DAY, ['a1', 'a2']],
      ['org_a', day / DAY, ['a4']],
      ['org_b', day / DAY, ['b1']],
      ['org_a', day / DAY - 1, ['a3']],
    ]);
    expect([pages[0]!.tsMinMs, pages[0]!.tsMaxMs]).toEqual([day + 2000, day + 5000]);
  });

  it('gives an agent with many of the copies pages of its own, the others pages together', () => {
    const busy = Array.from({ length: AGENT_PAGE_RECORDS + 1 }, (_, i) => copy({ id: `b${i}`, orgId: 'org_a', agentId: 'agt_busy' }));
    const quiet = [copy({ id: 'q1', orgId: 'org_a', agentId: 'agt_q1' }), copy({ id: 'q2', orgId: 'org_a', agentId: 'agt_q2' })];
    const pages = pagesOf([quiet[0]!, ...busy, quiet[1]!]);
    expect(pages.map((p) => [p.keys, p.copies.length])).toEqual([
      [[agentKey('agt_busy')], AGENT_PAGE_RECORDS + 1],
      [[agentKey('agt_q1'), agentKey('agt_q2')], 2],
    ]);
  });

  it("keys a page by each agent, and by each agent's skill of a skill record whose skillId is a string a read can name", () => {
    const [page] = pagesOf([
      copy({ agentId: 'agt_1', source: 'skill', attributes: { skillId: 'skl_x' } }),
      copy({ agentId: 'agt_1', source: 'skill', attributes: { skillId: 7 } }),
      copy({ agentId: 'agt_2', source: 'mcp', attributes: { skillId: 'skl_y' } }),
      copy({ agentId: 'agt_1', source: 'skill', attributes: { skillId: 'skl_x' } }),
      copy({ agentId: 'agt_1', source: 'skill', attributes: { skillId: 'x'.repeat(SKILL_ID_MAX + 1) } }),
    ]);
    expect(page!.keys.sort()).toEqual([agentKey('agt_1'), agentKey('agt_2'), skillKey('agt_1', 'skl_x')].sort());
  });
});

describe('a page body', () => {
  it('holds a record a line, one sent with newlines between its tokens kept as one line of the same value', () => {
    const plain = record({ id: 'p', message: 'a\nb' });
    const pretty = record({ id: 'q', attributes: { k: 'v' } });
    const [page] = pagesOf([logCopyOf(plain, Buffer.from(JSON.stringify(plain)), Date.parse(plain.timestamp)), logCopyOf(pretty, JSON.stringify(pretty, null, 2), Date.parse(pretty.timestamp))]);
    const body = bodyText(page!);
    expect(body.split('\n')).toHaveLength(2);
    expect([...linesOf(body)].map(([line, index]) => [JSON.parse(line), index])).toEqual([[plain, 0], [pretty, 1]]);
  });
});

describe("a page's summary", () => {
  it("gives each record's time, id, agent, source, environment and skill id in the body's order", () => {
    const a = record({ id: 'a', agentId: 'agt_1', source: 'skill', environment: 'sandbox', attributes: { skillId: 'skl_x' } });
    const b = record({ id: 'b', agentId: 'agt_2' });
    const [page] = pagesOf([a, b].map((r) => logCopyOf(r, JSON.stringify(r), Date.parse(r.timestamp))));
    expect([...metaRecordsOf(metaText(page!))]).toEqual([
      { ms: Date.parse(a.timestamp), id: 'a', agentId: 'agt_1', source: 'skill', environment: 'sandbox', skillId: 'skl_x', index: 0 },
      { ms: Date.parse(b.timestamp), id: 'b', agentId: 'agt_2', source: 'mcp', environment: 'production', skillId: undefined, index: 1 },
    ]);
  });

  it('reads lines without escapes as JSON.parse would: commas and brackets in ids, the spaced form the upgrade wrote', () => {
    const lines = [
      JSON.stringify([1764500000123, 'a,b]"', 'agt_1', 'skill', 'sandbox', 'skl [x], y']),
      JSON.stringify([1764500000124, 'ü✓ 日本', 'agt,2', 'mcp', 'production']),
      '[1764500000125, "c", "agt_3", "skill", "production", "skl_z"]',
      '[1764500000126, "d", "agt_4", "mcp", "sandbox"]',
    ];
    const want = lines.map((l, index) => {
      const [ms, id, agentId, source, environment, skillId] = JSON.parse(l) as [number, string, string, string, string, string?];
      return { ms, id, agentId, source, environment, skillId, index };
    });
    expect([...metaRecordsOf(lines.join('\n'))]).toEqual(want);
  });

  it('passes over a line lacking a selected value only when the line holds no escape', () => {
    const mine = record({ id: 'm', agentId: 'agt_1' });
    const other = record({ id: 'o', agentId: 'agt_2' });
    const quoted = record({ id: 'q"1', agentId: 'agt_1' });
    const [page] = pagesOf([mine, other, quoted].map((r) => logCopyOf(r, JSON.stringify(r), Date.parse(r.timestamp))));
    const meta = metaText(page!);
    expect([...metaRecordsOf(meta, [JSON.stringify('agt_1')])].map((r) => [r.id, r.index])).toEqual([['m', 0], ['q"1', 2]]);
    // A line written with an escape where the value is (as JSON may): parsed, and found.
    const escaped = meta.replace('"agt_2"', '"agt\\u005f1"');
    expect([...metaRecordsOf(escaped, [JSON.stringify('agt_1')])].map((r) => [r.id, r.agentId])).toEqual([['m', 'agt_1'], ['o', 'agt_1'], ['q"1', 'agt_1']]);
    expect([...metaRecordsOf(meta)].map((r) => r.id)).toEqual(['m', 'o', 'q"1']);
  });
});

/** A binary COPY's tuples read back (PostgreSQL's format, for PAGE_COLUMNS' types), as the server reads them. */
function readCopyData(data: Buffer): unknown[][] {
  expect(data.subarray(0, 11).toString('latin1')).toBe('PGCOPY\n\xff\r\n\x00');
  let at = 19;
  const tuples: unknown[][] = [];
  const field = (): Buffer => {
    const n = data.readInt32BE(at);
    const b = data.subarray(at + 4, at + 4 + n);
    at += 4 + n;
    return b;
  };
  for (;;) {
    const count = data.readInt16BE(at);
    at += 2;
    if (count === -1) break;
    expect(count).toBe(9);
    const day = field().readInt32BE(0) + Date.UTC(2000, 0, 1) / DAY;
    const org = field().toString();
    const tsMin = Number(field().readBigInt64BE(0) / 1000n) + Date.UTC(2000, 0, 1);
    const tsMax = Number(field().readBigInt64BE(0) / 1000n) + Date.UTC(2000, 0, 1);
    const id = field().toString();
    const records = field().readInt32BE(0);
    const arr = field();
    expect([arr.readInt32BE(0), arr.readInt32BE(4), arr.readInt32BE(8), arr.readInt32BE(16)]).toEqual([1, 0, 25, 1]);
    const keys: string[] = [];
    for (let k = 0, p = 20; k < arr.readInt32BE(12); k++) {
      const n = arr.readInt32BE(p);
      keys.push(arr.subarray(p + 4, p + 4 + n).toString());
      p += 4 + n;
    }
    tuples.push([day, org, tsMin, tsMax, id, records, keys, field().toString(), field().toString()]);
  }
  expect(at).toBe(data.length);
  return tuples;
}

describe("a flush's pages as COPY data", () => {
  it('holds a tuple a page: its day, organization, times, id, count, keys, summary (metaText) and body (bodyText)', () => {
    const day = Date.parse('2026-11-20T00:00:00.000Z');
    const odd = '"quoted\\ é 漢 😀 \u0001';
    const copies = [
      copy({ id: 'a1', orgId: 'org_a', timestamp: new Date(day + 5000).toISOString() }),
      copy({ id: `id ${odd}`, orgId: 'org_a', agentId: `agt ${odd}`, source: 'skill', attributes: { skillId: `sk ${odd}` }, timestamp: new Date(day + 7000).toISOString() }),
      copy({ id: 'b1', orgId: 'org_b', timestamp: new Date(day + 1000).toISOString() }),
      // Consumed as bytes, and pretty-printed: its newlines become spaces.
      logCopyOf(record({ id: 'a3', orgId: 'org_a' }), Buffer.from(JSON.stringify(record({ id: 'a3', orgId: 'org_a' }), null, 2)), day + 9000),
    ];
    const pages = pagesOf(copies, 2);
    const ids = pages.map((_, i) => `00000000-0000-0000-0000-00000000000${i}`);
    expect(readCopyData(pagesCopyData(pages, ids))).toEqual(
      pages.map((p, i) => [p.day, p.orgId, p.tsMinMs, p.tsMaxMs, ids[i], p.copies.length, p.keys, metaText(p), bodyText(p)]),
    );
    expect(bodyText(pages.find((p) => p.copies.some((c) => c.id === 'a3'))!)).not.toContain('\n  ');
  });
});

describe('SeenRecords', () => {
  it('tells a record met again, and forgets those no later page can hold once it holds many', () => {
    const seen = new SeenRecords('newest');
    expect(seen.first(5, 'a')).toBe(true);
    expect(seen.first(5, 'a')).toBe(false);
    expect(seen.first(5, 'b')).toBe(true);
    for (let i = 0; i < 20_000; i++) seen.first(10_000 + i, `r${i}`);
    // The next page's last time is 15,000: records after it are forgotten, those at or before it kept.
    seen.passing(15_000);
    expect(seen.first(10_000 + 4_000, 'r4000')).toBe(false);
    expect(seen.first(15_000, 'r5000')).toBe(false);
    expect(seen.first(5, 'a')).toBe(false);
    expect(seen.first(10_000 + 6_000, 'r6000')).toBe(true);
  });

  it('forgets, oldest first, the records before the next page', () => {
    const seen = new SeenRecords('oldest');
    for (let i = 0; i < 20_000; i++) seen.first(i, `r${i}`);
    seen.passing(10_000);
    expect(seen.first(10_000, 'r10000')).toBe(false);
    expect(seen.first(9_999, 'r9999')).toBe(true);
  });
});
