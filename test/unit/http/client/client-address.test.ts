import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddresses, type TrustProxy } from '../../../../src/http/client/client-address.ts';

/** A request as Node hands it over: a socket address and the headers it arrived with. */
function request(socket: string, forwardedFor?: string | string[]): IncomingMessage {
  return { socket: { remoteAddress: socket }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } } as unknown as IncomingMessage;
}

const read = (trustProxy: TrustProxy, socket: string, forwardedFor?: string | string[], ipv6Prefix = 64) =>
  clientAddresses({ trustProxy, ipv6Prefix }).of(request(socket, forwardedFor));

const PROXY = '10.1.1.1';
// What a client writes itself (leftmost) and what the proxy appends (the address it saw).
const FORGED = '203.0.113.7, 198.51.100.3';

describe('the client address', () => {
  it('is the socket when nobody is trusted, whatever X-Forwarded-For says', () => {
    expect(read(false, PROXY, FORGED).address).toBe(PROXY);
  });

  it('under a hop count, is the Nth entry from the right', () => {
    expect(read(1, PROXY, FORGED).address).toBe('198.51.100.3');
    expect(read(2, PROXY, FORGED).address).toBe('203.0.113.7');
    // More hops than entries: the leftmost entry.
    expect(read(5, PROXY, FORGED).address).toBe('203.0.113.7');
    // No header: the socket.
    expect(read(1, PROXY).address).toBe(PROXY);
  });

  it('under an address list, is the first untrusted address from the right', () => {
    expect(read(['10.0.0.0/8'], PROXY, FORGED).address).toBe('198.51.100.3');
    expect(read(['10.0.0.0/8'], PROXY, '203.0.113.7, 198.51.100.3, 10.2.2.2').address).toBe('198.51.100.3');
    expect(read('10.0.0.0/8, 198.51.100.0/24', PROXY, FORGED).address).toBe('203.0.113.7');
    // A socket that is not a listed proxy: its header is not read at all.
    expect(read(['10.0.0.0/8'], '192.0.2.1', FORGED).address).toBe('192.0.2.1');
  });

  it('under true, is the leftmost entry (a proxy that overwrites the header)', () => {
    expect(read(true, PROXY, FORGED).address).toBe('203.0.113.7');
  });

  it('reads several X-Forwarded-For headers as one list, in order', () => {
    expect(read(1, PROXY, ['203.0.113.7', '198.51.100.3']).address).toBe('198.51.100.3');
  });

  it.each([
    ['empty', ''],
    ['blank', '  '],
    ['an empty entry', '203.0.113.7, , 198.51.100.3'],
    ['a name', 'evil.example'],
    ['a port', '198.51.100.3:443'],
    ['garbage', 'unknown'],
    ['an address out of range', '198.51.100.300'],
  ])('is the socket when X-Forwarded-For is %s', (_what, header) => {
    for (const trust of [true, 1, 3, ['10.0.0.0/8']] as TrustProxy[]) expect(read(trust, PROXY, header).address).toBe(PROXY);
  });

  it('spells addresses one way', () => {
    expect(read(false, '::ffff:127.0.0.1').address).toBe('127.0.0.1');
    expect(read(1, PROXY, '2001:0DB8:0000:0000:0000:0000:0000:0001').address).toBe('2001:db8::1');
    expect(read(1, PROXY, '::FFFF:198.51.100.3').address).toBe('198.51.100.3');
    // A trusted socket given as IPv4-mapped IPv6 is still the listed proxy.
    expect(read(['127.0.0.1'], '::ffff:127.0.0.1', FORGED).address).toBe('198.51.100.3');
  });
});

describe('the client network', () => {
  it('is an IPv4 client\u2019s address', () => {
    expect(read(1, PROXY, '198.51.100.3').network).toBe('198.51.100.3');
  });

  it('is an IPv6 client\u2019s /64: every address of one /64 is one client', () => {
    const a = read(1, PROXY, '2001:db8:1:2::1');
    const b = read(1, PROXY, '2001:db8:1:2:ffff:ffff:ffff:ffff');
    const other = read(1, PROXY, '2001:db8:1:3::1');
    expect(a.network).toBe('2001:db8:1:2::/64');
    expect(b.network).toBe(a.network);
    expect(other.network).toBe('2001:db8:1:3::/64');
    expect(a.address).toBe('2001:db8:1:2::1');
  });

  it('follows IPV6_CLIENT_PREFIX', () => {
    expect(read(1, PROXY, '2001:db8:1:2::1', 48).network).toBe('2001:db8:1::/48');
    expect(read(1, PROXY, '2001:db8:1:2::1', 128).network).toBe('2001:db8:1:2::1');
  });

  it('counts ::1 as its /64 too', () => {
    expect(read(false, '::1').network).toBe('::/64');
  });
});

describe('the trust function Fastify is given', () => {
  it('answers by hop for a hop count, by address for a list', () => {
    const hops = clientAddresses({ trustProxy: 2, ipv6Prefix: 64 }).trust;
    expect([hops('x', 0), hops('x', 1), hops('x', 2)]).toEqual([true, true, false]);
    const list = clientAddresses({ trustProxy: ['127.0.0.1'], ipv6Prefix: 64 }).trust;
    expect([list('127.0.0.1', 0), list('127.0.0.2', 0)]).toEqual([true, false]);
    expect(clientAddresses({ trustProxy: false, ipv6Prefix: 64 }).trust('127.0.0.1', 0)).toBe(false);
  });
});
