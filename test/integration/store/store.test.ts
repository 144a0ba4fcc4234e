import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STORE_KINDS } from '../../helpers/stores.js';
import type { Store } from '../../../src/store/store.js';
import { migrate } from '../../../src/store/migrate.js';
import { parseSeed, readSeedFile } from '../../../src/seed/seed-file.js';
import { applySeed } from '../../../src/seed/apply.js';
import { hashToken } from '../../../src/security/token-hash.js';
import type { Drain } from '../../../src/model/drain.js';
import type { DeliveryRecord } from '../../../src/model/delivery.js';
import { hourOf } from '../../../src/model/time.js';
import { PARK_ROWS, type RoundCursor } from '../../../src/modules/drains/tables/backlog.js';
import { pageOf } from '../../../src/modules/drains/tables/backlog-pages.js';
import { intArrayLiteral, textArrayLiteral } from '../../../src/store/array-literal.js';
import { withBuckets } from '../../helpers/backlog.js';

const SEED = new URL('../../fixtures/seed-acme.json', import.meta.url).pathname;

function drain(id: string, name: string, orgId = 'org_acme'): Drain {
  const now = new Date();
  return {
    id, orgId, name, type: 'http', endpoint: 'https://example.com/logs', site: null, format: 'json',
    headers: [{ name: 'X-Token', value: 'sealed', last4: 'abcd' }], secret: 'sealed-secret', previousSecret: null,
    rotationStartedAt: null, rotationExpiresAt: null,
    selectors: { sources: null, minSeverity: 'info', agents: '*', environments: ['production'], includeContent: false },
    sampling: null, redact: null, scrubRules: null, state: 'pending_verification', pauseReason: null,
    verifiedAt: null, verification: null, version: 1, createdBy: { type: 'user', id: 'usr_ann' },
    createdAt: now, updatedAt: now,
  };
}

function delivery(id: string, drainId: string, startedAt: Date, kind: DeliveryRecord['kind'] = 'batch'): DeliveryRecord {
  return {
    id, orgId: 'org_acme', drainId, batchId: `b_${id}`, kind, attempt: 1, recordCount: 3, bytes: 100,
    bytesCompressed: 40, statusCode: 200, latencyMs: 12, ok: true, startedAt,
    expiresAt: new Date(startedAt.getTime() + 7 * 86_400_000), firstRecordId: 'r1', lastRecordId: 'r3',
  };
}

