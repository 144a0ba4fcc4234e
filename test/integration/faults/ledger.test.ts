/**
 * The ledger the fault tests end with can fail: a record neither received nor
 * named by a dropped delivery record is reported missing, one never produced
 * is reported unexpected, and dropped record ids are stored with their reason
 * on both stores (they expire with their delivery row, never in the public
 * read form). Through the real engine, the quota ladder's drops and a
 * destination's final refusal (410) name every record they drop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS } from '../../helpers/stores.js';
import { ledgerOf, receivedRecordIds } from '../../helpers/ledger.js';
import type { Store } from '../../../src/store/store.js';
import { droppedEntry } from '../../../src/account/entries.js';
import { deliveryReadForm } from '../../../src/modules/drains/read-form.js';
import type { ReceivedRequest } from '../../../src/devtools/https-receiver.js';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, records } from '../../helpers/records.js';

const drain = { id: 'drn_ledger', orgId: 'org_acme' };

function ndjsonRequest(path: string, ids: string[], event = 'svc.tool.call'): ReceivedRequest {
  const body = Buffer.from(ids.map((id) => JSON.stringify({ schemaUrl: 's', batchId: 'b1', resource: {}, id, eventName: event })).join('\n'));
  return { method: 'POST', path, headers: { 'content-type': 'application/x-ndjson' }, body, rawBody: body, receivedAt: 0, status: 200 } as ReceivedRequest;
}

describe.each(STORE_KINDS)('the fault ledger on $name', (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ store, dispose } = await kind.open());
    const quota = droppedEntry(drain, ['r3', 'r4'], 'quota', 0, new Date(Date.now() - 2000));
    const horizon = droppedEntry(drain, ['r4', 'r5'], 'horizon', 0);
    const other = droppedEntry({ id: 'drn_other', orgId: 'org_acme' }, ['r6'], 'http_4xx', 2);
    await store.deliveries.insertMany([...quota.deliveries, ...horizon.deliveries, ...other.deliveries]);
  });
  afterAll(async () => dispose());

  it('stores each dropped record id with its reason, and keeps them out of the public read form', async () => {
    expect(await store.deliveries.droppedRecords(drain.id)).toEqual([
      { reason: 'quota', recordIds: ['r3', 'r4'] },
      { reason: 'horizon', recordIds: ['r4', 'r5'] },
    ]);
    const [row] = await store.deliveries.page(drain.id, { limit: 1 });
    expect(row).toMatchObject({ kind: 'dropped', recordCount: 2, firstRecordId: 'r4', lastRecordId: 'r5' });
    expect(Object.keys(deliveryReadForm(row!))).not.toContain('recordIds');
  });

  it('accepts records received or dropped, counting duplicates and reasons', async () => {
    const received = receivedRecordIds([ndjsonRequest('/a', ['r1', 'r2']), ndjsonRequest('/a', ['r2']), ndjsonRequest('/b', ['r9'])], '/a');
    const report = await ledgerOf({ drainId: drain.id, produced: ['r1', 'r2', 'r3', 'r4', 'r5'], received, sql: store.sql });
    expect(report).toEqual({
      label: drain.id, produced: 5, received: 2, droppedByReason: { quota: 2, horizon: 2 },
      duplicates: 2, missing: [], unexpected: [],
    });
  });

  it('reports a record neither received nor dropped as missing, and one never produced as unexpected', async () => {
    const received = receivedRecordIds([ndjsonRequest('/a', ['r1', 'stray']), ndjsonRequest('/a', ['hb'], 'svc.drain.heartbeat')]);
    const report = await ledgerOf({ drainId: drain.id, produced: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'], received, sql: store.sql });
    // r6 was dropped, but for another drain: it does not count for this one. Heartbeats are the platform's own.
    expect(report.missing).toEqual(['r2', 'r6']);
    expect(report.unexpected).toEqual(['stray']);
  });
});

describe('dropped records through the real engine name every record', () => {
  const ORG = '/admin/orgs/org_acme/log-drains';
  const T = 'lk_acme_manage';
  let app: TestApp;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    // The /gone destination refuses every batch for good (410: final, dropped at the first attempt).
    receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify'] || r.path !== '/gone') return false;
      res.writeHead(410).end('gone');
      return true;
    });
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, BATCH_LINGER_MS: '30', DRAIN_QUOTA_EVENTS_PER_DAY: '100',
      HEARTBEAT_INTERVAL_MS: '0',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  async function verifiedDrain(path: string): Promise<string> {
    const res = await app.request('POST', ORG, { token: T, body: { name: path.slice(1), type: 'http', endpoint: `${receiver.url}${path}`, minSeverity: 'debug' } });
    expect(res.status).toBe(201);
    await app.request('POST', `${ORG}/${res.body.id}/verify`, { token: T });
    await waitFor(async () => (await app.request('GET', `${ORG}/${res.body.id}`, { token: T })).body.state === 'healthy', { what: 'healthy' });
    return res.body.id as string;
  }

  it('balances a drain whose debug records the quota ladder drops, and one whose destination refuses everything', async () => {
    const quotaDrain = await verifiedDrain('/quota');
    const goneDrain = await verifiedDrain('/gone');
    const first = records(85, { severity: 'info' });
    await ingest(app, first);
    // Past 80% of the quota: the ladder drops debug records of the drain that delivered.
    await waitFor(async () => (await app.request('GET', `${ORG}/${quotaDrain}`, { token: T })).body.quota.degradation === 'drop_debug', { what: 'drop_debug' });
    await new Promise((r) => setTimeout(r, 300)); // the worker reads usage every DRAIN_REFRESH_MS
    const debug = records(5, { severity: 'debug' });
    const info = records(5, { severity: 'info' });
    await ingest(app, [...debug, ...info]);
    const produced = [...first, ...debug, ...info].map((r) => r.id);
    const received = () => receivedRecordIds(receiver.accepted(), '/quota');

    const quota = await waitFor(async () => {
      const r = await ledgerOf({ drainId: quotaDrain, produced, received: received(), sql: app.store.sql, label: 'quota' });
      return r.missing.length === 0 ? r : undefined;
    }, { what: 'the quota drain to settle' });
    expect(quota).toMatchObject({ received: 90, droppedByReason: { quota: 5 }, unexpected: [] });
    const gone = await waitFor(async () => {
      const r = await ledgerOf({ drainId: goneDrain, produced, received: receivedRecordIds(receiver.accepted(), '/gone'), sql: app.store.sql, label: 'gone' });
      return r.missing.length === 0 ? r : undefined;
    }, { what: 'the refusing drain to settle' });
    expect(gone).toMatchObject({ received: 0, droppedByReason: { http_4xx: produced.length }, unexpected: [] });
    // Which records the ladder dropped: exactly the debug ones.
    const dropped = (await app.store.deliveries.droppedRecords(quotaDrain)).flatMap((d) => d.recordIds);
    expect(dropped.sort()).toEqual(debug.map((r) => r.id).sort());
  });
});
