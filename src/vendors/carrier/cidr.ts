/**
 * CIDRs as carriers take them (ipaddr.js): an IPv4 dotted quad or an IPv6
 * address, with a prefix length in range; a bare address is a single host.
 */
import ipaddr from 'ipaddr.js';

/** The canonical form (`10.0.0.0/24`, `2001:db8::/32`), or undefined for anything that is not a CIDR. */
export function canonicalCidr(raw: string): string | undefined {
  if (raw.length > 64 || raw.trim() !== raw) return undefined;
  const [addr, prefix, ...rest] = raw.split('/');
  if (rest.length > 0 || addr === undefined) return undefined;
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return undefined;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  if (ipaddr.IPv4.isValidFourPartDecimal(addr)) parsed = ipaddr.IPv4.parse(addr);
  else if (addr.includes(':') && ipaddr.IPv6.isValid(addr)) parsed = ipaddr.IPv6.parse(addr);
  else return undefined;
  const max = parsed.kind() === 'ipv4' ? 32 : 128;
  const bits = prefix === undefined ? max : Number(prefix);
  if (bits > max) return undefined;
  return `${parsed.toString()}/${bits}`;
}
