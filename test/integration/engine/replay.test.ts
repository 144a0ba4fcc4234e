/**
 * Drain replays (docs/delivery.md#replays), end to end to the HTTPS receiver on loopback: a window
 * of the platform copy sent again through the drain as it is configured now, as new batches of the
 * same records marked `Logdrain-Replay` and `kind: replay` in the ledger; cancelled; one at a time
 * per drain; refused for a drain that delivers nothing; live records delivered while one runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { parseBatch, startReceiver, verifySignature, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, records } from '../../helpers/records.js';

const ORG = '/admin/orgs/org_acme/log-drains';
const T = 'lk_acme_manage';

describe('drain replays', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  /** Paths whose replay batches are answered 503 (retried: the replay stays running). */
  const refusingReplays = new Set<string>();
  /** Paths whose replay batches are answered after this many ms. */
  const slowReplays = new Map<string, number>();

  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify'] || r.headers['logdrain-replay'] === undefined) return false;
      if (refusingReplays.has(r.path)) {
        res.writeHead(503, { 'retry-after': '0' }).end('busy');
        return true;
      }
      const delay = slowReplays.get(r.path);
      if (delay === undefined) return false;
      setTimeout(() => res.writeHead(200).end(), delay);
      return true;
    });
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, REPLAY_POLL_MS: '50',
      RETRY_BASE_MS: '50', RETRY_MAX_MS: '100', BATCH_LINGER_MS: '50', BATCH_MAX_RECORDS: '25',
      DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000', DRAIN_REPLAY_RATE_LIMIT_PER_HOUR: '1000',
      HEARTBEAT_INTERVAL_MS: '0',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  const at = (path: string) => receiver.batches().filter((r) => r.path === path);
  const live = (path: string) => at(path).filter((r) => r.headers['logdrain-replay'] === undefined);
  const replayed = (path: string, replayId: string) => receiver.accepted().filter((r) => r.path === path && r.headers['logdrain-replay'] === replayId);
  const idsOf = (rs: ReturnType<typeof at>) => rs.flatMap((r) => parseBatch(r).records.map((x) => x.id));
  const get = async (id: string) => (await app.request('GET', `${ORG}/${id}`, { token: T })).body;

  async function create(path: string, extra: Record<string, unknown> = {}) {
    const res = await app.request('POST', ORG, { token: T, body: { name: path.slice(1), type: 'http', endpoint: `${receiver.url}${path}`, format: 'ndjson', ...extra } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { id: res.body.id as string, secret: res.body.secret as string };
  }
  async function verified(path: string, extra: Record<string, unknown> = {}) {
    const d = await create(path, extra);
    await app.request('POST', `${ORG}/${d.id}/verify`, { token: T });
    await waitFor(async () => (await get(d.id)).state === 'healthy', { what: 'healthy' });
    return d;
  }
  const replay = (drainId: string, body: unknown) => app.request('POST', `${ORG}/${drainId}/replays`, { token: T, body });
  const readReplay = async (drainId: string, replayId: string) => (await app.request('GET', `${ORG}/${drainId}/replays/${replayId}`, { token: T })).body;
  const ended = (drainId: string, replayId: string, timeoutMs = 30_000) =>
    waitFor(async () => {
      const r = await readReplay(drainId, replayId);
      return ['completed', 'cancelled', 'failed'].includes(r.status) ? r : undefined;
    }, { what: 'the replay to end', timeoutMs });
  /** A window around what a test ingests: from a moment before it, to a minute ahead (taken as now). */
  const windowFrom = (since: Date) => ({ since: since.toISOString(), until: new Date(Date.now() + 60_000).toISOString() });
  const stored = (ids: readonly string[]) =>
    waitFor(async () => {
      const rows = await app.store.sql.query<{ n: number }>('select count(*)::int as n from agent_logs where id = any($1::text[])', [ids]);
      return rows[0]!.n === ids.length;
    }, { what: 'the platform copy written' });

  it('re-sends the window through the drain\'s current selectors and redaction: same record ids, new batch ids, the header, kind replay', async () => {
    const path = '/replay-e2e';
    const { id, secret } = await verified(path);
    const since = new Date(Date.now() - 1000);
    const infos = records(30, { severity: 'info', attributes: { token: 'keep-me', n: 1 } });
    const warns = records(30, { severity: 'warn', attributes: { token: 'keep-me', n: 2 } });
    await ingest(app, [...infos, ...warns]);
    await waitFor(() => idsOf(live(path)).length === 60, { what: 'live delivery' });
    await stored([...infos, ...warns].map((r) => r.id));
    const liveBatchIds = new Set(live(path).map((r) => parseBatch(r).batchId));

    // The drain as it is now decides what a replay sends: warn and up only, `token` redacted.
    const patched = await app.request('PATCH', `${ORG}/${id}`, { token: T, body: { minSeverity: 'warn', redact: ['token'] } });
    expect(patched.status).toBe(200);

    const res = await replay(id, windowFrom(since));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.id).toMatch(/^rpl_[0-9a-z]{26}$/);
    expect(res.body.status).toBe('queued');
    const replayId = res.body.id as string;

    const done = await ended(id, replayId);
    expect(done.status).toBe('completed');
    expect(done.progress).toMatchObject({ recordsTotal: 60, recordsRead: 60, recordsSent: 30 });
    expect(done.progress.batchesSent).toBeGreaterThanOrEqual(2);
    expect(done.progress.position.recordId).toEqual(expect.any(String));
    expect(done.endedAt).not.toBeNull();

    const sent = replayed(path, replayId);
    expect(sent.length).toBe(done.progress.batchesSent);
    expect(new Set(idsOf(sent))).toEqual(new Set(warns.map((r) => r.id)));
    expect(idsOf(sent)).toHaveLength(30);
    for (const r of sent) {
      const batch = parseBatch(r);
      expect(liveBatchIds.has(batch.batchId)).toBe(false);
      verifySignature(r, secret);
      for (const rec of batch.records) expect(JSON.stringify(rec)).not.toContain('keep-me');
    }

    const ledger = (await app.request('GET', `${ORG}/${id}/deliveries?kind=replay&limit=100`, { token: T })).body.deliveries as { batchId: string; ok: boolean; kind: string }[];
    expect(ledger.length).toBe(sent.length);
    expect(new Set(ledger.map((d) => d.batchId))).toEqual(new Set(sent.map((r) => parseBatch(r).batchId)));
    expect(ledger.every((d) => d.ok && d.kind === 'replay')).toBe(true);

    const listed = (await app.request('GET', `${ORG}/${id}/replays`, { token: T })).body;
    expect(listed.replays.map((r: { id: string }) => r.id)).toEqual([replayId]);
    const audit = (await app.request('GET', `/admin/orgs/org_acme/log-drains-audit?drainId=${id}&action=logs.drain.replay_requested`, { token: T })).body;
    expect(audit.entries).toHaveLength(1);
    expect(audit.entries[0].details).toMatchObject({ replayId });
  });

  it('holds one replay not ended per drain, and cancels one: the worker stops sending', async () => {
    const path = '/replay-cancel';
    const { id } = await verified(path);
    const since = new Date(Date.now() - 1000);
    const sent = records(10);
    await ingest(app, sent);
    await stored(sent.map((r) => r.id));
    refusingReplays.add(path);

    const first = await replay(id, windowFrom(since));
    expect(first.status).toBe(202);
    const replayId = first.body.id as string;
    await waitFor(async () => at(path).some((r) => r.headers['logdrain-replay'] === replayId), { what: 'a replay attempt' });
    expect((await readReplay(id, replayId)).status).toBe('running');

    const second = await replay(id, windowFrom(since));
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('DRAIN_REPLAY_IN_PROGRESS');
    expect(second.body.replayId).toBe(replayId);

    const cancel = await app.request('DELETE', `${ORG}/${id}/replays/${replayId}`, { token: T });
    expect(cancel.status).toBe(200);
    expect(cancel.body.status).toBe('cancelled');
    // The worker learns of it at its next write: no attempt after the one under way.
    await new Promise((r) => setTimeout(r, 300));
    const attempts = at(path).filter((r) => r.headers['logdrain-replay'] === replayId).length;
    await new Promise((r) => setTimeout(r, 500));
    expect(at(path).filter((r) => r.headers['logdrain-replay'] === replayId).length).toBe(attempts);
    expect((await readReplay(id, replayId)).status).toBe('cancelled');

    const again = await app.request('DELETE', `${ORG}/${id}/replays/${replayId}`, { token: T });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('DRAIN_REPLAY_ENDED');
    const audit = (await app.request('GET', `/admin/orgs/org_acme/log-drains-audit?drainId=${id}&action=logs.drain.replay_cancelled`, { token: T })).body;
    expect(audit.entries).toHaveLength(1);

    // Ended: the drain takes a new one.
    refusingReplays.delete(path);
    const third = await replay(id, windowFrom(since));
    expect(third.status).toBe(202);
    expect((await ended(id, third.body.id)).status).toBe('completed');
  });

  it('refuses a drain not verified, and a paused one', async () => {
    const unverified = await create('/replay-unverified');
    const r1 = await replay(unverified.id, { since: '1h', until: '0s' });
    expect(r1.status).toBe(409);
    expect(r1.body.code).toBe('DRAIN_NOT_VERIFIED');

    const { id } = await verified('/replay-paused');
    await app.request('POST', `${ORG}/${id}/pause`, { token: T });
    const r2 = await replay(id, { since: '1h', until: '0s' });
    expect(r2.status).toBe(409);
    expect(r2.body.code).toBe('DRAIN_NOT_DELIVERING');
    expect(r2.body.state).toBe('paused');
  });

  it('delivers live records while a replay runs: a replay never starves the drain', async () => {
    const path = '/replay-live';
    const { id } = await verified(path);
    const since = new Date(Date.now() - 1000);
    const old = records(400);
    await app.writeRaw(old.map((r) => ({ orgId: r.orgId, payload: JSON.stringify(r) })));
    await waitFor(() => idsOf(live(path)).length === 400, { what: 'the first delivery', timeoutMs: 30_000 });
    await stored(old.map((r) => r.id));
    // Each replay batch takes 150 ms to answer: 16 batches, well over two seconds.
    slowReplays.set(path, 150);
    const res = await replay(id, windowFrom(since));
    expect(res.status).toBe(202);
    const replayId = res.body.id as string;
    await waitFor(() => replayed(path, replayId).length >= 1, { what: 'the replay under way' });

    const fresh = records(50);
    const t0 = Date.now();
    await ingest(app, fresh);
    await waitFor(() => idsOf(live(path)).filter((x) => fresh.some((f) => f.id === x)).length === 50, { what: 'live records during the replay' });
    const liveMs = Date.now() - t0;
    // The live records arrived while the replay was still sending.
    expect((await readReplay(id, replayId)).status).toBe('running');
    expect(liveMs).toBeLessThan(2000);

    const done = await ended(id, replayId, 60_000);
    expect(done.status).toBe('completed');
    // The replay's window closed when it was requested: the fresh records are not in it.
    expect(new Set(idsOf(replayed(path, replayId)))).toEqual(new Set(old.map((r) => r.id)));
  });
});
