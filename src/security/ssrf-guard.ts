/**
 * SSRF guard: decides whether a customer-supplied drain destination may be reached.
 *
 * Why this exists: a log drain makes this service send HTTP requests to URLs chosen by
 * customers. Without a guard, a customer could point a drain at 127.0.0.1, at a pod or
 * database on the private network, or at a cloud metadata endpoint (169.254.169.254,
 * fd00:ec2::254, metadata.google.internal, ...) and use our egress as a proxy into our
 * own infrastructure (server-side request forgery). So we refuse private, loopback,
 * link-local, metadata, multicast and reserved destinations twice:
 *
 *  1. When a drain is created or edited (`checkEndpoint`): the URL is parsed with WHATWG
 *     `URL` (which canonicalises decimal/octal/hex/short IPv4 spellings such as
 *     `https://2130706433/` or `https://0x7f.1/` to `127.0.0.1`), must be `https:`,
 *     must carry no credentials, and its host must be a public IP literal or a name all
 *     of whose addresses are public.
 *  2. When a connection is opened (`createGuardedLookup`, `checkConnectTarget`): a name
 *     that passed step 1 may later resolve to a private address (DNS rebinding, or a
 *     record simply changed). The guarded lookup is handed to `net.connect`/`tls.connect`
 *     (undici `Agent({ connect: { lookup } })`), checks every address it resolves, and the
 *     socket then connects to exactly the address it returned, so there is no second
 *     resolution an attacker could race. Node skips `lookup` entirely for IP-literal
 *     hosts, so connectors call `checkConnectTarget` for those.
 *
 * `allowHosts` (env DRAIN_ENDPOINT_ALLOW_HOSTS) exempts named hosts from the address
 * checks for local testing; it never exempts the `https:` requirement.
 *
 * The classifier parses addresses itself (no regexes over text) and fails closed: every
 * IPv6 address outside 2000::/3 is non-public, and anything it cannot parse is
 * 'reserved'. Addresses that embed an IPv4 address (IPv4-mapped, IPv4-compatible,
 * SIIT, NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo) are classified by the embedded
 * address when that one is not public. Errors are values: the check functions return
 * discriminated unions; only the lookup callback receives an `Error` (with
 * `code: 'ERR_SSRF_BLOCKED'`), because that is what `net.connect` expects.
 */
import dns from 'node:dns';
import net from 'node:net';

export type AddressClass =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'reserved'
  | 'multicast';

export type EndpointCheck =
  | { ok: true; url: URL }
  /** `addressClass`: set when the host was refused for the address it is or resolves to (DRAIN_ENDPOINT_ALLOW_HOSTS can exempt it). */
  | { ok: false; code: 'DRAIN_ENDPOINT_INVALID'; reason: string; addressClass?: Exclude<AddressClass, 'public'> };

export type ConnectTargetCheck = { ok: true } | { ok: false; reason: string };

export type Resolver = (host: string) => Promise<string[]>;

export interface CheckEndpointOptions {
  allowHosts: readonly string[];
  /** Returns every address of `host`. Defaults to `dns.promises.lookup(host, { all: true, verbatim: true })`. */
  resolve?: Resolver;
}

export const SSRF_BLOCKED = 'ERR_SSRF_BLOCKED';

/** Error handed to the `lookup` callback when a destination resolves to a non-public address. */
export class SsrfBlockedError extends Error {
  readonly code = SSRF_BLOCKED;
  readonly hostname: string;
  readonly addressClass: AddressClass;

  constructor(hostname: string, addressClass: AddressClass) {
    super(`Connection to ${hostname} refused: it resolves to ${describeClass(addressClass)}.`);
    this.name = 'SsrfBlockedError';
    this.hostname = hostname;
    this.addressClass = addressClass;
  }
}

// ---------------------------------------------------------------------------
// Address classification
// ---------------------------------------------------------------------------

