import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import ipaddr from 'ipaddr.js';

/**
 * Who a request comes from: the one reading of the client address, for Fastify (its trust
 * function), the direct read path, the MCP path and the authorization server alike.
 *
 * The rule is proxy-addr's (and nginx's `real_ip_recursive`): walk from the socket leftwards
 * through `X-Forwarded-For` while the address at hand is a trusted proxy; the first address that
 * is not is the client. Entries left of it were written by the client itself and are never read.
 * - `false`: nobody is trusted, the socket address is the client;
 * - a hop count N: the socket and N-1 further hops are proxies, the Nth entry from the right is
 *   the client (fewer entries than that: the leftmost);
 * - a list of addresses or CIDR ranges: the proxies are those;
 * - `true`: everybody is trusted, the leftmost entry is the client. Only right behind a proxy that
 *   overwrites the header (the service warns at start).
 * A header that is empty or holds anything but IP addresses is read as absent: the socket address.
 *
 * Budgets count a client by its network: an IPv4 client by its address, an IPv6 client by its
 * leading IPV6_CLIENT_PREFIX bits (a /64 by default, the block one customer is given).
 */
export type TrustProxy = boolean | number | string | readonly string[];

interface Client {
  /** The client's address, in canonical spelling (IPv4-mapped IPv6 as IPv4, IPv6 by RFC 5952). */
  readonly address: string;
  /** What budgets and caps count: the IPv4 address, or the IPv6 network (`2001:db8:1:2::/64`). */
  readonly network: string;
}

export interface ClientAddresses {
  /** The client of a request (kept with it: a second reading costs nothing). */
  of(req: IncomingMessage): Client;
  /** Whether the address at `hop` (0 = the socket) is a trusted proxy: Fastify's trustProxy function. */
  readonly trust: (address: string, hop: number) => boolean;
}

export interface ClientAddressOptions {
  readonly trustProxy: TrustProxy;
  readonly ipv6Prefix: number;
}

/** Logged once at start under TRUST_PROXY=true. */
export const TRUST_ALL_WARNING =
  'TRUST_PROXY=true believes the leftmost X-Forwarded-For entry, which a client writes itself: right only behind a proxy that overwrites the header; otherwise every request can choose its address and budget. Set TRUST_PROXY to the proxy addresses instead (docs/operating.md#behind-a-proxy).';

const NOBODY = (): boolean => false;
const EVERYBODY = (): boolean => true;

function trustFunction(trust: TrustProxy): (address: string, hop: number) => boolean {
  if (trust === false) return NOBODY;
  if (trust === true) return EVERYBODY;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  const list = typeof trust === 'string' ? trust.split(',').map((it) => it.trim()) : [...trust];
  return proxyAddr.compile(list);
}

/** The canonical spelling of an address, or undefined for anything that is not one. */
function canonical(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(text)) return undefined;
  const parsed = ipaddr.parse(text);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
}

/** The entries of X-Forwarded-For, right to left; undefined when one is not an address (the header is then ignored). */
function forwardedFor(header: string | string[] | undefined): string[] | undefined {
  if (header === undefined) return [];
  const text = Array.isArray(header) ? header.join(',') : header;
  const entries = text.split(',');
  const out: string[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!.trim();
    if (!ipaddr.isValid(entry)) return undefined;
    out.push(entry);
  }
  return out;
}

const CLIENT = Symbol('client');
type Remembered = IncomingMessage & { [CLIENT]?: Client };

export function clientAddresses(options: ClientAddressOptions): ClientAddresses {
  const trust = trustFunction(options.trustProxy);
  const prefix = options.ipv6Prefix;
  const networks = new Map<string, string>();
  const networkOf = (address: ipaddr.IPv4 | ipaddr.IPv6, spelled: string): string => {
    if (address.kind() === 'ipv4' || prefix === 128) return spelled;
    let network = networks.get(spelled);
    if (network === undefined) {
      network = `${ipaddr.IPv6.networkAddressFromCIDR(`${spelled}/${prefix}`).toString()}/${prefix}`;
      if (networks.size >= 10_000) networks.clear();
      networks.set(spelled, network);
    }
    return network;
  };
  const clientFrom = (text: string): Client => {
    const parsed = canonical(text);
    if (parsed === undefined) return { address: text, network: text };
    const address = parsed.toString();
    return { address, network: networkOf(parsed, address) };
  };

  const read = (req: IncomingMessage): Client => {
    const socket = req.socket.remoteAddress ?? '';
    if (trust === NOBODY || !trust(socket, 0)) return clientFrom(socket);
    const entries = forwardedFor(req.headers['x-forwarded-for']);
    if (entries === undefined || entries.length === 0) return clientFrom(socket);
    for (let i = 0; i < entries.length - 1; i++) {
      if (!trust(entries[i]!, i + 1)) return clientFrom(entries[i]!);
    }
    return clientFrom(entries[entries.length - 1]!);
  };

  return {
    trust,
    of(req) {
      const r = req as Remembered;
      return (r[CLIENT] ??= read(req));
    },
  };
}
