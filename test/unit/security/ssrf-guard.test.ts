import dns from 'node:dns';
import net from 'node:net';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, fetch, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AddressClass,
  checkConnectTarget,
  checkEndpoint,
  classifyAddress,
  createGuardedLookup,
  isAllowedHost,
} from '../../../src/security/ssrf-guard.js';

/** A resolver that never touches the network. Unknown names fail like NXDOMAIN. */
function fakeResolver(table: Record<string, string[]>): (host: string) => Promise<string[]> {
  return async (host) => {
    const hit = table[host];
    if (!hit) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return hit;
  };
}

const noNetwork = fakeResolver({});

describe('classifyAddress', () => {
  const cases: Array<[string, AddressClass]> = [
    // IPv4 public
    ['93.184.216.34', 'public'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    // IPv4 private / shared
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['172.32.0.1', 'public'],
    ['172.15.255.255', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['100.128.0.1', 'public'],
    // loopback, link-local, unspecified
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.1.1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    // metadata
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['FD00:EC2:0:0::254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    // documentation, benchmarking, reserved, broadcast, multicast
    ['192.0.2.10', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    // IPv6 basics
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fc00::', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2606:4700::1111', 'public'],
    ['2a00:1450:4001:82a::200e', 'public'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['100::1', 'reserved'],
    ['1::', 'reserved'],
    // IPv4-mapped, dotted and hex, any case
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:7F00:0001', 'loopback'],
    ['0:0:0:0:0:ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:8.8.8.8', 'public'],
    // IPv4-compatible (deprecated) and SIIT
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::10.1.2.3', 'private'],
    ['::8.8.8.8', 'reserved'],
    ['::ffff:0:10.0.0.1', 'private'],
    // NAT64
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::169.254.169.254', 'metadata'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b:1::1', 'private'],
    // 6to4
    ['2002:7f00:1::', 'loopback'],
    ['2002:a00:1::1', 'private'],
    ['2002:a9fe:a9fe::', 'metadata'],
    ['2002:808:808::1', 'public'],
    // Teredo: client IPv4 stored inverted in the last 32 bits (~10.0.0.1 = f5ff:fffe)
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'private'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'public'],
    // not an IP at all: fail closed
    ['example.com', 'reserved'],
    ['127.1', 'reserved'],
    ['', 'reserved'],
  ];
  it.each(cases)('%s -> %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });
});

describe('WHATWG URL normalisation that the guard relies on', () => {
  it.each([
    ['https://2130706433/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://0x7f000001/', '127.0.0.1'],
    ['https://017700000001/', '127.0.0.1'],
    ['https://0x7f.0x0.0x0.0x1/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://127.0.0.1./', '127.0.0.1'],
    ['https://%31%32%37.0.0.1/', '127.0.0.1'],
    ['https://\uff11\uff12\uff17.0.0.1/', '127.0.0.1'],
    ['https://0/', '0.0.0.0'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['https://[0:0:0:0:0:0:0:1]/', '[::1]'],
    ['https://[64:ff9b::10.0.0.1]/', '[64:ff9b::a00:1]'],
  ])('%s has hostname %s', (raw, hostname) => {
    expect(new URL(raw).hostname).toBe(hostname);
  });

  it('rejects IPv6 zone ids and out-of-range IPv4', () => {
    expect(() => new URL('https://[fe80::1%25eth0]/')).toThrow();
    expect(() => new URL('https://256.0.0.1/')).toThrow();
  });

  it('does not strip the trailing dot from names', () => {
    expect(new URL('https://LOCALHOST./').hostname).toBe('localhost.');
  });
});

describe('checkEndpoint', () => {
  const refused: string[] = [
    // IPv4 private ranges
    'https://10.0.0.1/',
    'https://172.16.5.4/',
    'https://192.168.0.10:8443/logs',
    'https://100.64.1.1/',
    'https://198.18.0.5/',
    'https://192.0.2.1/',
    // loopback in every notation WHATWG URL knows
    'https://127.0.0.1/',
    'https://127.0.0.2/',
    'https://2130706433/',
    'https://0177.0.0.1/',
    'https://0x7f.1/',
    'https://0x7f000001/',
    'https://017700000001/',
    'https://127.1/',
    'https://0177.0.0.01/',
    'https://127.0.0.1./',
    'https://%31%32%37.0.0.1/',
    // IPv6
    'https://[::1]/',
    'https://[0:0:0:0:0:0:0:1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::ffff:10.0.0.1]/',
    'https://[::127.0.0.1]/',
    'https://[fe80::1]/',
    'https://[fc00::]/',
    'https://[fd00::1]:443/',
    'https://[64:ff9b::10.0.0.1]/',
    'https://[2002:a00:1::]/',
    'https://[ff02::1]/',
    // metadata addresses
    'https://169.254.169.254/latest/meta-data/',
    'https://[fd00:ec2::254]/',
    'https://100.100.100.200/',
    'https://169.254.170.2/v2/credentials',
    'https://[::ffff:169.254.169.254]/',
    // unspecified
    'https://0.0.0.0/',
    'https://0/',
    'https://[::]/',
    // broadcast / multicast
    'https://255.255.255.255/',
    'https://224.0.0.1/',
    // the rest of the notations
    'https://0x7f.1./',
    'https://0x7F.0X1/',
    'https://[::ffff:7f00:1]:8443/',
    'https://[64:ff9b::a00:1]/',
    'https://[2002:7f00:1::]/',
    'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    'https://[::ffff:0:10.0.0.1]/',
    'https://[febf::1]/',
    'https://[fd00:ec2::254]:80/',
    'https://[FD00:EC2::254]/',
    'https://169.254.169.254./',
    'https://0251.0376.0251.0376/',
    'https://2852039166/',
    'https://good@127.0.0.1/',
    'https://good.example.com@127.0.0.1/',
    'https://good.example.com:443@[::1]/',
    'https://100.127.255.255/',
    'https://172.31.255.255/',
    'https://239.255.255.250/',
  ];
  it.each(refused)('refuses %s', async (raw) => {
    const r = await checkEndpoint(raw, { allowHosts: [], resolve: noNetwork });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.code).toBe('DRAIN_ENDPOINT_INVALID');
  });

  it('refuses an IPv6 zone id (the URL does not even parse)', async () => {
    const r = await checkEndpoint('https://[fe80::1%25eth0]/', { allowHosts: [], resolve: noNetwork });
    expect(r).toMatchObject({ ok: false, code: 'DRAIN_ENDPOINT_INVALID' });
  });

  it('names the address class in the reason', async () => {
    const r = await checkEndpoint('https://0x7f.1/', { allowHosts: [], resolve: noNetwork });
    expect(r).toEqual({ ok: false, code: 'DRAIN_ENDPOINT_INVALID', reason: 'Destination address 127.0.0.1 is a loopback address.', addressClass: 'loopback' });
    const m = await checkEndpoint('https://169.254.169.254/', { allowHosts: [], resolve: noNetwork });
    expect(!m.ok && m.reason).toMatch(/metadata/);
  });

  it.each([
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://METADATA.google.internal./',
    'https://metadata/',
    'https://metadata.goog/',
    'https://instance-data/',
    'https://instance-data.ec2.internal/',
    'https://localhost/',
    'https://LocalHost:8443/',
    'https://localhost./',
    'https://foo.localhost/',
    'https://db.internal/',
    'https://printer.local/',
    'https://%6c%6fcalhost/',
    'https://LOCALHOST.:8443/',
    'https://a.b.c.localhost/',
    'https://ip6-localhost/',
    'https://metadata.google.internal./',
    'https://%6d%65tadata.google.internal/',
  ])('refuses the host name in %s without resolving it', async (raw) => {
    let resolved = false;
    const r = await checkEndpoint(raw, {
      allowHosts: [],
      resolve: async () => {
        resolved = true;
        return ['93.184.216.34'];
      },
    });
    expect(r.ok).toBe(false);
    expect(resolved).toBe(false);
  });

  const resolve = fakeResolver({
    'internal.example.com': ['10.0.0.5'],
    'mixed.example.com': ['93.184.216.34', '10.0.0.5'],
    'mixed6.example.com': ['2606:4700::1111', 'fd00::5'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    'meta.example.com': ['169.254.169.254'],
    'empty.example.com': [],
    'good.example.com': ['93.184.216.34', '2606:4700::1111'],
  });

  it('refuses a name that resolves to a private address, without echoing the address', async () => {
    const r = await checkEndpoint('https://internal.example.com/', { allowHosts: [], resolve });
    expect(r).toEqual({
      ok: false,
      code: 'DRAIN_ENDPOINT_INVALID',
      reason: 'Destination host internal.example.com resolves to a private network address.',
      addressClass: 'private',
    });
    expect(!r.ok && r.reason).not.toContain('10.0.0.5');
  });

  it.each(['mixed.example.com', 'mixed6.example.com', 'mapped.example.com', 'meta.example.com'])(
    'refuses %s when any resolved address is not public',
    async (host) => {
      const r = await checkEndpoint(`https://${host}/`, { allowHosts: [], resolve });
      expect(r.ok).toBe(false);
    },
  );

  it('refuses a name that cannot be resolved', async () => {
    const r = await checkEndpoint('https://nxdomain.example.com/', { allowHosts: [], resolve });
    expect(r).toMatchObject({ ok: false, code: 'DRAIN_ENDPOINT_INVALID' });
    expect(!r.ok && r.reason).toMatch(/could not be resolved/);
    const e = await checkEndpoint('https://empty.example.com/', { allowHosts: [], resolve });
    expect(!e.ok && e.reason).toMatch(/could not be resolved/);
  });

  it('accepts a name whose addresses are all public', async () => {
    const r = await checkEndpoint('https://good.example.com/drain?x=1', { allowHosts: [], resolve });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.url.href).toBe('https://good.example.com/drain?x=1');
  });

  it.each(['https://93.184.216.34/', 'https://[2606:4700::1111]/', 'https://[::ffff:8.8.8.8]/', 'https://[64:ff9b::808:808]/'])(
    'accepts the public literal %s without resolving',
    async (raw) => {
      const r = await checkEndpoint(raw, { allowHosts: [], resolve: noNetwork });
      expect(r.ok).toBe(true);
    },
  );

  it.each(['http://93.184.216.34/', 'ftp://93.184.216.34/', 'file:///etc/passwd', 'ws://good.example.com/', 'javascript:alert(1)'])(
    'refuses the scheme of %s',
    async (raw) => {
      const r = await checkEndpoint(raw, { allowHosts: [], resolve });
      expect(r).toEqual({ ok: false, code: 'DRAIN_ENDPOINT_INVALID', reason: 'Destination URL must use https.' });
    },
  );

  it('refuses userinfo and never echoes it', async () => {
    for (const raw of ['https://alice:s3cret@good.example.com/', 'https://alice@good.example.com/', 'https://:s3cret@good.example.com/']) {
      const r = await checkEndpoint(raw, { allowHosts: [], resolve });
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.reason).not.toContain('s3cret');
        expect(r.reason).not.toContain('alice');
      }
    }
  });

  it('refuses garbage without echoing it', async () => {
    for (const raw of ['', 'not a url', 'https://', 'https://user:s3cret@[::1/']) {
      const r = await checkEndpoint(raw, { allowHosts: [], resolve: noNetwork });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).not.toContain('s3cret');
    }
  });

  describe('allowHosts', () => {
    it('exempts localhost from the address checks', async () => {
      const r = await checkEndpoint('https://localhost:8443/', { allowHosts: ['localhost'], resolve: noNetwork });
      expect(r.ok).toBe(true);
      const upper = await checkEndpoint('https://LOCALHOST:8443/', { allowHosts: ['LocalHost'], resolve: noNetwork });
      expect(upper.ok).toBe(true);
    });

    it('still requires https', async () => {
      const r = await checkEndpoint('http://localhost:8443/', { allowHosts: ['localhost'], resolve: noNetwork });
      expect(r).toMatchObject({ ok: false, reason: 'Destination URL must use https.' });
    });

    it('matches IPv6 with or without brackets, and IPv4 literals', async () => {
      for (const allow of ['::1', '[::1]', '0:0:0:0:0:0:0:1']) {
        const r = await checkEndpoint('https://[::1]:9000/', { allowHosts: [allow], resolve: noNetwork });
        expect(r.ok).toBe(true);
      }
      const v4 = await checkEndpoint('https://127.0.0.1:9000/', { allowHosts: ['127.0.0.1'], resolve: noNetwork });
      expect(v4.ok).toBe(true);
    });

    it('only exempts the listed host', async () => {
      const r = await checkEndpoint('https://127.0.0.1/', { allowHosts: ['localhost'], resolve: noNetwork });
      expect(r.ok).toBe(false);
      const n = await checkEndpoint('https://internal.example.com/', { allowHosts: ['example.com'], resolve });
      expect(n.ok).toBe(false);
    });

    it('isAllowedHost compares case-insensitively and ignores brackets and a trailing dot', () => {
      expect(isAllowedHost('LocalHost', ['localhost'])).toBe(true);
      expect(isAllowedHost('localhost.', ['localhost'])).toBe(true);
      expect(isAllowedHost('[::1]', ['::1'])).toBe(true);
      expect(isAllowedHost('::1', ['[::1]'])).toBe(true);
      expect(isAllowedHost('localhost', [])).toBe(false);
      expect(isAllowedHost('', [''])).toBe(false);
      expect(isAllowedHost('evil-localhost', ['localhost'])).toBe(false);
    });
  });
});

