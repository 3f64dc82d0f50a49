import type http from 'node:http';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGuardedFetch, createSiteFetcher, type SiteFetcher } from '../../../src/sites/safe-fetch.ts';
import { SiteFetchError } from '../../../src/sites/site-fetch-error.ts';
import { startSite, tableResolver, watchSockets, type SocketWatch, type TestSite } from '../../helpers/site-network.ts';

/**
 * Server-side request forgery: no fetch may reach a private address. Nothing here sends a packet
 * anywhere but loopback: private, link-local, metadata, CGNAT and ULA addresses only ever come
 * from the injected resolver or from URLs, and every test asserts they were refused before any
 * socket was given an address to dial (watchSockets would refuse them anyway, and reports it).
 * Real servers listen on 127.0.0.1 and ::1 to show that refused loopback URLs never reach them.
 */

const RESOLVED: Record<string, string[]> = {
  'private10.test': ['10.0.0.1'],
  'private172.test': ['172.16.5.4'],
  'private192.test': ['192.168.1.1'],
  'metadata.test': ['169.254.169.254'],
  'linklocal6.test': ['fe80::1'],
  'metadata6.test': ['fd00:ec2::254'],
  'cgnat.test': ['100.64.0.1'],
  'ula.test': ['fc00::1'],
  'mapped.test': ['::ffff:10.0.0.1'],
  'mapped-loopback.test': ['::ffff:127.0.0.1'],
  'nat64.test': ['64:ff9b::a00:1'],
  'sixtofour.test': ['2002:a00:1::1'],
  'zero.test': ['0.0.0.0'],
  'unspecified6.test': ['::'],
  'multicast.test': ['224.0.0.1'],
  'documentation.test': ['192.0.2.1'],
  'broadcast.test': ['255.255.255.255'],
  'garbage.test': ['not-an-address'],
  'internal.test': ['192.168.1.1'],
  'loop.test': ['127.0.0.1'],
  'site.test': ['127.0.0.1'],
  'mixed.test': ['127.0.0.1', '10.0.0.1'],
  'mixed-reversed.test': ['169.254.169.254', '127.0.0.1'],
  'mixed6.test': ['::1', 'fd00:ec2::254'],
};
const NOT_LOOPBACK = Object.keys(RESOLVED).filter((h) => !['loop.test', 'site.test'].includes(h) && !h.startsWith('mixed'));

let target: TestSite;
let target6: TestSite;
let watch: SocketWatch;
let strict: SiteFetcher;
let strictSystemDns: SiteFetcher;
let loose: SiteFetcher;
let resolver: ReturnType<typeof tableResolver>;

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const redirects: Record<string, string> = {
    '/to-10': 'http://10.0.0.1/',
    '/to-metadata': 'http://169.254.169.254/latest/meta-data/',
    '/to-metadata-decimal': 'http://2852039166/latest/meta-data/',
    '/to-metadata-mapped': 'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
    '/to-metadata6': 'http://[fd00:ec2::254]/latest/meta-data/',
    '/to-internal': 'http://internal.test/admin',
    '/to-zero': `http://0.0.0.0:${target.port}/`,
    '/to-https-private': 'https://private10.test/',
  };
  const location = redirects[new URL(req.url ?? '/', 'http://x').pathname];
  if (location) {
    res.writeHead(302, { location });
    return void res.end();
  }
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<title>loopback</title>');
}

beforeAll(async () => {
  watch = watchSockets();
  target = await startSite(route);
  target6 = await startSite(route, '::1');
  resolver = tableResolver(RESOLVED);
  strict = createSiteFetcher({ resolver });
  strictSystemDns = createSiteFetcher();
  loose = createSiteFetcher({ resolver, allowLoopback: true });
});

let socketsBefore = 0;
let connectionsBefore = 0;
beforeEach(() => {
  watch.violations.length = 0;
  socketsBefore = watch.sockets.length;
  connectionsBefore = target.connections() + target6.connections();
});

