/**
 * The SSRF battery through the running service: every forbidden notation is refused when a
 * drain is created or edited (422 DRAIN_ENDPOINT_INVALID, spec 01 part 7.3), and again when a
 * delivery connects (errorClass `ssrf`, final, records dropped, no connection made), including a
 * host that passes the create-time check and later resolves to loopback (DNS rebinding). Redirects
 * are answered with http_3xx and never followed.
 *
 * Safety: the only listeners are loopback receivers. Two wire-level fakes sit under the service:
 *  - the process resolver (`dns.lookup`, `dns.promises.lookup`) answers a table of test names, so a
 *    name can "resolve" to a private address without any DNS traffic;
 *  - a tripwire on `net.Socket.prototype.connect` records every connection attempt and turns any
 *    attempt at a non-loopback address into an error before a packet is sent, recording it as a
 *    leak. A broken guard therefore fails the test (leaks are asserted empty) instead of sending
 *    traffic to a private or metadata address.
 */
import dns from 'node:dns';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { ingest, record } from '../../helpers/records.js';
import type { DeliveryRecord } from '../../../src/model/delivery.js';

const ORG_ID = 'org_acme';
const ORG = `/admin/orgs/${ORG_ID}/log-drains`;
const T = 'lk_acme_manage';

/** Loopback check written independently of the guard under test. */
const isLoopbackLiteral = (ip: string): boolean => {
  const a = ip.replace(/^\[|\]$/g, '').toLowerCase();
  return a.startsWith('127.') || a === '::1' || a.startsWith('::ffff:127.') || a === '0:0:0:0:0:0:0:1';
};

/** A dial: the host asked for, and the address the socket was about to connect to. */
interface Attempt {
  host: string;
  address: string;
  port: number;
}