describe.each(STORE_KINDS)('store on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
    await applySeed(store.sql, await readSeedFile(SEED));
  });
  afterAll(async () => dispose());

  it('applies migrations once: a second run applies nothing', async () => {
    expect(await migrate(store.sql)).toEqual([]);
  });

  it('seeds idempotently and stores keys only as hashes', async () => {
    await applySeed(store.sql, await readSeedFile(SEED));
    const key = await store.auth.findKey(hashToken('lk_acme_manage'));
    expect(key).toMatchObject({ ownerId: 'usr_ann', orgId: 'org_acme', scopes: ['logs:manage'], status: 'active' });
    expect((await store.auth.findKey(hashToken('lk_acme_legacy')))?.scopes).toBeNull();
    const plain = await store.sql.query("select 1 from api_keys where key_hash = 'lk_acme_manage'");
    expect(plain).toHaveLength(0);
    const orgs = await store.sql.query<{ n: number }>('select count(*)::int as n from orgs');
    expect(orgs[0]!.n).toBe(2);
    expect(await store.auth.findSession(hashToken('sess_ann_old'))).toEqual({ userId: 'usr_ann', revoked: true });
    expect(await store.auth.roleIn('usr_ann', 'org_acme')).toBe('admin');
    expect(await store.auth.agentsOutsideOrg('org_acme', ['agt_support', 'agt_globex', 'agt_none'])).toEqual([
      'agt_globex',
      'agt_none',
    ]);
  });

  it('keeps which agents are base agents (agents[].baseAgent; absent: not one), and refuses a flag that is not a boolean', async () => {
    const base = { orgs: [{ id: 'org_base', name: 'Base', plan: 'standard' }], users: [], apiKeys: [], sessions: [] };
    await applySeed(store.sql, parseSeed({ ...base, agents: [
      { id: 'agt_base_1', orgId: 'org_base', name: 'template-base', baseAgent: true },
      { id: 'agt_base_2', orgId: 'org_base', name: 'plain' },
    ] }));
    const rows = async () => store.sql.query<{ id: string; base_agent: boolean }>("select id, base_agent from agents where org_id = 'org_base' order by id");
    expect(await rows()).toEqual([{ id: 'agt_base_1', base_agent: true }, { id: 'agt_base_2', base_agent: false }]);
    // A seed applied again says what the agent is now.
    await applySeed(store.sql, parseSeed({ ...base, agents: [{ id: 'agt_base_1', orgId: 'org_base', name: 'template-base', baseAgent: false }] }));
    expect((await rows())[0]).toEqual({ id: 'agt_base_1', base_agent: false });
    expect(() => parseSeed({ ...base, agents: [{ id: 'agt_x', orgId: 'org_base', name: 'x', baseAgent: 'yes' }] })).toThrow(/agents\[0\]\.baseAgent must be true or false/);
  });

  it('moves the drain configuration version with every drain write, rolled-back ones aside, and notifies a watcher', async () => {
    const v0 = await store.drains.configVersion();
    let notified = 0;
    const unwatch = await store.drains.watchConfig(() => notified++);
    try {
      const d = drain('drn_version', 'versioned');
      await store.drains.insert(d);
      const v1 = await store.drains.configVersion();
      expect(v1).toBeGreaterThan(v0);
      await store.drains.transition(d.id, ['pending_verification'], 'healthy');
      const v2 = await store.drains.configVersion();
      expect(v2).toBeGreaterThan(v1);
      await expect(store.sql.transaction(async (tx) => {
        await tx.query("update drains set name = 'renamed' where id = $1", [d.id]);
        throw new Error('rolled back');
      })).rejects.toThrow('rolled back');
      expect(await store.drains.configVersion()).toBe(v2);
      await store.drains.softDelete('org_acme', d.id);
      expect(await store.drains.configVersion()).toBeGreaterThan(v2);
      // Notifications arrive after their commits, on the listener's own connection.
      await vi.waitFor(() => expect(notified).toBeGreaterThanOrEqual(3), { timeout: 5000 });
    } finally {
      await unwatch();
    }
  });

  it.runIf(kind.name === 'postgres')('listens again after the server cuts the listening connection, and says so', async () => {
    let notified = 0;
    const unwatch = await store.drains.watchConfig(() => notified++);
    try {
      const cut = await store.sql.query<{ ok: boolean }>(
        "select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = current_database() and query = 'listen logdrain_drain_config'",
      );
      expect(cut).toHaveLength(1);
      // Called once the connection is back (what was sent meanwhile is lost), then for changes again.
      await vi.waitFor(() => expect(notified).toBe(1), { timeout: 10_000 });
      await store.drains.insert(drain('drn_relisten', 'relisten'));
      await vi.waitFor(() => expect(notified).toBe(2), { timeout: 5000 });
      await store.drains.softDelete('org_acme', 'drn_relisten');
    } finally {
      await unwatch();
    }
  });

  it('keeps drain names unique per organization until a soft delete frees them', async () => {
    await store.drains.insert(drain('drn_1', 'main'));
    await expect(store.drains.insert(drain('drn_2', 'main'))).rejects.toThrow();
    await store.drains.insert(drain('drn_3', 'main', 'org_globex'));
    expect(await store.drains.countLive('org_acme')).toBe(1);

    const verifiedAt = new Date();
    const updated = await store.drains.update('org_acme', 'drn_1', { verifiedAt }, true);
    expect(updated?.verifiedAt?.getTime()).toBe(verifiedAt.getTime());
    expect(updated?.version).toBe(2);
    expect(await store.drains.get('org_globex', 'drn_1')).toBeUndefined();

    expect(await store.drains.softDelete('org_acme', 'drn_1')).toBe(true);
    expect(await store.drains.get('org_acme', 'drn_1')).toBeUndefined();
    const purged = await store.sql.query<{ secret: string | null; headers: unknown }>(
      "select secret, headers from drains where id = 'drn_1'",
    );
    expect(purged[0]).toEqual({ secret: null, headers: [{ name: 'X-Token' }] });
    await store.drains.insert(drain('drn_4', 'main'));
    expect((await store.drains.listByOrg('org_acme')).map((d) => d.id)).toEqual(['drn_4']);
  });

  it('pages deliveries newest first with a kind filter and a keyset cursor, and sweeps expired rows', async () => {
    const base = Date.now() - 60_000;
    const rows = Array.from({ length: 25 }, (_, i) =>
      delivery(`d${String(i).padStart(2, '0')}`, 'drn_p', new Date(base + i * 1000), i % 5 === 0 ? 'test' : 'batch'),
    );
    rows.push({ ...delivery('old', 'drn_p', new Date(base - 8 * 86_400_000)), expiresAt: new Date(base - 86_400_000) });
    await store.deliveries.insertMany(rows);

    const first = await store.deliveries.page('drn_p', { limit: 10 });
    expect(first.map((d) => d.id)).toEqual(['d24', 'd23', 'd22', 'd21', 'd20', 'd19', 'd18', 'd17', 'd16', 'd15']);
    expect(first[0]).toMatchObject({ recordCount: 3, bytesCompressed: 40, statusCode: 200, ok: true });
    expect(first[0]!.errorClass).toBeUndefined();
    const last = first[first.length - 1]!;
    const second = await store.deliveries.page('drn_p', { limit: 100, after: { startedAt: last.startedAt, id: last.id } });
    expect(second.map((d) => d.id)).toEqual(rows.slice(0, 15).map((r) => r.id).reverse());
    const tests = await store.deliveries.page('drn_p', { limit: 100, kind: 'test' });
    expect(tests.map((d) => d.id)).toEqual(['d20', 'd15', 'd10', 'd05', 'd00']);

    expect(await store.deliveries.sweepExpired()).toBe(1);
  });

  it('reports 24 hourly points, oldest first, zero-filled, the newest the current hour', async () => {
    const now = Date.now();
    const h = hourOf(now);
    await store.health.addHourly([
      { drainId: 'drn_h', h, delivered: 5, dropped: 1, rejected: 0 },
      { drainId: 'drn_h', h: h - 3, delivered: 2, dropped: 0, rejected: 4 },
      { drainId: 'drn_h', h: h - 30, delivered: 99, dropped: 0, rejected: 0 },
    ]);
    await store.health.addHourly([{ drainId: 'drn_h', h, delivered: 1, dropped: 0, rejected: 0 }]);
    const facts = await store.health.facts('drn_h', now);
    expect(facts.hourly).toHaveLength(24);
    expect(facts.hourly[0]!.h).toBe(h - 23);
    expect(facts.hourly[23]).toMatchObject({ h, delivered: 6, dropped: 1, rejected: 0 });
    expect(facts.hourly[20]).toMatchObject({ h: h - 3, delivered: 2, dropped: 0, rejected: 4 });
    expect(facts.hourly.filter((p) => p.delivered === 0).length).toBe(22);
  });

  it('adds up seen and the drops by reason per hour, and each hour\'s attempt latencies', async () => {
    const now = Date.now();
    const h = hourOf(now);
    await store.health.addHourly([
      { drainId: 'drn_r', h, delivered: 3, dropped: 2, rejected: 0, seen: 9, droppedBy: { quota: 1, dead_letter: 1, selector: 4 } },
      { drainId: 'drn_r', h: h - 1, delivered: 0, dropped: 1, rejected: 0, seen: 2, droppedBy: { horizon: 1, sampling: 1 } },
    ]);
    await store.health.addHourly([{ drainId: 'drn_r', h, delivered: 0, dropped: 2, rejected: 0, seen: 2, droppedBy: { permanent: 1, oversize: 1 } }]);
    const at = (ms: number, latencyMs: number, kind: 'batch' | 'verify' = 'batch') => ({
      id: `lat_${ms}_${latencyMs}_${kind}`, orgId: 'org_acme', drainId: 'drn_r', batchId: 'b', kind, attempt: 1, ok: true, latencyMs,
      startedAt: new Date(ms), expiresAt: new Date(now + 86_400_000),
    });
    const hourStart = h * 3_600_000;
    await store.deliveries.insertMany([
      ...Array.from({ length: 100 }, (_, i) => at(hourStart + i, i + 1)),
      at(hourStart - 1000, 500),
      at(hourStart + 200, 9999, 'verify'), // not a delivery's latency
    ]);
    const facts = await store.health.facts('drn_r', now);
    const zero = { quota: 0, horizon: 0, permanent: 0, oversize: 0, dead_letter: 0, sampling: 0, selector: 0 };
    expect(facts.hourly[23]).toEqual({
      h, seen: 11, delivered: 3, dropped: 4, rejected: 0,
      droppedByReason: { ...zero, quota: 1, dead_letter: 1, selector: 4, permanent: 1, oversize: 1 },
      p50LatencyMs: 50, p99LatencyMs: 99,
    });
    expect(facts.hourly[22]).toEqual({ h: h - 1, seen: 2, delivered: 0, dropped: 1, rejected: 0, droppedByReason: { ...zero, horizon: 1, sampling: 1 }, p50LatencyMs: 500, p99LatencyMs: 500 });
    expect(facts.hourly[0]).toEqual({ h: h - 23, seen: 0, delivered: 0, dropped: 0, rejected: 0, droppedByReason: zero, p50LatencyMs: null, p99LatencyMs: null });
    expect(facts.p99LatencyMs).toBe(100);
  });

  it('reads a drain\'s backlog bucket by bucket, each resource in order, in reads up to a round\'s last page', async () => {
    const resources = ['{"b":1}', '{"a":1}', '{"c":1}'];
    const park = (n: number, drainId = 'drn_bklg', from = 0) => store.backlog.park(withBuckets(Array.from({ length: n }, (_, k) => ({
      drainId, orgId: 'org_acme', resourceJson: resources[(from + k) % 3]!, recordJson: `{"i":${from + k}}`, recordId: `r${from + k}`, bytes: 7, scrubHits: 0,
    }))));
    expect(await store.backlog.lastId('drn_bklg')).toBeNull();
    await park(6);
    await park(3, 'drn_bklg', 6);
    await park(3, 'drn_other');
    const upTo = (await store.backlog.lastId('drn_bklg'))!;
    await park(3, 'drn_bklg', 9); // parked after the round began: not in it
    const seen: { resource: string; id: number; record: string }[] = [];
    let after: RoundCursor | undefined;
    for (let reads = 0; ; reads++) {
      expect(reads).toBeLessThan(20);
      const { rows, next } = await store.backlog.roundRead('drn_bklg', upTo, after, 2);
      seen.push(...rows.map((r) => ({ resource: r.resourceJson, id: r.id, record: r.recordJson })));
      if (next === undefined) break;
      after = next;
    }
    const byResource = { '{"b":1}': ['{"i":0}', '{"i":3}', '{"i":6}'], '{"a":1}': ['{"i":1}', '{"i":4}', '{"i":7}'], '{"c":1}': ['{"i":2}', '{"i":5}', '{"i":8}'] } as Record<string, string[]>;
    // Every record of the round once, each resource's in order.
    expect(seen.map((s) => s.record).sort()).toEqual(Object.values(byResource).flat().sort());
    for (const [resource, records] of Object.entries(byResource)) expect(seen.filter((s) => s.resource === resource).map((s) => s.record)).toEqual(records);
    expect(seen.every((s) => pageOf(s.id) <= upTo)).toBe(true);
    expect(await store.backlog.lastId('drn_bklg')).toBeGreaterThan(upTo);
  });

  it('reads a bucket of more pages than a first look at the sizes takes whole, then the next bucket', async () => {
    // {"d":1} is in bucket 2 and {"a":1} in bucket 17: 300 one-record pages of the first, then two of the second.
    const park = (resourceJson: string, i: number) => store.backlog.park(withBuckets([{
      drainId: 'drn_wide', orgId: 'org_acme', resourceJson, recordJson: `{"i":${i}}`, recordId: `w${i}`, bytes: 7, scrubHits: 0,
    }]));
    for (let i = 0; i < 300; i++) await park('{"d":1}', i);
    await park('{"a":1}', 300);
    await park('{"a":1}', 301);
    const upTo = (await store.backlog.lastId('drn_wide'))!;
    // A budget of one record: the first bucket whole (up to the cap), nothing of the next.
    const first = await store.backlog.roundRead('drn_wide', upTo, undefined, 1, 10_000);
    expect(first.rows.map((r) => r.recordId)).toEqual(Array.from({ length: 300 }, (_, i) => `w${i}`));
    expect(first.next).toBeDefined();
    const second = await store.backlog.roundRead('drn_wide', upTo, first.next, 1, 10_000);
    expect(second.rows.map((r) => r.recordId)).toEqual(['w300', 'w301']);
    expect(second.next).toBeUndefined();
  });

  it('removes delivered records a page at a time, keeps the rest of a page, and counts what is left', async () => {
    await store.backlog.park(withBuckets(Array.from({ length: 4 }, (_, i) => ({
      drainId: 'drn_rm', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: `{"i":${i}}`, recordId: `x${i}`, bytes: 10 + i, scrubHits: 0,
    }))));
    const upTo = (await store.backlog.lastId('drn_rm'))!;
    const first = await store.backlog.roundRead('drn_rm', upTo, undefined, 100);
    expect(first.rows.map((r) => r.recordId)).toEqual(['x0', 'x1', 'x2', 'x3']);
    await store.backlog.remove(first.rows.slice(0, 2).map((r) => r.id));
    expect(await store.backlog.sizeOf('drn_rm')).toEqual({ records: 2, bytes: 12 + 13 });
    const again = await store.backlog.roundRead('drn_rm', upTo, undefined, 100);
    expect(again.rows.map((r) => r.recordId)).toEqual(['x2', 'x3']);
    const view = await store.sql.query<{ record_id: string }>("select record_id from drain_backlog where drain_id = 'drn_rm' order by id");
    expect(view.map((r) => r.record_id)).toEqual(['x2', 'x3']);
    // Deleting from the view removes the records from their page.
    await store.backlog.park(withBuckets([{ drainId: 'drn_rm_view', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: '{}', recordId: 'v1', bytes: 2, scrubHits: 0 }, { drainId: 'drn_rm_view', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: '{}', recordId: 'v2', bytes: 3, scrubHits: 0 }]));
    await store.sql.query("delete from drain_backlog where record_id = 'v1'");
    expect(await store.backlog.sizeOf('drn_rm_view')).toEqual({ records: 1, bytes: 3 });
    await store.sql.query("delete from drain_backlog where drain_id = 'drn_rm_view'");
    expect(await store.backlog.lastId('drn_rm_view')).toBeNull();
    const expired = await store.backlog.expire('drn_rm', new Date(Date.now() + 60_000));
    expect(expired.recordIds).toEqual(['x2', 'x3']);
    expect(await store.backlog.sizeOf('drn_rm')).toEqual({ records: 0, bytes: 0 });
    await store.backlog.park(withBuckets([{ drainId: 'drn_rm', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: '{}', recordId: 'y', bytes: 2, scrubHits: 0 }]));
    const last = await store.backlog.roundRead('drn_rm', (await store.backlog.lastId('drn_rm'))!, undefined, 100);
    await store.backlog.remove(last.rows.map((r) => r.id));
    expect(await store.backlog.lastId('drn_rm')).toBeNull();
  });

  it('parks more rows than one statement writes, every one, in the order given', async () => {
    const n = 2 * PARK_ROWS + 5;
    await store.backlog.park(withBuckets(Array.from({ length: n }, (_, i) => ({
      drainId: 'drn_many', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: `{"i":${i}}`, recordId: `m${i}`, bytes: 7, scrubHits: 0,
    }))));
    const rows = await store.sql.query<{ record_id: string }>("select record_id from drain_backlog where drain_id = 'drn_many' order by id");
    expect(rows.map((r) => r.record_id)).toEqual(Array.from({ length: n }, (_, i) => `m${i}`));
  });

  it('parks each column as given: quotes, backslashes, escapes and non-ASCII text in the JSON, newlines in ids', async () => {
    const record = JSON.stringify({ id: 'q"1', message: 'a "quoted" \\ back\\slash, a line\nbreak, tab\t, é ✓ 😀, {"json":"inside"}', attributes: { k: 'v' } });
    const rows = [
      { drainId: 'drn_cols', orgId: 'org_acme', resourceJson: '{"agent.name":"bot \\"one\\""}', recordJson: record, recordId: 'id\nwith a newline', bytes: 123, scrubHits: 2 },
      // Raw newlines in JSON text are whitespace (JSON.stringify never writes one): the same value comes back.
      { drainId: 'drn_cols', orgId: 'org_acme', resourceJson: '{\n"a": 1\n}', recordJson: '{"i":\n2}', recordId: 'plain', bytes: 9, scrubHits: 0 },
      { drainId: 'drn_cols', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: '""', recordId: 'e', bytes: 2, scrubHits: 0 },
      // Quotes, backslashes, braces and commas in an id: the ids' array literal escapes them.
      { drainId: 'drn_cols', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: '{}', recordId: 'q"\\x{y},z NULL', bytes: 2, scrubHits: 0 },
    ];
    await store.backlog.park(withBuckets(rows));
    const { rows: got } = await store.backlog.roundRead('drn_cols', (await store.backlog.lastId('drn_cols'))!, undefined, 10);
    const byId = new Map(got.map((r) => [r.recordId, r]));
    expect([...byId.keys()].sort()).toEqual(['e', 'id\nwith a newline', 'plain', 'q"\\x{y},z NULL']);
    expect(byId.get('id\nwith a newline')).toMatchObject({ recordJson: record, resourceJson: rows[0]!.resourceJson, bytes: 123, scrubHits: 2 });
    expect(JSON.parse(byId.get('plain')!.recordJson)).toEqual({ i: 2 });
    expect(JSON.parse(byId.get('plain')!.resourceJson)).toEqual({ a: 1 });
    expect(byId.get('e')!.recordJson).toBe('""');
  });

  it('parks JSON given as UTF-8 bytes (a settled entry) as it parks the same text, raw newlines and the page separator made spaces', async () => {
    const record = JSON.stringify({ id: 'b1', message: 'a "quoted" \\ back\\slash, a line\nbreak, é ✓ 😀' });
    const rows = [
      { drainId: 'drn_bytes', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: Buffer.from(record), recordId: 'b1', bytes: Buffer.byteLength(record), scrubHits: 1 },
      { drainId: 'drn_bytes', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: Buffer.from('{"i":\n2,\u001e"j":3}'), recordId: 'b2', bytes: 13, scrubHits: 0 },
      { drainId: 'drn_bytes', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: 'text beside bytes', recordId: 'b3', bytes: 17, scrubHits: 0 },
      // A view into a larger buffer, as an entry's bytes are a view of its slab.
      { drainId: 'drn_bytes', orgId: 'org_acme', resourceJson: '{"a":1}', recordJson: Buffer.from('xx{"v":"é"}yy').subarray(2, 2 + Buffer.byteLength('{"v":"é"}')), recordId: 'b4', bytes: 10, scrubHits: 0 },
    ];
    await store.backlog.park(withBuckets(rows));
    const { rows: got } = await store.backlog.roundRead('drn_bytes', (await store.backlog.lastId('drn_bytes'))!, undefined, 10);
    const byId = new Map(got.map((r) => [r.recordId, r]));
    expect(byId.get('b1')).toMatchObject({ recordJson: record, bytes: Buffer.byteLength(record), scrubHits: 1 });
    expect(JSON.parse(byId.get('b2')!.recordJson)).toEqual({ i: 2, j: 3 });
    expect(byId.get('b3')!.recordJson).toBe('text beside bytes');
    expect(byId.get('b4')!.recordJson).toBe('{"v":"é"}');
  });

  it('reads array literals made in one join as the arrays they were made from', async () => {
    const texts = ['plain', '', 'NULL', 'a,b', '{x}', 'q"uote', 'back\\slash', ' spaced ', 'é ✓ 😀', 'line\nbreak'];
    for (const values of [texts, texts.filter((t) => !/["\\]/.test(t)), []]) {
      const rows = await store.sql.query<{ a: string[] }>('select $1::text[] as a', [textArrayLiteral(values)]);
      expect(rows[0]!.a).toEqual(values);
    }
    const ints = [0, -1, 2_147_483_647, 42];
    const got = await store.sql.query<{ a: number[]; n: number }>('select $1::int[] as a, cardinality($1::int[]) as n', [intArrayLiteral(ints)]);
    expect(got[0]!.a).toEqual(ints);
    expect((await store.sql.query<{ n: number }>('select cardinality($1::bigint[]) as n', [intArrayLiteral([])]))[0]!.n).toBe(0);
  });

  it('keeps an embedded queue with a committed cursor and trims what was passed', async () => {
    await store.queue.enqueue([
      { orgId: 'org_acme', payload: '{"a":1}' },
      { orgId: 'org_acme', payload: '{"a":2}' },
      { orgId: 'org_acme', payload: '{"a":3}' },
    ]);
    const c0 = await store.queue.cursor('w');
    const got = await store.queue.readAfter(c0, 2);
    expect(got.map((m) => m.payload)).toEqual(['{"a":1}', '{"a":2}']);
    await store.queue.commit('w', got[1]!.seq);
    expect(await store.queue.cursor('w')).toBe(got[1]!.seq);
    const rest = await store.queue.readAfter(await store.queue.cursor('w'), 10);
    expect(rest.map((m) => m.payload)).toEqual(['{"a":3}']);
    const left = await store.sql.query<{ n: number }>('select count(*)::int as n from ingest_queue');
    expect(left[0]!.n).toBe(1);
  });

  it('consumes a verification token once and only before it expires', async () => {
    const now = new Date();
    await store.verifications.insert({ id: 'v1', drainId: 'drn_v', tokenHash: 'h', createdAt: now, expiresAt: new Date(now.getTime() + 600_000) });
    await store.verifications.insert({ id: 'v2', drainId: 'drn_v', tokenHash: 'h', createdAt: now, expiresAt: new Date(now.getTime() - 1) });
    expect(await store.verifications.consume('v1')).toBe(true);
    expect(await store.verifications.consume('v1')).toBe(false);
    expect(await store.verifications.consume('v2')).toBe(false);
    expect(await store.verifications.countSince('drn_v', new Date(now.getTime() - 3_600_000))).toBe(2);
  });

  it('seals secrets so the stored form never holds the plain text', () => {
    const sealed = store.secretBox.seal('whsec_top-secret');
    expect(sealed).not.toContain('top-secret');
    expect(store.secretBox.open(sealed)).toBe('whsec_top-secret');
  });

  it('records dead letters with a bounded payload', async () => {
    await store.deadLetters.insertMany([{ source: 'kafka', reason: 'not JSON', payload: 'x'.repeat(10_000) }]);
    const [letter] = await store.deadLetters.recent(1);
    expect(letter!.payload.length).toBe(4096);
    expect(await store.deadLetters.count()).toBeGreaterThanOrEqual(1);
  });
});
