import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses the service may open a connection to when it fetches a maker's site.
 *
 * Only globally routable unicast is allowed: a maker's website is on the public internet, and any
 * other address (this machine, the private network the service runs in, the cloud metadata
 * service at 169.254.169.254 or fd00:ec2::254, multicast, documentation and benchmarking ranges)
 * is where a server-side request forgery would aim. The ranges come from ipaddr.js's tables of
 * special-purpose blocks; everything it does not class as plain unicast is refused.
 *
 * IPv6 addresses that carry an IPv4 address inside (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible
 * ::a.b.c.d, the RFC 6145 translated form, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4
 * 2002::/16, Teredo 2001::/32) are refused outright, whatever IPv4 address they embed. A real
 * public site publishes its IPv4 address in an A record, so these forms only reach us as tricks
 * (a literal in a URL, a crafted AAAA record) or through translation gateways whose far side we
 * cannot judge. The price: on an IPv6-only host behind DNS64, IPv4-only sites cannot be fetched.
 *
 * IPv6 is further held to the global unicast block 2000::/3, so anything the tables do not name
 * yet (future allocations, the deprecated site-local fec0::/10) is refused too. Scoped addresses
 * (fe80::1%eth0) are refused. Only canonical textual forms are judged: a string Node's `net`
 * does not take for an IP address (such as 0177.0.0.1) is refused rather than interpreted.
 */

export type AddressRange =
  | 'invalid'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'carrier_grade_nat'
  | 'unique_local'
  | 'multicast'
  | 'broadcast'
  | 'unspecified'
  | 'reserved'
  | 'ipv4_embedded'
  | 'scoped'
  | 'not_global';

export type AddressVerdict =
  | { allowed: true; address: string; family: 4 | 6 }
  | { allowed: false; address: string; range: AddressRange; reason: string };

export interface AddressPolicyOptions {
  /**
   * Let loopback (127.0.0.0/8, ::1) through. Off in the service; tests turn it on to serve sites
   * from 127.0.0.1. Every other refused range stays refused, and so do IPv4-mapped forms of
   * loopback such as ::ffff:127.0.0.1.
   */
  allowLoopback?: boolean;
}

const REASONS: Record<AddressRange, string> = {
  invalid: 'not an IP address',
  loopback: 'a loopback address (this machine itself)',
  private: 'a private network address',
  link_local: 'a link-local address (such as a cloud metadata service)',
  carrier_grade_nat: 'a carrier-grade NAT address, not reachable from the internet',
  unique_local: 'a private IPv6 address (unique local)',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  unspecified: 'an unspecified address',
  reserved: 'a reserved address (special-purpose, documentation, benchmarking or future use)',
  ipv4_embedded: 'an IPv6 address wrapping an IPv4 address (mapped, compatible, NAT64, 6to4 or Teredo)',
  scoped: 'a scoped IPv6 address',
  not_global: 'an IPv6 address outside the global unicast range',
};

const IPV4_RANGES: Record<string, AddressRange> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link_local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier_grade_nat',
  private: 'private',
};

const IPV6_RANGES: Record<string, AddressRange> = {
  unspecified: 'unspecified',
  linkLocal: 'link_local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'unique_local',
  ipv4Mapped: 'ipv4_embedded',
  rfc6145: 'ipv4_embedded',
  rfc6052: 'ipv4_embedded',
  '6to4': 'ipv4_embedded',
  teredo: 'ipv4_embedded',
};

const GLOBAL_UNICAST_V6: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];

function refused(address: string, range: AddressRange): AddressVerdict {
  return { allowed: false, address, range, reason: REASONS[range] };
}

/** Judges one address; the verdict says why a refused address is refused. */
export function judgeAddress(ip: string, opts: AddressPolicyOptions = {}): AddressVerdict {
  const family = isIP(ip);
  if (family === 4) {
    const range = ipaddr.IPv4.parse(ip).range();
    if (range === 'unicast') return { allowed: true, address: ip, family: 4 };
    if (range === 'loopback' && opts.allowLoopback) return { allowed: true, address: ip, family: 4 };
    // as112, amt, benchmarking, documentation and 240/4 all land here
    return refused(ip, IPV4_RANGES[range] ?? 'reserved');
  }
  if (family === 6) {
    const addr = ipaddr.IPv6.parse(ip);
    if (addr.zoneId !== undefined) return refused(ip, 'scoped');
    const range: string = addr.range();
    if (range === 'loopback' && opts.allowLoopback) return { allowed: true, address: ip, family: 6 };
    if (range !== 'unicast') return refused(ip, IPV6_RANGES[range] ?? 'reserved');
    // ::a.b.c.d (IPv4-compatible, deprecated) is plain unicast to the tables
    if (addr.parts.slice(0, 6).every((p) => p === 0)) return refused(ip, 'ipv4_embedded');
    if (!addr.match(GLOBAL_UNICAST_V6)) return refused(ip, 'not_global');
    return { allowed: true, address: ip, family: 6 };
  }
  return refused(ip, 'invalid');
}

/** True when the service may connect to this address (loopback never counts as public). */
export function isPublicAddress(ip: string): boolean {
  return judgeAddress(ip).allowed;
}

/** Why an address may not be connected to, or null when it may. */
export function addressRefusalReason(ip: string, opts: AddressPolicyOptions = {}): string | null {
  const verdict = judgeAddress(ip, opts);
  return verdict.allowed ? null : verdict.reason;
}

/**
 * Whether a site's host name leads somewhere the service refuses to connect to, asked before a
 * submission is accepted so that such a website is refused with a clear error rather than saved.
 * Only the resolver is asked (no connection is opened); a name that does not resolve is not
 * judged here (the site may simply not be up yet). Returns the refusal, or null.
 */
export async function hostRefusal(
  hostname: string,
  resolve: (hostname: string) => Promise<{ address: string }[]>,
  opts: AddressPolicyOptions = {},
): Promise<string | null> {
  let answer: { address: string }[];
  try {
    answer = await resolve(hostname);
  } catch {
    return null;
  }
  for (const { address } of answer) {
    const verdict = judgeAddress(address, opts);
    if (!verdict.allowed) return `${hostname} resolves to ${address}, ${verdict.reason}`;
  }
  return null;
}