/** Cloud metadata / instance-credential endpoints, as canonical IPv4 dotted quads (also refused as SIP trunk ACL entries). */
export const METADATA_V4: ReadonlySet<string> = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OCI, DigitalOcean, OpenStack IMDS
  '169.254.170.2', // AWS ECS task metadata / credentials
  '169.254.170.23', // AWS EKS Pod Identity agent
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure WireServer / host agent (publicly numbered, only reachable from inside Azure)
  '192.0.0.192', // Oracle Cloud legacy metadata
]);

/** Metadata endpoints reachable over IPv6, as written (also refused as SIP trunk ACL entries). */
export const METADATA_V6_ADDRESSES: readonly string[] = [
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS EKS Pod Identity agent over IPv6
];

/** The same, as 16-byte hex strings (see `v6Key`). */
const METADATA_V6 = new Set(METADATA_V6_ADDRESSES.map((a) => v6Key(parseIPv6(a))));

/** Names for this machine. */
const LOCALHOST_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);

/** Names of metadata services and cluster-internal endpoints. */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
  'kubernetes.default',
  'kubernetes.default.svc',
]);

/** Name suffixes that are, by definition, not on the public internet. */
const BLOCKED_HOST_SUFFIXES = ['.localhost', '.internal', '.local', '.home.arpa'];

/**
 * Classifies a literal IP address (any textual form `net.isIP` accepts, with or without
 * brackets or an IPv6 zone id). Input that is not an IP address yields 'reserved' so that
 * callers who forget to check fail closed.
 */
export function classifyAddress(ip: string): AddressClass {
  const bare = stripBrackets(ip.trim());
  const family = net.isIP(bare);
  if (family === 4) {
    const b = parseIPv4(bare);
    return b ? classifyV4(b) : 'reserved';
  }
  if (family === 6) {
    const b = parseIPv6(bare);
    return b ? classifyV6(b) : 'reserved';
  }
  return 'reserved';
}

function classifyV4(b: readonly number[]): AddressClass {
  const [a = 0, x = 0, y = 0, z = 0] = b;
  if (METADATA_V4.has(`${a}.${x}.${y}.${z}`)) return 'metadata';
  if (a === 0) return x === 0 && y === 0 && z === 0 ? 'unspecified' : 'reserved'; // 0.0.0.0/8 "this network"
  if (a === 10) return 'private'; // 10/8
  if (a === 100 && x >= 64 && x <= 127) return 'private'; // 100.64/10 CGNAT shared space
  if (a === 127) return 'loopback'; // 127/8
  if (a === 169 && x === 254) return 'link-local'; // 169.254/16
  if (a === 172 && x >= 16 && x <= 31) return 'private'; // 172.16/12
  if (a === 192 && x === 0 && y === 0) return 'reserved'; // 192.0.0/24 IETF protocol assignments
  if (a === 192 && x === 0 && y === 2) return 'reserved'; // 192.0.2/24 TEST-NET-1
  if (a === 192 && x === 88 && y === 99) return 'reserved'; // 192.88.99/24 6to4 relay anycast (deprecated)
  if (a === 192 && x === 168) return 'private'; // 192.168/16
  if (a === 198 && (x === 18 || x === 19)) return 'reserved'; // 198.18/15 benchmarking
  if (a === 198 && x === 51 && y === 100) return 'reserved'; // 198.51.100/24 TEST-NET-2
  if (a === 203 && x === 0 && y === 113) return 'reserved'; // 203.0.113/24 TEST-NET-3
  if (a >= 224 && a <= 239) return 'multicast'; // 224/4
  if (a >= 240) return 'reserved'; // 240/4 and 255.255.255.255 broadcast
  return 'public';
}