describe('checkConnectTarget', () => {
  it.each([
    ['127.0.0.1', false],
    ['::1', false],
    ['[::1]', false],
    ['::ffff:7f00:1', false],
    ['169.254.169.254', false],
    ['10.1.2.3', false],
    ['localhost', false],
    ['metadata.google.internal', false],
    ['', false],
    ['93.184.216.34', true],
    ['2606:4700::1111', true],
    ['good.example.com', true],
  ] as const)('%s -> ok=%s', (host, ok) => {
    expect(checkConnectTarget(host, []).ok).toBe(ok);
  });

  it('honours allowHosts', () => {
    expect(checkConnectTarget('127.0.0.1', ['127.0.0.1']).ok).toBe(true);
    expect(checkConnectTarget('::1', ['[::1]']).ok).toBe(true);
  });
});

describe('createGuardedLookup', () => {
  function lookupOnce(
    host: string,
    options: dns.LookupOptions,
    allowHosts: string[] = [],
  ): Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family: unknown }> {
    return new Promise((resolve) => {
      createGuardedLookup({ allowHosts })(host, options, (err, address, family) => resolve({ err, address, family }));
    });
  }

  it('blocks localhost with all: true and all: false', async () => {
    for (const all of [true, false]) {
      const { err } = await lookupOnce('localhost', { all });
      expect(err?.code).toBe('ERR_SSRF_BLOCKED');
    }
  });

  it('blocks IP literals passed to it directly', async () => {
    const { err } = await lookupOnce('127.0.0.1', { all: true });
    expect(err?.code).toBe('ERR_SSRF_BLOCKED');
  });

  it('passes allowed hosts through, in both result shapes', async () => {
    const many = await lookupOnce('localhost', { all: true }, ['localhost']);
    expect(many.err).toBeNull();
    expect(Array.isArray(many.address)).toBe(true);
    const one = await lookupOnce('127.0.0.1', { all: false }, ['127.0.0.1']);
    expect(one).toEqual({ err: null, address: '127.0.0.1', family: 4 });
  });

  it('returns a public literal unchanged in both result shapes', async () => {
    const one = await lookupOnce('93.184.216.34', {});
    expect(one).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    const many = await lookupOnce('2606:4700::1111', { all: true });
    expect(many).toMatchObject({ err: null, address: [{ address: '2606:4700::1111', family: 6 }] });
  });

  describe('at connect, with the process resolver answering for test names (no DNS traffic)', () => {
    const realLookup = dns.lookup;
    let answers: Record<string, string[][]> = {};
    beforeAll(() => {
      // Each name answers its lists in turn, the last one forever: a name can change its mind.
      (dns as { lookup: unknown }).lookup = (host: string, o: dns.LookupOptions, cb: (e: unknown, a: unknown, f?: number) => void) => {
        const queue = answers[host];
        if (!queue) return (realLookup as (...a: unknown[]) => void)(host, o, cb);
        const list = queue.length > 1 ? queue.shift()! : queue[0]!;
        const records = list.map((address) => ({ address, family: net.isIP(address) }));
        process.nextTick(() => (o.all ? cb(null, records) : cb(null, records[0]?.address, records[0]?.family)));
      };
    });
    afterAll(() => {
      (dns as { lookup: unknown }).lookup = realLookup;
    });

    it('refuses a name on the resolution it connects with, after an earlier public one (DNS rebinding)', async () => {
      answers = { 'rebind.example.test': [['93.184.216.34'], ['127.0.0.1']] };
      const first = await lookupOnce('rebind.example.test', { all: true });
      expect(first).toMatchObject({ err: null, address: [{ address: '93.184.216.34', family: 4 }] });
      const second = await lookupOnce('rebind.example.test', { all: true });
      expect(second.err?.code).toBe('ERR_SSRF_BLOCKED');
      expect(second.address).toEqual([]);
    });

    it.each([
      ['10.0.0.1'], ['100.64.0.1'], ['169.254.169.254'], ['fd00:ec2::254'], ['fe80::1'], ['fe80::1%eth0'], ['fc00::1'], ['::ffff:127.0.0.1'],
      ['::ffff:7f00:1'], ['64:ff9b::a00:1'], ['2002:7f00:1::'], ['0.0.0.0'], ['::'], ['255.255.255.255'], ['224.0.0.1'],
    ])('refuses a name resolving to %s in both result shapes', async (address) => {
      for (const all of [true, false]) {
        answers = { 'bad.example.test': [[address]] };
        const r = await lookupOnce('bad.example.test', { all });
        expect(r.err?.code).toBe('ERR_SSRF_BLOCKED');
        expect(r.address).toEqual(all ? [] : '');
      }
    });

    it('refuses when any one of several addresses is not public (a client could pick any)', async () => {
      answers = { 'mixed.example.test': [['93.184.216.34', '2606:4700::1111', '10.0.0.1']] };
      expect((await lookupOnce('mixed.example.test', { all: true })).err?.code).toBe('ERR_SSRF_BLOCKED');
      answers = { 'good.example.test': [['93.184.216.34', '2606:4700::1111']] };
      expect(await lookupOnce('good.example.test', { all: false })).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    });
  });

  describe('through undici 7 and a real socket', () => {
    let server: http.Server;
    let port = 0;
    let connections = 0;

    beforeAll(async () => {
      server = http.createServer((_req, res) => res.end('ok'));
      server.on('connection', () => {
        connections += 1;
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('refuses http://localhost before any connection reaches the server', async () => {
      const agent = new Agent({ connect: { lookup: createGuardedLookup({ allowHosts: [] }) } });
      try {
        const before = connections;
        const error = await request(`http://localhost:${port}/`, { dispatcher: agent }).then(
          () => null,
          (e: unknown) => e,
        );
        // undici's request() rejects with the lookup error itself; its fetch() wraps it as `cause`.
        expect(error).toBeInstanceOf(Error);
        expect((error as { code?: string }).code).toBe('ERR_SSRF_BLOCKED');
        const viaFetch = await fetch(`http://localhost:${port}/`, { dispatcher: agent }).then(
          () => null,
          (e: unknown) => e as { cause?: { code?: string } },
        );
        expect(viaFetch?.cause?.code).toBe('ERR_SSRF_BLOCKED');
        expect(connections).toBe(before);
      } finally {
        await agent.close();
      }
    });

    it('checks the resolved address, not just the name (net.connect to "127.1", which only getaddrinfo understands)', async () => {
      const before = connections;
      for (const autoSelectFamily of [true, false]) {
        const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
          const socket = net.connect({ host: '127.1', port, autoSelectFamily, lookup: createGuardedLookup({ allowHosts: [] }) });
          socket.once('connect', () => {
            socket.destroy();
            resolve(null);
          });
          socket.once('error', (e) => resolve(e));
        });
        expect(error?.code).toBe('ERR_SSRF_BLOCKED');
      }
      expect(connections).toBe(before);
    });

    it('also refuses when autoSelectFamily is off (lookup called with all unset)', async () => {
      const agent = new Agent({
        connect: { lookup: createGuardedLookup({ allowHosts: [] }), autoSelectFamily: false } as Agent.Options['connect'],
      });
      try {
        const before = connections;
        const error = (await request(`http://localhost:${port}/`, { dispatcher: agent }).then(
          () => null,
          (e: unknown) => e,
        )) as (Error & { code?: string; cause?: { code?: string } }) | null;
        expect(error?.code === 'ERR_SSRF_BLOCKED' || error?.cause?.code === 'ERR_SSRF_BLOCKED').toBe(true);
        expect(connections).toBe(before);
      } finally {
        await agent.close();
      }
    });

    it('connects when localhost is on the allow list', async () => {
      const agent = new Agent({ connect: { lookup: createGuardedLookup({ allowHosts: ['localhost'] }) } });
      try {
        const before = connections;
        // Node's autoSelectFamily may try ::1 first; the server listens on 127.0.0.1 only, which it falls back to.
        const res = await request(`http://localhost:${port}/`, { dispatcher: agent });
        expect(res.statusCode).toBe(200);
        expect(await res.body.text()).toBe('ok');
        expect(connections).toBeGreaterThan(before);
      } finally {
        await agent.close();
      }
    });

    it('Node skips lookup for IP literals, which is why checkConnectTarget exists', async () => {
      let called = false;
      const lookup: net.LookupFunction = (host, opts, cb) => {
        called = true;
        createGuardedLookup({ allowHosts: [] })(host, opts, cb);
      };
      const agent = new Agent({ connect: { lookup } });
      try {
        const res = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
        await res.body.text();
        expect(called).toBe(false);
        expect(checkConnectTarget('127.0.0.1', []).ok).toBe(false);
      } finally {
        await agent.close();
      }
    });
  });
});
