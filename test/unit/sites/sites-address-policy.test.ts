import { describe, expect, it } from 'vitest';
import { addressRefusalReason, isPublicAddress, judgeAddress, type AddressRange } from '../../../src/sites/address-policy.ts';

/** Which addresses a site fetch may connect to. Pure: nothing here touches the network. */

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '100.63.255.255', // just below 100.64/10
  '100.128.0.0', // just above it
  '172.15.255.255', // just below 172.16/12
  '172.32.0.0', // just above it
  '169.253.255.255',
  '169.255.0.0',
  '192.167.255.255',
  '192.169.0.0',
  '11.0.0.0',
  '9.255.255.255',
  '126.255.255.255',
  '128.0.0.0',
  '223.255.255.255', // last before multicast
  '2001:4860:4860::8888',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '2001:200::1', // just past 2001::/23 (IETF protocol assignments)
  '2003::1', // just past 6to4
];

const REFUSED: [string, AddressRange][] = [
  // IPv4 loopback, private, link-local, CGNAT
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.0', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.0.1', 'private'],
  ['192.168.255.255', 'private'],
  ['169.254.169.254', 'link_local'],
  ['169.254.0.1', 'link_local'],
  ['100.64.0.0', 'carrier_grade_nat'],
  ['100.127.255.255', 'carrier_grade_nat'],
  // unspecified, broadcast, multicast
  ['0.0.0.0', 'unspecified'],
  ['0.255.255.255', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  // reserved, benchmarking, documentation, special-purpose
  ['192.0.0.1', 'reserved'],
  ['192.0.2.10', 'reserved'],
  ['198.51.100.7', 'reserved'],
  ['203.0.113.99', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['198.19.255.255', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.254', 'reserved'],
  ['192.175.48.1', 'reserved'],
  ['192.52.193.1', 'reserved'],
  // IPv6 loopback, unspecified, link-local, unique-local (incl. the EC2 metadata address), multicast
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::', 'unspecified'],
  ['fe80::1', 'link_local'],
  ['febf:ffff::1', 'link_local'],
  ['fc00::1', 'unique_local'],
  ['fd00:ec2::254', 'unique_local'],
  ['fdff:ffff::1', 'unique_local'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'multicast'],
  // IPv6 forms that embed IPv4: refused whatever they embed, public or not
  ['::ffff:127.0.0.1', 'ipv4_embedded'],
  ['::ffff:7f00:1', 'ipv4_embedded'],
  ['0:0:0:0:0:ffff:7f00:1', 'ipv4_embedded'],
  ['::ffff:10.0.0.1', 'ipv4_embedded'],
  ['::ffff:169.254.169.254', 'ipv4_embedded'],
  ['::ffff:8.8.8.8', 'ipv4_embedded'],
  ['::127.0.0.1', 'ipv4_embedded'],
  ['::8.8.8.8', 'ipv4_embedded'],
  ['::ffff:0:8.8.8.8', 'ipv4_embedded'],
  ['64:ff9b::7f00:1', 'ipv4_embedded'],
  ['64:ff9b::8.8.8.8', 'ipv4_embedded'],
  ['64:ff9b:1::a00:1', 'ipv4_embedded'],
  ['2002:7f00:1::1', 'ipv4_embedded'],
  ['2002:808:808::1', 'ipv4_embedded'],
  ['2001::1', 'ipv4_embedded'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'ipv4_embedded'],
  // IPv6 reserved and non-global
  ['2001:db8::1', 'reserved'],
  ['2001:2::1', 'reserved'],
  ['100::1', 'reserved'],
  ['fec0::1', 'reserved'],
  ['3fff::1', 'reserved'],
  ['5f00::1', 'reserved'],
  ['4000::1', 'not_global'],
  ['1000::1', 'not_global'],
  ['e000::1', 'not_global'],
  // scoped and malformed
  ['fe80::1%eth0', 'scoped'],
  ['2001:4860:4860::8888%1', 'scoped'],
  ['', 'invalid'],
  ['localhost', 'invalid'],
  ['example.com', 'invalid'],
  ['2130706433', 'invalid'],
  ['0177.0.0.1', 'invalid'],
  ['0x7f.0.0.1', 'invalid'],
  ['127.1', 'invalid'],
  ['1.2.3.256', 'invalid'],
  ['[::1]', 'invalid'],
  [' 8.8.8.8', 'invalid'],
  ['8.8.8.8/32', 'invalid'],
];

describe('the address policy', () => {
  it.each(PUBLIC)('allows the public unicast address %s', (ip) => {
    expect(judgeAddress(ip)).toEqual({ allowed: true, address: ip, family: ip.includes(':') ? 6 : 4 });
    expect(isPublicAddress(ip)).toBe(true);
    expect(addressRefusalReason(ip)).toBeNull();
  });

  it.each(REFUSED)('refuses %s as %s', (ip, range) => {
    const verdict = judgeAddress(ip);
    expect(verdict).toMatchObject({ allowed: false, range });
    expect(isPublicAddress(ip)).toBe(false);
    expect(addressRefusalReason(ip)).toMatch(/\w/);
  });

  it('lets loopback through with the allowance, and nothing else that was refused', () => {
    expect(judgeAddress('127.0.0.1', { allowLoopback: true }).allowed).toBe(true);
    expect(judgeAddress('127.8.9.10', { allowLoopback: true }).allowed).toBe(true);
    expect(judgeAddress('::1', { allowLoopback: true }).allowed).toBe(true);
    for (const [ip, range] of REFUSED) {
      if (range === 'loopback') continue;
      expect(judgeAddress(ip, { allowLoopback: true }), ip).toMatchObject({ allowed: false, range });
    }
    // loopback wrapped in IPv6 stays refused even with the allowance
    expect(judgeAddress('::ffff:127.0.0.1', { allowLoopback: true }).allowed).toBe(false);
    // isPublicAddress never counts loopback
    expect(isPublicAddress('127.0.0.1')).toBe(false);
  });

  it('gives a reason a maker can read', () => {
    expect(addressRefusalReason('10.0.0.1')).toBe('a private network address');
    expect(addressRefusalReason('169.254.169.254')).toMatch(/metadata/);
    expect(addressRefusalReason('8.8.8.8')).toBeNull();
  });
});