function classifyV6(b: readonly number[]): AddressClass {
  if (METADATA_V6.has(v6Key(b))) return 'metadata';
  const w = (i: number): number => ((b[i * 2] ?? 0) << 8) | (b[i * 2 + 1] ?? 0); // 16-bit group i
  const zeroUpTo = (n: number): boolean => b.slice(0, n).every((x) => x === 0);
  const v4At = (i: number): number[] => b.slice(i, i + 4);

  if (zeroUpTo(16)) return 'unspecified'; // ::
  if (zeroUpTo(15) && b[15] === 1) return 'loopback'; // ::1
  if (zeroUpTo(10) && w(5) === 0xffff) return classifyV4(v4At(12)); // ::ffff:a.b.c.d IPv4-mapped
  if (zeroUpTo(8) && w(4) === 0xffff && w(5) === 0) return embedded(v4At(12), 'reserved'); // ::ffff:0:a.b.c.d SIIT
  if (zeroUpTo(12)) return embedded(v4At(12), 'reserved'); // ::a.b.c.d IPv4-compatible (deprecated)
  if (w(0) === 0x64 && w(1) === 0xff9b && w(2) === 0 && w(3) === 0 && w(4) === 0 && w(5) === 0) {
    return classifyV4(v4At(12)); // 64:ff9b::/96 well-known NAT64 prefix
  }
  if (w(0) === 0x64 && w(1) === 0xff9b && w(2) === 1) return 'private'; // 64:ff9b:1::/48 local-use NAT64
  if (w(0) === 0x100 && w(1) === 0 && w(2) === 0 && w(3) === 0) return 'reserved'; // 100::/64 discard-only
  if (w(0) === 0x2001 && w(1) === 0) {
    // 2001::/32 Teredo: the client's IPv4 address is stored inverted in the last 32 bits.
    return embedded(
      v4At(12).map((x) => x ^ 0xff),
      'public',
    );
  }
  if (w(0) === 0x2001 && w(1) < 0x200) return 'reserved'; // rest of 2001::/23 IETF protocol assignments (benchmarking, ORCHID, ...)
  if (w(0) === 0x2001 && w(1) === 0xdb8) return 'reserved'; // 2001:db8::/32 documentation
  if (w(0) === 0x2002) return embedded(v4At(2), 'public'); // 2002::/16 6to4
  if ((w(0) & 0xfff0) === 0x3ff0) return 'reserved'; // 3fff::/20 documentation (RFC 9637)
  if (w(0) === 0x5f00) return 'reserved'; // 5f00::/16 SRv6 SIDs
  const first = b[0] ?? 0;
  if ((first & 0xfe) === 0xfc) return 'private'; // fc00::/7 unique local
  if (first === 0xfe && ((b[1] ?? 0) & 0xc0) === 0x80) return 'link-local'; // fe80::/10
  if (first === 0xfe && ((b[1] ?? 0) & 0xc0) === 0xc0) return 'private'; // fec0::/10 site-local (deprecated)
  if (first === 0xff) return 'multicast'; // ff00::/8
  if ((first & 0xe0) !== 0x20) return 'reserved'; // only 2000::/3 is allocated global unicast
  return 'public';
}

/** Class of an IPv4 address embedded in an IPv6 one: its own class when not public, otherwise `ifPublic`. */
function embedded(v4: readonly number[], ifPublic: AddressClass): AddressClass {
  const c = classifyV4(v4);
  return c === 'public' ? ifPublic : c;
}

/** Strict dotted quad (already validated by `net.isIPv4`). */
function parseIPv4(s: string): number[] | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

