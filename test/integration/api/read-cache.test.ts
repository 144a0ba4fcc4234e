/**
 * The kernel's read caches (api/kernel/read-cache.ts): an entry answers until a unit of work that
 * writes its topic commits, in the same process at once and, on Postgres, in another API process
 * on that commit's notification; the SIP trunk list, which answers from one, follows the trunk
 * writes of its own process at once and another process's soon after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/store/store.js';
import { familyMigrations } from '../../../src/modules/index.js';
import { createReadCaches, type ReadCaches } from '../../../src/api/kernel/read-cache.js';
import { topicEpoch } from '../../../src/store/change-epochs.js';
import { TRUNKS_TOPIC } from '../../../src/modules/telephony/trunks/service.js';
import { startApi, type TestApi } from '../../helpers/api-app.js';
import { SEED_FIXTURE, waitFor } from '../../helpers/app.js';
import { twoApisOnOneDatabase } from '../../helpers/two-apis.js';
import { startTelephonyApi, TELEPHONY_SEED } from '../../helpers/telephony.js';

const TRUNKS = '/developer/orgs/org_acme/sip-trunks';
const KEY = 'lk_acme_legacy';
type TrunkList = { trunks: { id: string; acl: { ip: string }[] }[]; count: number };
const SEARCH = '/developer/phone-numbers/available?country=US&limit=5';
const ACME_NUMBERS = '/developer/orgs/org_acme/phone-numbers';
const TEL_KEY = 'lk_tel_all';
type Search = { numbers: { msisdn: string }[] };

describe('a read cache on the embedded store', () => {
  let store: Store;
  let caches: ReadCaches;
  beforeAll(async () => {
    store = await openStore({ dataDir: 'memory://', migrations: familyMigrations });
    caches = await createReadCaches(store.sql);
    await store.sql.query('create table read_cache_rows (n int not null)');
  });
  afterAll(async () => {
    await caches?.stop();
    await store?.close();
  });

  it('answers its entry until a unit of work of its topic commits, then reads again', async () => {
    const topic = 'test.rows';
    // An age far beyond the test: only the topic's counter can make it read again.
    const cache = caches.cache<number>(topic, { maxAgeMs: 600_000 });
    let reads = 0;
    const read = async () => {
      reads++;
      return (await store.sql.query<{ n: number }>('select coalesce(sum(n), 0)::int as n from read_cache_rows'))[0]!.n;
    };
    expect(await cache.get('sum', read)).toBe(0);
    // A write that names no topic is not seen: the entry answers.
    await store.sql.query('insert into read_cache_rows values (1)');
    expect(await cache.get('sum', read)).toBe(0);
    // Nor one that rolled back, nor another topic's.
    await expect(store.unitOfWork(async (tx) => {
      await tx.sql.query('insert into read_cache_rows values (10)');
      tx.changed(topic);
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    await store.unitOfWork(async (tx) => tx.changed('test.other'));
    expect(await cache.get('sum', read)).toBe(0);
    expect(reads).toBe(1);
    // One that committed: the next read goes to the store and sees both rows.
    await store.unitOfWork(async (tx) => {
      await tx.sql.query('insert into read_cache_rows values (2)');
      tx.changed(topic);
    });
    expect(await cache.get('sum', read)).toBe(3);
    expect(await cache.get('sum', read)).toBe(3);
    expect(reads).toBe(2);
  });
});

describe('the SIP trunk list within one API', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({});
  });
  afterAll(async () => api?.stop());

  it('shows each write of the API at once', async () => {
    const list = async () => (await api.request('GET', TRUNKS, { token: KEY })).body as TrunkList;
    const before = await list();
    const created = await api.request('POST', TRUNKS, { token: KEY, body: { acl: ['192.0.2.10/32'] } });
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    expect((await list()).trunks.map((t) => t.id)).toEqual([...before.trunks.map((t) => t.id), id]);
    expect((await api.request('POST', `${TRUNKS}/${id}/acl`, { token: KEY, body: { ip: '198.51.100.0/24' } })).status).toBeLessThan(300);
    expect((await list()).trunks.find((t) => t.id === id)!.acl.map((a) => a.ip)).toEqual(['192.0.2.10/32', '198.51.100.0/24']);
    expect((await api.request('DELETE', `${TRUNKS}/${id}`, { token: KEY })).status).toBeLessThan(300);
    expect((await list()).trunks.map((t) => t.id)).toEqual(before.trunks.map((t) => t.id));
  });
});

describe('the phone number search within one API', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTelephonyApi();
  });
  afterAll(async () => api?.stop());

  it('leaves out a number bought through the API at once, and offers it again once released', async () => {
    const search = async () => ((await api.request('GET', SEARCH, { token: TEL_KEY })).body as Search).numbers.map((n) => n.msisdn);
    const before = await search();
    // Asked again: the owned numbers of these candidates come from the cache.
    expect(await search()).toEqual(before);
    const msisdn = before[0]!;
    expect((await api.request('POST', ACME_NUMBERS, { token: TEL_KEY, body: { msisdn } })).status).toBe(201);
    const after = await search();
    expect(after).not.toContain(msisdn);
    expect(after.slice(0, 4)).toEqual(before.slice(1));
    expect((await api.request('POST', `${ACME_NUMBERS}/${msisdn}/suspend`, { token: TEL_KEY })).status).toBe(201);
    expect(await search()).not.toContain(msisdn);
    expect((await api.request('POST', `${ACME_NUMBERS}/${msisdn}/reactivate`, { token: TEL_KEY })).status).toBe(201);
    expect((await api.request('DELETE', `${ACME_NUMBERS}/${msisdn}`, { token: TEL_KEY })).status).toBe(200);
    expect(await search()).toEqual(before);
  });
});

describe('across API processes on Postgres', () => {
  const apis = twoApisOnOneDatabase({ other: (db) => ({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, SEED_FILE: SEED_FIXTURE, LOG_LEVEL: 'silent' }) });

  const createThere = async (ip: string): Promise<string> => {
    const res = await fetch(`${apis.other.base}${TRUNKS}`, {
      method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ acl: [ip] }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };

  it("drops an entry on another process's commit, which moved nothing in this one", async () => {
    const cache = apis.caches.cache<number>(TRUNKS_TOPIC, { maxAgeMs: 600_000 });
    const count = async () => (await apis.app.store.sql.query<{ n: number }>("select count(*)::int as n from telephony_sip_trunks where status <> 'deleted'"))[0]!.n;
    const before = await cache.get('count', count);
    const epoch = topicEpoch(TRUNKS_TOPIC);
    await createThere('192.0.2.20/32');
    await waitFor(async () => (await cache.get('count', count)) === before + 1, { timeoutMs: 10_000, what: "the other process's trunk in the cached count" });
    expect(topicEpoch(TRUNKS_TOPIC)).toBe(epoch);
  });

  it('caches nothing when told not to listen (a pooler that cannot LISTEN): every read goes to the store', async () => {
    const unlistened = await createReadCaches(apis.app.store.sql, { listen: false });
    try {
      const cache = unlistened.cache<number>(TRUNKS_TOPIC, { maxAgeMs: 600_000 });
      let reads = 0;
      const read = async () => ++reads;
      expect(await cache.get('k', read)).toBe(1);
      expect(await cache.get('k', read)).toBe(2);
    } finally {
      await unlistened.stop();
    }
  });

  it("shows another process's trunk writes in the list", async () => {
    const list = async () => (await apis.app.request('GET', TRUNKS, { token: KEY })).body as TrunkList;
    const before = await list();
    // Read twice: the second answer is the cached one.
    expect((await list()).count).toBe(before.count);
    const id = await createThere('192.0.2.30/32');
    await waitFor(async () => (await list()).trunks.some((t) => t.id === id), { timeoutMs: 10_000, what: "the other process's trunk in the list" });
    expect((await list()).count).toBe(before.count + 1);
  });
});

describe('the phone number search across API processes on Postgres', () => {
  const apis = twoApisOnOneDatabase({
    app: { SEED_FILE: TELEPHONY_SEED },
    other: (db) => ({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, SEED_FILE: TELEPHONY_SEED, LOG_LEVEL: 'silent' }),
  });

  it("leaves out a number another process bought", async () => {
    const search = async () => ((await apis.app.request('GET', SEARCH, { token: TEL_KEY })).body as Search).numbers.map((n) => n.msisdn);
    const before = await search();
    expect(await search()).toEqual(before);
    const msisdn = before[0]!;
    const bought = await fetch(`${apis.other.base}${ACME_NUMBERS}`, {
      method: 'POST', headers: { authorization: `Bearer ${TEL_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ msisdn }),
    });
    expect(bought.status).toBe(201);
    await waitFor(async () => !(await search()).includes(msisdn), { timeoutMs: 10_000, what: "the other process's purchase left out of the search" });
  });
});