afterEach(() => {
  expect(watch.violations).toEqual([]);
  watch.dropLookup = false;
});

afterAll(async () => {
  await strict?.close();
  await strictSystemDns?.close();
  await loose?.close();
  await target?.close();
  await target6?.close();
  watch?.restore();
});

/** Addresses handed to sockets since the test began. */
function dialedInThisTest(): string[] {
  return watch.sockets.slice(socketsBefore).flatMap((s) => s.dialed);
}

async function refused(p: Promise<unknown>): Promise<SiteFetchError> {
  const err = await p.then(
    () => {
      throw new Error('expected the fetch to be refused');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SiteFetchError);
  expect((err as SiteFetchError).code).toBe('blocked_address');
  return err as SiteFetchError;
}

describe('loopback, with the allowance off', () => {
  it('refuses 127.0.0.1 and localhost on a listening server, which sees no connection', async () => {
    for (const url of [`http://127.0.0.1:${target.port}/`, `https://127.0.0.1:${target.port}/`, `http://localhost:${target.port}/`, `http://127.0.0.2:${target.port}/`]) {
      const fetcher = url.includes('localhost') ? strictSystemDns : strict;
      const err = await refused(fetcher.fetch(url));
      expect(err.message).toMatch(/loopback/);
    }
    expect(dialedInThisTest()).toEqual([]);
    expect(target.connections() + target6.connections()).toBe(connectionsBefore);
  });

  it('refuses every other spelling of loopback and of this host', async () => {
    const port = target.port;
    const forms: [string, string][] = [
      [`http://2130706433:${port}/`, '127.0.0.1'],
      [`http://0177.0.0.1:${port}/`, '127.0.0.1'],
      [`http://017700000001:${port}/`, '127.0.0.1'],
      [`http://0x7f.1:${port}/`, '127.0.0.1'],
      [`http://0x7f000001:${port}/`, '127.0.0.1'],
      [`http://127.1:${port}/`, '127.0.0.1'],
      [`http://127.0.1:${port}/`, '127.0.0.1'],
      [`http://[::1]:${target6.port}/`, '[::1]'],
      [`http://[0:0:0:0:0:0:0:1]:${target6.port}/`, '[::1]'],
      [`http://[::ffff:127.0.0.1]:${port}/`, '[::ffff:7f00:1]'],
      [`http://[::ffff:7f00:1]:${port}/`, '[::ffff:7f00:1]'],
      [`http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`, '[::ffff:7f00:1]'],
      [`http://[::127.0.0.1]:${port}/`, '[::7f00:1]'],
      [`http://0.0.0.0:${port}/`, '0.0.0.0'],
      [`http://0:${port}/`, '0.0.0.0'],
      [`http://[::]:${port}/`, '[::]'],
    ];
    for (const [url, host] of forms) {
      const err = await refused(strict.fetch(url));
      // the URL parser has already turned the spelling into a plain address
      expect(new URL(err.url).hostname, url).toBe(host);
    }
    expect(dialedInThisTest()).toEqual([]);
    expect(target.connections() + target6.connections()).toBe(connectionsBefore);
  });

  it('refuses a name the resolver maps to loopback, after resolving it', async () => {
    await refused(strict.fetch(`http://loop.test:${target.port}/`));
    expect(resolver.calls.at(-1)).toBe('loop.test');
    expect(dialedInThisTest()).toEqual([]);
    expect(target.connections()).toBe(connectionsBefore);
  });
});

describe('the loopback allowance', () => {
  it('lets the test site through', async () => {
    expect((await loose.fetch(`http://site.test:${target.port}/`)).status).toBe(200);
    expect(dialedInThisTest()).toEqual(['127.0.0.1']);
  });

  it('still refuses 0.0.0.0, :: and loopback wrapped in IPv6', async () => {
    for (const url of [`http://0.0.0.0:${target.port}/`, `http://[::]:${target.port}/`, `http://[::ffff:127.0.0.1]:${target.port}/`, `http://mapped-loopback.test:${target.port}/`]) {
      await refused(loose.fetch(url));
    }
    expect(dialedInThisTest()).toEqual([]);
    expect(target.connections()).toBe(connectionsBefore);
  });
});

describe('names that resolve to private addresses', () => {
  it.each(NOT_LOOPBACK)('refuses %s before any connection, with or without the allowance', async (host) => {
    for (const fetcher of [strict, loose]) {
      const calls = resolver.calls.length;
      const err = await refused(fetcher.fetch(`http://${host}/`));
      expect(resolver.calls.slice(calls)).toEqual([host]);
      expect(err.message).toMatch(new RegExp(host.replace('.', '\\.')));
    }
    expect(dialedInThisTest()).toEqual([]);
  });

  it('refuses an answer mixing an allowed and a refused address, whatever the order', async () => {
    for (const host of ['mixed.test', 'mixed-reversed.test', 'mixed6.test']) {
      await refused(loose.fetch(`http://${host}:${host === 'mixed6.test' ? target6.port : target.port}/`));
    }
    expect(dialedInThisTest()).toEqual([]);
    expect(target.connections() + target6.connections()).toBe(connectionsBefore);
  });

  it('refuses private IP literals without resolving anything', async () => {
    const calls = resolver.calls.length;
    for (const url of ['http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://[fe80::1]/', 'http://100.64.0.1/', 'http://192.168.1.1:8080/', 'https://172.16.0.1/']) {
      await refused(loose.fetch(url));
    }
    expect(resolver.calls.length).toBe(calls);
    expect(dialedInThisTest()).toEqual([]);
  });
});

describe('redirects from an allowed site', () => {
  it.each(['/to-10', '/to-metadata', '/to-metadata-decimal', '/to-metadata-mapped', '/to-metadata6', '/to-internal', '/to-zero', '/to-https-private'])(
    '%s is refused, and only the site itself was dialed',
    async (path) => {
      const requests = target.requests.length;
      await refused(loose.fetch(`http://site.test:${target.port}${path}`));
      expect(target.requests.slice(requests)).toEqual([path]);
      expect(dialedInThisTest().every((a) => a === '127.0.0.1')).toBe(true);
    },
  );
});

describe('the guarded fetch', () => {
  it('refuses loopback with the allowance off, even given a dispatcher of its own', async () => {
    const unguarded = new Agent();
    try {
      const guarded = createGuardedFetch({ resolver });
      for (const url of [`http://127.0.0.1:${target.port}/`, `http://loop.test:${target.port}/`, `http://[::ffff:127.0.0.1]:${target.port}/`]) {
        await refused(guarded(url, { dispatcher: unguarded }));
      }
    } finally {
      await unguarded.close();
    }
    expect(dialedInThisTest()).toEqual([]);
    expect(target.connections()).toBe(connectionsBefore);
  });

  it('refuses names that resolve to private addresses', async () => {
    const guarded = createGuardedFetch({ resolver, allowLoopback: true });
    for (const host of ['private10.test', 'metadata.test', 'metadata6.test', 'cgnat.test', 'mixed.test']) {
      await refused(guarded(`https://${host}/client.json`));
    }
    expect(dialedInThisTest()).toEqual([]);
  });
});

describe('the check after connect', () => {
  it('refuses a connection that reached a refused address by a path around the lookup', async () => {
    // sockets now resolve localhost themselves, as if the guard's lookup were not consulted
    watch.dropLookup = true;
    const requests = target.requests.length;
    const err = await refused(strict.fetch(`http://localhost:${target.port}/`));
    expect(err.message).toMatch(/loopback/);
    // the TCP connection was made (to loopback), but no request went over it
    expect(target.requests.length).toBe(requests);
  });
});