/** IPv6 text (already validated by `net.isIPv6`; zone id and trailing dotted quad allowed) to 16 bytes. */
function parseIPv6(s: string): number[] | null {
  const pct = s.indexOf('%');
  let text = pct === -1 ? s : s.slice(0, pct);
  let tail: number[] = [];
  if (text.includes('.')) {
    const lastColon = text.lastIndexOf(':');
    const v4 = parseIPv4(text.slice(lastColon + 1));
    if (!v4) return null;
    tail = v4;
    text = text.slice(0, lastColon + 1); // "::ffff:", "::", "1:2:3:4:5:6:"
    if (!text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string | undefined): number[] | null => {
    if (h === undefined || h === '') return [];
    const out: number[] = [];
    for (const g of h.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  if (!head || !rest) return null;
  const wanted = 8 - tail.length / 2;
  const missing = wanted - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const all = [...head, ...new Array<number>(missing).fill(0), ...rest];
  const bytes: number[] = [];
  for (const g of all) bytes.push(g >> 8, g & 0xff);
  bytes.push(...tail);
  return bytes.length === 16 ? bytes : null;
}

function v6Key(b: readonly number[] | null): string {
  return (b ?? []).map((x) => x.toString(16).padStart(2, '0')).join('');
}

function describeClass(c: AddressClass): string {
  switch (c) {
    case 'public':
      return 'a public address';
    case 'private':
      return 'a private network address';
    case 'loopback':
      return 'a loopback address';
    case 'link-local':
      return 'a link-local address';
    case 'metadata':
      return 'a cloud metadata address';
    case 'unspecified':
      return 'the unspecified address';
    case 'reserved':
      return 'a reserved or non-routable address';
    case 'multicast':
      return 'a multicast address';
  }
}

// ---------------------------------------------------------------------------
// Host names and the allow list
// ---------------------------------------------------------------------------

function stripBrackets(h: string): string {
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/**
 * Canonical form for comparing hosts: lower case, no brackets, no trailing dot, and IP
 * literals in WHATWG canonical form (so `::1`, `[0:0::1]` and `[::1]` compare equal).
 */
function canonicalHost(host: string): string {
  let h = stripBrackets(host.trim().toLowerCase());
  if (h.endsWith('.') && !h.endsWith('..')) h = h.slice(0, -1);
  const family = net.isIP(h);
  if (family === 6 && !h.includes('%')) {
    try {
      return stripBrackets(new URL(`http://[${h}]/`).hostname);
    } catch {
      return h;
    }
  }
  return h;
}

/** True when `host` (a URL hostname, bracketed or not, any case) is on the allow list. */
export function isAllowedHost(host: string, allowHosts: readonly string[]): boolean {
  if (host === '' || allowHosts.length === 0) return false;
  const h = canonicalHost(host);
  return allowHosts.some((a) => a.trim() !== '' && canonicalHost(a) === h);
}

/** Why a host *name* (not an IP literal) is refused outright, or null. */
function blockedName(name: string): { reason: string; cls: AddressClass } | null {
  const h = canonicalHost(name);
  if (LOCALHOST_NAMES.has(h) || h.endsWith('.localhost')) {
    return { reason: 'Destination host refers to this machine (localhost).', cls: 'loopback' };
  }
  if (METADATA_NAMES.has(h)) {
    return { reason: 'Destination host is a cloud metadata or cluster-internal name.', cls: 'metadata' };
  }
  if (BLOCKED_HOST_SUFFIXES.some((s) => h.endsWith(s))) {
    return { reason: 'Destination host is in a private-use domain.', cls: 'private' };
  }
  return null;
}

// ---------------------------------------------------------------------------
// Creation-time check
// ---------------------------------------------------------------------------

const defaultResolve: Resolver = async (host) => {
  const records = await dns.promises.lookup(host, { all: true, verbatim: true });
  return records.map((r) => r.address);
};

function invalid(reason: string, addressClass?: Exclude<AddressClass, 'public'>): EndpointCheck {
  return addressClass ? { ok: false, code: 'DRAIN_ENDPOINT_INVALID', reason, addressClass } : { ok: false, code: 'DRAIN_ENDPOINT_INVALID', reason };
}

/**
 * Validates a drain destination URL at creation time. Never throws; never echoes
 * credentials or resolved addresses in `reason`.
 */
export async function checkEndpoint(raw: string, opts: CheckEndpointOptions): Promise<EndpointCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid('Destination is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:') return invalid('Destination URL must use https.');
  if (url.username !== '' || url.password !== '') {
    return invalid('Destination URL must not contain a user name or password.');
  }
  const host = stripBrackets(url.hostname);
  if (host === '') return invalid('Destination URL has no host.');
  if (isAllowedHost(host, opts.allowHosts)) return { ok: true, url };

  if (net.isIP(host) !== 0) {
    const c = classifyAddress(host);
    if (c !== 'public') return invalid(`Destination address ${host} is ${describeClass(c)}.`, c);
    return { ok: true, url };
  }

  const named = blockedName(host);
  if (named) return invalid(named.reason, named.cls as Exclude<AddressClass, 'public'>);

  let addresses: string[];
  try {
    addresses = await (opts.resolve ?? defaultResolve)(host);
  } catch {
    return invalid(`Destination host ${host} could not be resolved.`);
  }
  if (addresses.length === 0) return invalid(`Destination host ${host} could not be resolved.`);
  for (const a of addresses) {
    const c = classifyAddress(a);
    // Do not echo the resolved address: that would let customers map our internal DNS.
    if (c !== 'public') return invalid(`Destination host ${host} resolves to ${describeClass(c)}.`, c);
  }
  return { ok: true, url };
}

// ---------------------------------------------------------------------------
// Connect-time checks
// ---------------------------------------------------------------------------

/**
 * Pre-connect check for the host a connector is about to dial. Node does not call
 * `lookup` for IP literals, so this is where those are refused; for names it applies the
 * name rules (localhost, metadata names) and leaves address checks to the guarded lookup.
 */
export function checkConnectTarget(hostname: string, allowHosts: readonly string[]): ConnectTargetCheck {
  const host = stripBrackets(hostname.trim());
  if (host === '') return { ok: false, reason: 'Destination has no host.' };
  if (isAllowedHost(host, allowHosts)) return { ok: true };
  if (net.isIP(host) !== 0) {
    const c = classifyAddress(host);
    return c === 'public' ? { ok: true } : { ok: false, reason: `Destination address ${host} is ${describeClass(c)}.` };
  }
  const named = blockedName(host);
  return named ? { ok: false, reason: named.reason } : { ok: true };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `net.LookupFunction` for `net.connect`/`tls.connect` (undici: `new Agent({ connect: {
 * lookup } })`). Resolves with `dns.lookup` and refuses the connection, with an error whose
 * `code` is 'ERR_SSRF_BLOCKED', if ANY resolved address is not public. Supports both
 * `options.all === true` (what Node 20's net.connect asks for when autoSelectFamily is on,
 * the default) and the single-address form. Hosts on the allow list are passed through.
 */
export function createGuardedLookup(opts: { allowHosts: readonly string[] }): net.LookupFunction {
  const allowHosts = [...opts.allowHosts];
  return (hostname, options, callback) => {
    // Be lenient about dns.lookup's optional-argument shapes in case of direct calls.
    let cb = callback as LookupCallback;
    let o: dns.LookupOptions = options;
    if (typeof options === 'function') {
      cb = options as unknown as LookupCallback;
      o = {};
    } else if (typeof options === 'number') {
      o = { family: options };
    } else if (options == null) {
      o = {};
    }

    if (isAllowedHost(hostname, allowHosts)) {
      dns.lookup(hostname, o, cb);
      return;
    }
    const named = blockedName(hostname);
    if (named) {
      process.nextTick(() => cb(new SsrfBlockedError(hostname, named.cls), o.all ? [] : ''));
      return;
    }

    dns.lookup(hostname, { ...o, all: true }, (err, addresses) => {
      if (err) {
        cb(err, o.all ? [] : '');
        return;
      }
      for (const a of addresses) {
        const c = classifyAddress(a.address);
        if (c !== 'public') {
          cb(new SsrfBlockedError(hostname, c), o.all ? [] : '');
          return;
        }
      }
      const first = addresses[0];
      if (o.all) cb(null, addresses);
      else if (first) cb(null, first.address, first.family);
      else {
        const e: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        e.code = 'ENOTFOUND';
        cb(e, '');
      }
    });
  };
}
