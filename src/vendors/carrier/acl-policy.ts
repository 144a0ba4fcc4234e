/**
 * What a carrier refuses as a SIP trunk ACL entry, beyond a malformed CIDR:
 * an entry admits SIP traffic from every address it covers, so one wider
 * than /8 (IPv4) or /32 (IPv6) all but opens the trunk to the internet, and
 * one covering addresses no caller on the internet can have (loopback,
 * link-local, multicast, the unspecified address) or a cloud metadata
 * endpoint (the list src/security/ssrf-guard.ts keeps) only admits spoofed
 * or internal traffic. An entry is refused when it covers any such address,
 * not only when its network address is one.
 */
import ipaddr from 'ipaddr.js';
import { METADATA_V4, METADATA_V6_ADDRESSES } from '../../security/ssrf-guard.js';
import type { Cidr } from './cidr.js';

export const MIN_PREFIX = { ipv4: 8, ipv6: 32 } as const;

interface Refused {
  network: ipaddr.IPv4 | ipaddr.IPv6;
  bits: number;
  what: string;
}

const range = (cidr: string, what: string): Refused => {
  const [network, bits] = ipaddr.parseCIDR(cidr);
  return { network, bits, what };
};

const REFUSED: readonly Refused[] = [
  range('0.0.0.0/8', 'unspecified addresses'),
  range('127.0.0.0/8', 'loopback addresses'),
  range('169.254.0.0/16', 'link-local addresses'),
  range('224.0.0.0/4', 'multicast addresses'),
  ...[...METADATA_V4].map((a) => range(`${a}/32`, `a cloud metadata address (${a})`)),
  range('::/128', 'the unspecified address'),
  range('::1/128', 'the loopback address'),
  range('fe80::/10', 'link-local addresses'),
  range('ff00::/8', 'multicast addresses'),
  // Every IPv4 address, mapped: an IPv6 entry this wide is wider than any IPv4 /8.
  range('::ffff:0:0/96', 'every IPv4 address'),
  ...METADATA_V6_ADDRESSES.map((a) => range(`${a}/128`, `a cloud metadata address (${a})`)),
];

/** Two networks of one family overlap when the wider one holds the other's network address. */
function overlaps(a: Cidr, r: Refused): boolean {
  if (a.network.kind() !== r.network.kind()) return false;
  const bits = Math.min(a.bits, r.bits);
  return (a.network as ipaddr.IPv4).match(r.network as ipaddr.IPv4, bits);
}

/** Why a carrier refuses the (canonical) entry, or undefined when it takes it. */
export function aclRefusal(c: Cidr): string | undefined {
  const min = MIN_PREFIX[c.kind];
  if (c.bits < min) return `ACL entry ${c.text} refused: prefixes shorter than /${min} are not accepted for ${c.kind === 'ipv4' ? 'IPv4' : 'IPv6'}`;
  const hit = REFUSED.find((r) => overlaps(c, r));
  if (hit) return `ACL entry ${c.text} refused: it covers ${hit.what}`;
  return undefined;
}
