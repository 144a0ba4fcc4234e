/**
 * CIDRs as carriers take them (ipaddr.js): an IPv4 dotted quad or an IPv6
 * address, with a prefix length in range; a bare address is a single host.
 * The canonical form is the network itself: host bits cleared (`10.1.2.3/8`
 * is `10.0.0.0/8`), IPv6 compressed, and an IPv4-mapped IPv6 network
 * (`::ffff:203.0.113.0/120`) written as the IPv4 network it is
 * (`203.0.113.0/24`), so one network has one spelling.
 */
import ipaddr from 'ipaddr.js';

export interface Cidr {
  kind: 'ipv4' | 'ipv6';
  /** The network address (host bits cleared). */
  network: ipaddr.IPv4 | ipaddr.IPv6;
  bits: number;
  /** `10.0.0.0/8`, `2001:db8::/32`. */
  text: string;
}

export type ParsedCidr = { ok: true; cidr: Cidr } | { ok: false; reason: 'malformed' | 'zone-id' };

const IPV4_MAPPED = { network: ipaddr.IPv6.parse('::ffff:0:0'), bits: 96 };

export function parseCidr(raw: string): ParsedCidr {
  if (raw.length > 64 || raw.trim() !== raw) return { ok: false, reason: 'malformed' };
  const [addr, prefix, ...rest] = raw.split('/');
  if (rest.length > 0 || addr === undefined) return { ok: false, reason: 'malformed' };
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return { ok: false, reason: 'malformed' };
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  if (ipaddr.IPv4.isValidFourPartDecimal(addr)) parsed = ipaddr.IPv4.parse(addr);
  else if (addr.includes(':') && ipaddr.IPv6.isValid(addr)) parsed = ipaddr.IPv6.parse(addr);
  else return { ok: false, reason: 'malformed' };
  // A zone id (`fe80::1%eth0`) names an interface of the host that wrote it: no carrier can admit it.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).zoneId !== undefined) return { ok: false, reason: 'zone-id' };
  const max = parsed.kind() === 'ipv4' ? 32 : 128;
  let bits = prefix === undefined ? max : Number(prefix);
  if (bits > max) return { ok: false, reason: 'malformed' };
  if (parsed.kind() === 'ipv6' && bits >= IPV4_MAPPED.bits && (parsed as ipaddr.IPv6).match(IPV4_MAPPED.network, IPV4_MAPPED.bits)) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    bits -= IPV4_MAPPED.bits;
  }
  const network = parsed.kind() === 'ipv4'
    ? ipaddr.IPv4.networkAddressFromCIDR(`${parsed.toString()}/${bits}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/${bits}`);
  return { ok: true, cidr: { kind: network.kind(), network, bits, text: `${network.toString()}/${bits}` } };
}

/** The canonical form (`10.0.0.0/24`, `2001:db8::/32`), or undefined for anything that is not a CIDR. */
export function canonicalCidr(raw: string): string | undefined {
  const p = parseCidr(raw);
  return p.ok ? p.cidr.text : undefined;
}
