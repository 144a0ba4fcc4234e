/**
 * MAX_IN_FLIGHT_RECORDS counts records held in open batches. When the worker
 * stops reading at the cap, it sends its fullest open batches (at least half
 * the open records) rather than let them linger: otherwise a cap below what
 * the open batches can hold stalls the stream for a whole BATCH_LINGER_MS at a
 * time (here ten minutes: forever). The batches left open keep filling; when
 * the records stop coming, the last of them wait for the linger like any open
 * batch at the end of a stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, record } from '../../helpers/records.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('the in-flight cap', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, HEARTBEAT_INTERVAL_MS: '0',
      MAX_IN_FLIGHT_RECORDS: '100', BATCH_LINGER_MS: '600000', BATCH_MAX_RECORDS: '1000',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  it('sends open batches when reading stops at the cap, so the stream never waits for the linger', async () => {
    const created = await app.request('POST', ORG, { token: T, body: { name: 'cap', type: 'http', endpoint: `${receiver.url}/cap`, format: 'ndjson', minSeverity: 'debug' } });
    await app.request('POST', `${ORG}/${created.body.id}/verify`, { token: T });
    await waitFor(async () => (await app.request('GET', `${ORG}/${created.body.id}`, { token: T })).body.state === 'healthy', { what: 'healthy' });
    // Four agents: four open batches, none ever full (1,000 records a batch, 100 in flight at most).
    const sent = Array.from({ length: 1000 }, (_, i) => record({ agentId: `agt_cap_${i % 4}`, agentName: `cap-${i % 4}` }));
    for (let i = 0; i < sent.length; i += 50) await ingest(app, sent.slice(i, i + 50));
    const ids = () => receiver.batches().filter((r) => r.path === '/cap').flatMap((r) => parseBatch(r).records.map((x) => x.id));
    // Five times the cap and more, sent without waiting for the linger; what the last cap left open may wait for it.
    await waitFor(() => ids().length >= 500, { what: 'records past the cap delivered', timeoutMs: 30_000 });
    // Every agent's records in order.
    for (let a = 0; a < 4; a++) {
      const mine = new Set(sent.filter((r) => r.agentId === `agt_cap_${a}`).map((r) => r.id));
      const got = ids().filter((id) => mine.has(id));
      expect(got).toEqual([...mine].slice(0, got.length));
    }
  });
});
