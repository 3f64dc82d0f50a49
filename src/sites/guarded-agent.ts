import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { SecureContextOptions } from 'node:tls';
import type * as Undici from 'undici';
import type { Agent, buildConnector } from 'undici';
import { judgeAddress, type AddressRange } from './address-policy.ts';

/**
 * An undici Agent that only ever opens connections to addresses the address policy allows.
 *
 * The check sits where the connection is made, so there is no gap between checking a name and
 * connecting to it (a DNS answer that changes between the two cannot slip through):
 * - a host name goes through the connector's `lookup`, which resolves it, judges EVERY address
 *   in the answer and refuses the connection if any one is refused (an answer mixing a public and
 *   a private address is a rebinding attempt, not a reason to pick the good one); the addresses
 *   handed to the socket are exactly those judged;
 * - a host that is an IP literal never goes through `lookup` (Node connects to it directly), so
 *   the connector judges it before creating a socket;
 * - once connected, the socket's remote address is judged again, as a second line should a
 *   future Node or undici version bypass `lookup`.
 * Each new origin gets its own connection and so its own check, which is why redirects need no
 * special treatment here. The Agent reads no proxy settings from the environment.
 */

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses. Tests inject one; the service uses the system's. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A connection refused by the address policy. Raised inside undici; the fetchers translate it. */
export class BlockedAddressError extends Error {
  readonly code = 'ERR_SITE_ADDRESS_BLOCKED';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: AddressRange,
    readonly reason: string,
  ) {
    super(`${host} leads to ${address}, ${reason}`);
    this.name = 'BlockedAddressError';
  }
}

/** The resolver failed or found nothing. */
export class HostLookupError extends Error {
  readonly code = 'ERR_SITE_LOOKUP_FAILED';
  constructor(
    readonly host: string,
    cause?: unknown,
  ) {
    super(`${host} does not resolve`, cause === undefined ? undefined : { cause });
    this.name = 'HostLookupError';
  }
}

export interface GuardedAgentOptions {
  /** Defaults to the system resolver (`dns.promises.lookup` with `all`). */
  resolver?: Resolver;
  /** Let loopback through (tests only); see address-policy.ts. */
  allowLoopback?: boolean;
  /** Extra trusted certificates, for tests that serve HTTPS with a self-signed certificate. */
  ca?: SecureContextOptions['ca'];
  /** Time allowed to open one connection (TCP and TLS). */
  connectTimeoutMs?: number;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function guardedLookup(resolver: Resolver, allowLoopback: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolver(hostname).then(
      (answer) => {
        if (answer.length === 0) return callback(new HostLookupError(hostname), []);
        for (const { address } of answer) {
          const verdict = judgeAddress(address, { allowLoopback });
          if (!verdict.allowed) return callback(new BlockedAddressError(hostname, address, verdict.range, verdict.reason), []);
        }
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const usable = answer
          .map(({ address }) => ({ address, family: isIP(address) }))
          .filter((a) => wanted === undefined || a.family === wanted);
        const first = usable[0];
        if (!first) return callback(new HostLookupError(hostname), []);
        if (options.all) callback(null, usable);
        else callback(null, first.address, first.family);
      },
      (err: unknown) => callback(new HostLookupError(hostname, err), []),
    );
  };
}

/** The host part of a URL as Node connects to it: IPv6 literals lose their brackets. */
function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Judges a URL host when it is an IP literal; null when it is a name (names are judged through
 * the lookup at connect time) or an allowed literal.
 */
export function refuseLiteralHost(hostname: string, allowLoopback: boolean): BlockedAddressError | null {
  const host = unbracket(hostname);
  if (isIP(host) === 0) return null;
  const verdict = judgeAddress(host, { allowLoopback });
  return verdict.allowed ? null : new BlockedAddressError(host, host, verdict.range, verdict.reason);
}

let undiciModule: Promise<typeof Undici> | undefined;

/**
 * undici, loaded on first use rather than when the service starts: only makers' submissions,
 * badge checks and OAuth client documents fetch anything. It is a CommonJS package: from the
 * bundle (dist/) its exports are the namespace's `default`, from the sources Node also lists
 * them by name.
 */
export function loadUndici(): Promise<typeof Undici> {
  return (undiciModule ??= import('undici').then((ns) => (ns as unknown as { default?: typeof Undici }).default ?? ns));
}

/** The guarded Agent (undici is loaded on the first call). */
export async function createGuardedAgent(opts: GuardedAgentOptions = {}): Promise<Agent> {
  const { Agent, buildConnector } = await loadUndici();
  const allowLoopback = opts.allowLoopback ?? false;
  const base = buildConnector({
    timeout: opts.connectTimeoutMs ?? 10_000,
    lookup: guardedLookup(opts.resolver ?? systemResolver, allowLoopback),
    ...(opts.ca === undefined ? {} : { ca: opts.ca }),
  } as buildConnector.BuildOptions);

  const connect: buildConnector.connector = (options, callback) => {
    const literal = refuseLiteralHost(options.hostname, allowLoopback);
    if (literal) {
      queueMicrotask(() => callback(literal, null));
      return;
    }
    base(options, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error('no socket'), null);
      const remote = socket.remoteAddress ?? '';
      const verdict = judgeAddress(remote, { allowLoopback });
      if (!verdict.allowed) {
        socket.destroy();
        return callback(new BlockedAddressError(options.hostname, remote, verdict.range, verdict.reason), null);
      }
      callback(null, socket);
    });
  };

  return new Agent({ connect, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 10_000 });
}