/** The tripwire described above; returns what it saw and how to remove it. */
function installConnectTripwire() {
  const original = net.Socket.prototype.connect;
  const attempts: Attempt[] = [];
  const leaks: string[] = [];
  const refuse = (socket: net.Socket, what: string) => {
    leaks.push(what);
    process.nextTick(() => socket.destroy(Object.assign(new Error(`tripwire: connection to ${what} stopped`), { code: 'ERR_TEST_TRIPWIRE' })));
    return socket;
  };
  net.Socket.prototype.connect = function patched(this: net.Socket, ...args: unknown[]) {
    const o = args[0];
    if (o && typeof o === 'object' && !Array.isArray(o) && !(o as net.IpcNetConnectOpts).path) {
      const opts = o as net.TcpNetConnectOpts;
      const host = String(opts.host ?? 'localhost');
      const port = Number(opts.port);
      if (net.isIP(host.replace(/^\[|\]$/g, '')) !== 0) {
        if (!isLoopbackLiteral(host)) return refuse(this, host);
        attempts.push({ host, address: host, port });
      } else {
        const inner = opts.lookup ?? dns.lookup;
        const lookup: net.LookupFunction = (hostname, lo, cb) => {
          inner(hostname, lo, (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => {
            const list = err ? [] : Array.isArray(address) ? address.map((x) => x.address) : [address];
            const outside = list.filter((a) => !isLoopbackLiteral(a));
            if (outside.length > 0) {
              leaks.push(`${hostname} -> ${outside.join(',')}`);
              cb(Object.assign(new Error('tripwire: non-loopback address'), { code: 'ERR_TEST_TRIPWIRE' }), Array.isArray(address) ? [] : '');
              return;
            }
            for (const a of list) attempts.push({ host: hostname, address: a, port });
            (cb as (e: unknown, a: unknown, f?: number) => void)(err, address, family);
          });
        };
        args[0] = { ...opts, lookup };
      }
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  return { attempts, leaks, remove: () => void (net.Socket.prototype.connect = original) };
}

/**
 * The process resolver answering a table of test names (anything else goes to the real resolver,
 * which is only ever asked for `localhost`). Each entry is a function of how many times the name
 * was resolved before, so a name can change its answer (rebinding).
 */
function installFakeResolver(table: Record<string, (n: number) => string[]>) {
  const realLookup = dns.lookup;
  const realPromiseLookup = dns.promises.lookup;
  const resolutions: Record<string, number> = {};
  const answer = (host: string): string[] | undefined => {
    const key = host.toLowerCase().replace(/\.$/, '');
    const entry = table[key];
    if (!entry) return undefined;
    const n = resolutions[key] ?? 0;
    resolutions[key] = n + 1;
    return entry(n);
  };
  const asRecords = (list: string[]) => list.map((address) => ({ address, family: net.isIP(address) }));
  (dns as { lookup: unknown }).lookup = (host: string, opts: unknown, cb?: unknown) => {
    const callback = (typeof opts === 'function' ? opts : cb) as (e: unknown, a: unknown, f?: number) => void;
    const o = (typeof opts === 'object' && opts !== null ? opts : {}) as dns.LookupOptions;
    const list = answer(host);
    if (!list) return (realLookup as (...a: unknown[]) => void)(host, opts, cb);
    process.nextTick(() => (o.all ? callback(null, asRecords(list)) : callback(null, list[0], net.isIP(list[0]!))));
  };
  (dns.promises as { lookup: unknown }).lookup = async (host: string, opts?: dns.LookupOptions) => {
    const list = answer(host);
    if (!list) return realPromiseLookup(host, opts ?? {});
    return opts?.all ? asRecords(list) : asRecords(list)[0];
  };
  return {
    resolutions,
    remove: () => {
      (dns as { lookup: unknown }).lookup = realLookup;
      (dns.promises as { lookup: unknown }).lookup = realPromiseLookup;
    },
  };
}

/** Names the fake resolver knows: each maps to a forbidden address (or, for `rebind`, changes its mind). */
const FAKE_DNS: Record<string, (n: number) => string[]> = {
  'private.example.test': () => ['10.0.0.1'],
  'cgnat.example.test': () => ['100.64.0.1'],
  'meta.example.test': () => ['169.254.169.254'],
  'meta6.example.test': () => ['fd00:ec2::254'],
  'ula.example.test': () => ['fc00::1'],
  'linklocal6.example.test': () => ['fe80::1'],
  'mapped.example.test': () => ['::ffff:127.0.0.1'],
  'nat64.example.test': () => ['64:ff9b::a00:1'],
  'sixtofour.example.test': () => ['2002:7f00:1::'],
  'zero.example.test': () => ['0.0.0.0'],
  'mixed.example.test': () => ['93.184.216.34', '10.0.0.1'],
  // Public-looking at the first resolution (the create-time check), loopback from then on.
  'rebind.example.test': (n) => (n === 0 ? ['93.184.216.34'] : ['127.0.0.1']),
};

describe('SSRF battery', () => {
  let app: TestApp;
  let receiver: HttpsReceiver;
  let second: HttpsReceiver;
  let tripwire: ReturnType<typeof installConnectTripwire>;
  let resolver: ReturnType<typeof installFakeResolver>;

  beforeAll(async () => {
    tripwire = installConnectTripwire();
    resolver = installFakeResolver(FAKE_DNS);
    receiver = await startReceiver();
    second = await startReceiver();
    receiver.respondWith((r, res) => {
      const code = /^\/redirect-(\d{3})$/.exec(r.path)?.[1];
      if (!code || r.headers['x-svc-verify']) return false;
      res.writeHead(Number(code), { location: `https://localhost:${second.port}/landed` }).end();
      return true;
    });
    app = await startApp({
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, RETRY_BASE_MS: '20', RETRY_MAX_MS: '50',
      BATCH_LINGER_MS: '30', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '10000', DRAIN_RATE_LIMIT_READ_PER_MIN: '10000',
    });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
    await second?.close();
    resolver?.remove();
    tripwire?.remove();
  });

  // Every notation of a non-public destination the guard must refuse. Ports are spelled out where the
  // notation allows, so a leak would aim at a real port of this test.
  const forbiddenAtCreate = (port: number): string[] => [
    // IPv4 loopback, private, CGNAT, link-local, unspecified, broadcast, multicast, metadata
    `https://127.0.0.1:${port}/`, 'https://10.0.0.1/', 'https://172.16.0.1/', 'https://192.168.1.1/', 'https://100.64.0.1/',
    'https://169.254.1.1/', 'https://0.0.0.0/', 'https://255.255.255.255/', 'https://224.0.0.1/', 'https://239.255.255.250/',
    'https://169.254.169.254/latest/meta-data/', 'https://[fd00:ec2::254]/', 'https://metadata.google.internal/computeMetadata/v1/',
    // other spellings of 127.0.0.1
    `https://2130706433:${port}/`, `https://0177.0.0.1:${port}/`, `https://0x7f.1:${port}/`, `https://127.1:${port}/`,
    `https://0x7f000001:${port}/`, `https://127.0.0.1.:${port}/`, `https://%31%32%37.0.0.1:${port}/`,
    // IPv6 loopback, unspecified, link-local (a zone id does not even parse), unique local
    `https://[::1]:${port}/`, 'https://[::]/', 'https://[fe80::1]/', 'https://[fe80::1%25eth0]/', 'https://[febf::1]/',
    'https://[fc00::1]/', 'https://[fd12:3456::1]/',
    // IPv6 forms embedding a private IPv4 address
    `https://[::ffff:127.0.0.1]:${port}/`, `https://[::ffff:7f00:1]:${port}/`, 'https://[::127.0.0.1]/', 'https://[64:ff9b::a00:1]/',
    'https://[64:ff9b::127.0.0.1]/', 'https://[2002:7f00:1::]/', 'https://[2002:a9fe:a9fe::]/', 'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    // userinfo tricks: the host is what follows the last @, and userinfo is refused anyway
    `https://good@127.0.0.1:${port}/`, 'https://good.example.com@169.254.169.254/', 'https://user:pass@[::1]/',
    // case, percent-encoding and trailing dots of names; localhost and its subdomains
    'https://METADATA.GOOGLE.INTERNAL./', 'https://%6d%65tadata.google.internal/', 'https://foo.localhost/', 'https://a.b.LOCALHOST./',
    'https://ip6-localhost/',
    // names whose addresses are not public (the fake resolver's table)
    'https://private.example.test/', 'https://cgnat.example.test/', 'https://meta.example.test/', 'https://meta6.example.test/',
    'https://ula.example.test/', 'https://linklocal6.example.test/', 'https://mapped.example.test/', 'https://nat64.example.test/',
    'https://sixtofour.example.test/', 'https://zero.example.test/', 'https://mixed.example.test/',
    // not https
    `http://localhost:${port}/`,
  ];

  it('refuses every forbidden notation at create and at PATCH with 422 DRAIN_ENDPOINT_INVALID, and changes nothing', async () => {
    const listBefore = (await app.request('GET', ORG, { token: T })).body.drains.length;
    const good = await app.request('POST', ORG, { token: T, body: { name: 'ssrf-patch', type: 'http', endpoint: `${receiver.url}/patch` } });
    expect(good.status).toBe(201);
    const before = (await app.request('GET', `${ORG}/${good.body.id}`, { token: T })).body;
    const urls = forbiddenAtCreate(receiver.port);
    for (const [i, endpoint] of urls.entries()) {
      const created = await app.request('POST', ORG, { token: T, body: { name: `ssrf-${i}`, type: 'http', endpoint } });
      expect([created.status, created.body.code, created.body.field], endpoint).toEqual([422, 'DRAIN_ENDPOINT_INVALID', 'endpoint']);
      // The answer never echoes userinfo, nor the address a name resolved to (that would map our internal DNS).
      const text = JSON.stringify(created.body);
      expect(text, endpoint).not.toMatch(/good@|user:pass/);
      const name = new URL(endpoint.replace('%25eth0', '')).hostname;
      for (const address of FAKE_DNS[name]?.(1) ?? []) expect(text, endpoint).not.toContain(address);
      const patched = await app.request('PATCH', `${ORG}/${good.body.id}`, { token: T, body: { endpoint } });
      expect([patched.status, patched.body.code], endpoint).toEqual([422, 'DRAIN_ENDPOINT_INVALID']);
    }
    expect((await app.request('GET', `${ORG}/${good.body.id}`, { token: T })).body).toEqual(before);
    expect((await app.request('GET', ORG, { token: T })).body.drains.length).toBe(listBefore + 1);
    await app.request('DELETE', `${ORG}/${good.body.id}`, { token: T });
    expect(tripwire.leaks).toEqual([]);
  });

  /** A drain created on an allowed endpoint; its stored endpoint is then moved past the API's check. */
  async function drainWithStoredEndpoint(name: string, endpoint: string): Promise<string> {
    const res = await app.request('POST', ORG, { token: T, body: { name, type: 'http', endpoint: `${receiver.url}/${name}`, minSeverity: 'debug' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // As if the row were written before the rule existed, or by another tool: the connect-time check must stand alone.
    // Marked verified as such a row would be: the test route sends only to verified endpoints (spec 01 part 1).
    await app.store.drains.update(ORG_ID, res.body.id, { endpoint, verifiedAt: new Date() }, true);
    return res.body.id as string;
  }
  const rows = (id: string, kind?: DeliveryRecord['kind']) => app.store.deliveries.page(id, { limit: 100, ...(kind ? { kind } : {}) });
  const attemptsAt = (port: number) => tripwire.attempts.filter((a) => a.port === port).length;

  it('refuses at connect, for a drain whose stored endpoint is forbidden: test batches fail with ssrf, nothing connects', async () => {
    const p = receiver.port;
    const endpoints = [
      `https://127.0.0.1:${p}/`, `https://0x7f.1:${p}/`, `https://2130706433:${p}/`, `https://0177.0.0.1:${p}/`, `https://127.1:${p}/`,
      `https://[::1]:${p}/`, `https://[::ffff:127.0.0.1]:${p}/`, `https://[::ffff:7f00:1]:${p}/`, `https://foo.localhost:${p}/`,
      `https://ip6-localhost:${p}/`, `https://metadata.google.internal:${p}/`, 'https://10.0.0.1/', 'https://169.254.169.254/',
      'https://[fd00:ec2::254]/', 'https://[fe80::1]/', 'https://[64:ff9b::a00:1]/', 'https://[2002:7f00:1::]/', 'https://0.0.0.0/',
      'https://255.255.255.255/', 'https://private.example.test/', 'https://meta.example.test/', 'https://meta6.example.test/',
      'https://nat64.example.test/', 'https://mapped.example.test/', `https://mixed.example.test:${p}/`,
    ];
    const id = await drainWithStoredEndpoint('ssrf-connect', endpoints[0]!);
    const requestsBefore = receiver.requests.length;
    const attemptsBefore = attemptsAt(p);
    for (const endpoint of endpoints) {
      await app.store.drains.update(ORG_ID, id, { endpoint }, true);
      const sent = await app.request('POST', `${ORG}/${id}/test`, { token: T });
      expect(sent.status).toBe(202);
      const row = await waitFor(async () => (await rows(id, 'test')).find((d) => d.batchId === sent.body.batchId), { what: `the test attempt to ${endpoint}` });
      // Final at the first attempt: a refused destination is never retried.
      expect([row.ok, row.errorClass, row.attempt, row.statusCode], endpoint).toEqual([false, 'ssrf', 1, undefined]);
    }
    expect(receiver.requests.length).toBe(requestsBefore);
    expect(attemptsAt(p)).toBe(attemptsBefore);
    expect(tripwire.leaks).toEqual([]);
    await app.request('DELETE', `${ORG}/${id}`, { token: T });
  });

  it('drops live records whose destination is refused at connect, with the reason ssrf', async () => {
    const id = await drainWithStoredEndpoint('ssrf-live', `https://0x7f.1:${receiver.port}/live`);
    await app.store.drains.transition(id, ['pending_verification'], 'healthy');
    const requestsBefore = receiver.requests.length;
    // The worker picks the drain up within DRAIN_REFRESH_MS; records sent before then go nowhere, so keep sending until one is dropped.
    const sent: string[] = [];
    const dropped = await waitFor(async () => {
      const r = record();
      sent.push(r.id);
      await ingest(app, [r]);
      return (await app.store.deliveries.droppedRecords(id))[0];
    }, { what: 'a dropped record', intervalMs: 200 });
    expect(dropped.reason).toBe('ssrf');
    expect(sent).toEqual(expect.arrayContaining(dropped.recordIds));
    const attempts = await rows(id, 'batch');
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.every((d) => d.errorClass === 'ssrf' && d.attempt === 1 && !d.ok)).toBe(true);
    expect(receiver.requests.length).toBe(requestsBefore);
    expect(tripwire.leaks).toEqual([]);
    await app.request('DELETE', `${ORG}/${id}`, { token: T });
  });

  it('refuses a host that passed the create-time check and later resolves to loopback (DNS rebinding)', async () => {
    const endpoint = `https://rebind.example.test:${receiver.port}/rebind`;
    const created = await app.request('POST', ORG, { token: T, body: { name: 'ssrf-rebind', type: 'http', endpoint, minSeverity: 'debug' } });
    // The first resolution was public, so the create-time check had to accept it.
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(resolver.resolutions['rebind.example.test']).toBe(1);
    const id = created.body.id as string;
    await app.store.drains.transition(id, ['pending_verification'], 'healthy');
    const dropped = await waitFor(async () => {
      await ingest(app, [record()]);
      return (await app.store.deliveries.droppedRecords(id))[0];
    }, { what: 'a dropped record', intervalMs: 200 });
    expect(dropped.reason).toBe('ssrf');
    // The connect-time lookup is what refused it: the name was resolved again, at connect.
    expect(resolver.resolutions['rebind.example.test']).toBeGreaterThan(1);
    expect(receiver.requests.filter((r) => r.path === '/rebind')).toHaveLength(0);
    // The loopback address the name now gives was never dialled.
    expect(tripwire.attempts.filter((a) => a.host === 'rebind.example.test')).toEqual([]);
    // And the same name is now refused at PATCH too (the check resolves again).
    const patched = await app.request('PATCH', `${ORG}/${id}`, { token: T, body: { endpoint: `https://rebind.example.test/other` } });
    expect([patched.status, patched.body.code]).toEqual([422, 'DRAIN_ENDPOINT_INVALID']);
    expect(tripwire.leaks).toEqual([]);
    await app.request('DELETE', `${ORG}/${id}`, { token: T });
  });

  it.each([301, 302, 307, 308])('answers a %i with http_3xx, drops the records and never contacts the redirect target', async (code) => {
    const created = await app.request('POST', ORG, { token: T, body: { name: `redirect-${code}`, type: 'http', endpoint: `${receiver.url}/redirect-${code}`, minSeverity: 'debug' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await app.request('POST', `${ORG}/${id}/verify`, { token: T });
    await waitFor(async () => (await app.request('GET', `${ORG}/${id}`, { token: T })).body.state === 'healthy', { what: 'verified' });
    const secondBefore = attemptsAt(second.port);
    const dropped = await waitFor(async () => {
      await ingest(app, [record()]);
      return (await app.store.deliveries.droppedRecords(id))[0];
    }, { what: 'a dropped record', intervalMs: 200 });
    expect(dropped.reason).toBe('http_3xx');
    const batch = (await rows(id, 'batch'))[0]!;
    expect([batch.statusCode, batch.errorClass, batch.attempt]).toEqual([code, 'http_3xx', 1]);
    expect(receiver.batches().filter((r) => r.path === `/redirect-${code}`).length).toBeGreaterThan(0);
    // The target is a loopback receiver on the allow list: only not following keeps it silent.
    expect(second.requests).toHaveLength(0);
    expect(attemptsAt(second.port)).toBe(secondBefore);
    await app.request('DELETE', `${ORG}/${id}`, { token: T });
  });
});
