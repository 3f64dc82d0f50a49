import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { vi } from 'vitest';
import type { ResolvedAddress, Resolver } from '../../src/sites/guarded-agent.ts';

/**
 * Test sites on loopback, and the network rule enforced in the test process itself: every
 * socket undici opens passes through `watchSockets`, which records the addresses handed to it
 * and refuses (without dialing) any that is not loopback, whatever the code under test decided.
 */

export interface TestSite {
  origin: string;
  port: number;
  /** TCP connections the server accepted. */
  connections(): number;
  /** HTTP requests it received (path and query). */
  requests: string[];
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function listen(server: http.Server | https.Server, scheme: 'http' | 'https', host: string): Promise<TestSite> {
  let connections = 0;
  const requests: string[] = [];
  const sockets = new Set<net.Socket>();
  server.on(scheme === 'https' ? 'secureConnection' : 'connection', () => connections++);
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('request', (req: http.IncomingMessage) => requests.push(req.url ?? ''));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    connections: () => connections,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function startSite(handler: Handler, host = '127.0.0.1'): Promise<TestSite> {
  return listen(http.createServer(handler), 'http', host);
}

export function startHttpsSite(handler: Handler, cert: SelfSignedCert): Promise<TestSite> {
  return listen(https.createServer({ key: cert.key, cert: cert.cert }, handler), 'https', '127.0.0.1');
}

export interface SelfSignedCert {
  key: string;
  cert: string;
}

/** A throwaway certificate for `site.test` (or the names given) and 127.0.0.1, made with the openssl CLI. */
export async function makeSelfSignedCert(names: readonly string[] = ['site.test']): Promise<SelfSignedCert> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'site-cert-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    await promisify(execFile)('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', key, '-out', cert, '-days', '1', '-subj', `/CN=${names[0]}`,
      '-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')},IP:127.0.0.1`,
    ]);
    return { key: await readFile(key, 'utf8'), cert: await readFile(cert, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A resolver answering from a fixed table; names not in it do not resolve. Also counts calls.
 */
export function tableResolver(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: net.isIP(address) }));
  };
  return Object.assign(resolve, { calls });
}

function isLoopback(address: string): boolean {
  return net.isIPv4(address) ? address.startsWith('127.') : address === '::1';
}

export interface SocketWatch {
  /** Every socket requested, with the addresses it was given to dial. */
  sockets: { host: string; dialed: string[] }[];
  /** All addresses handed to sockets. */
  dialed(): string[];
  /** Non-loopback addresses the code under test tried to dial (always refused here). */
  violations: string[];
  /**
   * Simulates a socket layer that ignores the guard's lookup: sockets resolve names with the
   * system resolver (allowed for `localhost` only). For testing the check after connect.
   */
  dropLookup: boolean;
  restore(): void;
}

type LookupCallback = (err: Error | null, address?: string | { address: string; family: number }[], family?: number) => void;
type LookupFn = (hostname: string, options: object, callback: LookupCallback) => void;

/**
 * Spies on net.connect and tls.connect (how undici opens sockets). An IP-literal host that is
 * not loopback throws before any socket exists; a name's lookup answer is checked the same way
 * before the socket sees it. A socket asked for without a lookup function would fall back to
 * the system's DNS, so it is only let through for `localhost`.
 */
export function watchSockets(): SocketWatch {
  const watch: SocketWatch = {
    sockets: [],
    dialed: () => watch.sockets.flatMap((s) => s.dialed),
    violations: [],
    dropLookup: false,
    restore: () => {
      netSpy.mockRestore();
      tlsSpy.mockRestore();
    },
  };

  function guard(options: Record<string, unknown>): Record<string, unknown> {
    const host = String(options.host ?? 'localhost');
    const record = { host, dialed: [] as string[] };
    watch.sockets.push(record);
    if (net.isIP(host)) {
      if (!isLoopback(host)) {
        watch.violations.push(host);
        throw new Error(`test network rule: refused to dial ${host}`);
      }
      record.dialed.push(host);
      return options;
    }
    const inner = options.lookup as LookupFn | undefined;
    if (!inner || watch.dropLookup) {
      if (host !== 'localhost') {
        watch.violations.push(host);
        throw new Error(`test network rule: ${host} would go to the system resolver`);
      }
      const { lookup: _dropped, ...rest } = options;
      record.dialed.push('(system lookup of localhost)');
      return rest;
    }
    const checked: LookupFn = (hostname, lookupOpts, callback) =>
      inner(hostname, lookupOpts, (err, address, family) => {
        if (err) return callback(err, address, family);
        const list = Array.isArray(address) ? address.map((a) => a.address) : [String(address)];
        const bad = list.filter((a) => !isLoopback(a));
        if (bad.length) {
          watch.violations.push(...bad);
          return callback(new Error(`test network rule: refused to dial ${bad.join(', ')}`));
        }
        record.dialed.push(...list);
        callback(null, address, family);
      });
    return { ...options, lookup: checked };
  }

  const originalNet = net.connect;
  const originalTls = tls.connect;
  const netSpy = vi.spyOn(net, 'connect').mockImplementation(((...args: unknown[]) => {
    const [first, ...rest] = args;
    if (typeof first !== 'object' || first === null) throw new Error('test network rule: net.connect without an options object');
    return (originalNet as (...a: unknown[]) => net.Socket)(guard(first as Record<string, unknown>), ...rest);
  }) as typeof net.connect);
  const tlsSpy = vi.spyOn(tls, 'connect').mockImplementation(((...args: unknown[]) => {
    const [first, ...rest] = args;
    if (typeof first !== 'object' || first === null) throw new Error('test network rule: tls.connect without an options object');
    return (originalTls as (...a: unknown[]) => tls.TLSSocket)(guard(first as Record<string, unknown>), ...rest);
  }) as typeof tls.connect);
  return watch;
}
