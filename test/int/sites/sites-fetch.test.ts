import type http from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGuardedFetch, createSiteFetcher, readBodyLimited, SITE_FETCH_LIMITS, type SiteFetcher } from '../../../src/sites/safe-fetch.ts';
import { SiteFetchError } from '../../../src/sites/site-fetch-error.ts';
import {
  makeSelfSignedCert,
  startHttpsSite,
  startSite,
  tableResolver,
  watchSockets,
  type SelfSignedCert,
  type SocketWatch,
  type TestSite,
} from '../../helpers/site-network.ts';

/**
 * The safe fetcher against real HTTP(S) servers on 127.0.0.1, with the loopback allowance on and
 * names resolved by an injected table (site.test and other.test both lead to 127.0.0.1).
 */

const MIB2 = SITE_FETCH_LIMITS.maxBodyBytes;
const resolver = tableResolver({ 'site.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] });

let site: TestSite;
let secure: TestSite;
let cert: SelfSignedCert;
let watch: SocketWatch;
let fetcher: SiteFetcher;
let quick: SiteFetcher;
const drips = new Set<NodeJS.Timeout>();

function html(res: http.ServerResponse, body: string | Buffer, headers: Record<string, string | number> = {}): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(body);
}

function sized(res: http.ServerResponse, bytes: number, withLength: boolean): void {
  res.writeHead(200, { 'content-type': 'text/html', ...(withLength ? { 'content-length': bytes } : {}) });
  // in 64 KiB writes, so a body without Content-Length arrives chunked
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let left = bytes;
  while (left > 0) {
    const n = Math.min(left, chunk.length);
    res.write(n === chunk.length ? chunk : chunk.subarray(0, n));
    left -= n;
  }
  res.end();
}

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const p = url.pathname;
  const redirect = /^\/redirect\/(\d+)$/.exec(p);
  if (redirect) {
    const n = Number(redirect[1]);
    // alternate hosts and absolute/relative Locations along the chain
    const next = n === 1 ? '/page' : `/redirect/${n - 1}`;
    const location = n % 2 === 0 ? `http://other.test:${site.port}${next}` : next;
    res.writeHead(n % 3 === 0 ? 301 : 302, { location });
    return void res.end();
  }
  switch (p) {
    case '/page':
      return html(res, `<title>Page from ${req.headers.host}</title>`);
    case '/xhtml':
      res.writeHead(200, { 'content-type': 'application/xhtml+xml' });
      return void res.end('<html xmlns="http://www.w3.org/1999/xhtml"><title>x</title></html>');
    case '/headers':
      return html(res, JSON.stringify({ ua: req.headers['user-agent'], accept: req.headers.accept, encoding: req.headers['accept-encoding'] }));
    case '/see-other':
      res.writeHead(303, { location: '/page#fragment' });
      return void res.end();
    case '/to-ftp':
      res.writeHead(302, { location: 'ftp://site.test/file' });
      return void res.end();
    case '/to-js':
      res.writeHead(307, { location: 'javascript:alert(1)' });
      return void res.end();
    case '/to-credentials':
      res.writeHead(302, { location: `http://user:secret@site.test:${site.port}/page` });
      return void res.end();
    case '/no-location':
      res.writeHead(302);
      return void res.end();
    case '/hang':
      return; // never answers
    case '/drip': {
      res.writeHead(200, { 'content-type': 'text/html' });
      const timer = setInterval(() => res.write('.'), 20);
      drips.add(timer);
      res.on('close', () => {
        clearInterval(timer);
        drips.delete(timer);
      });
      return;
    }
    case '/exact':
      return sized(res, MIB2, true);
    case '/exact-chunked':
      return sized(res, MIB2, false);
    case '/over':
      return sized(res, MIB2 + 1, true);
    case '/over-chunked':
      return sized(res, MIB2 + 1, false);
    case '/declared-huge':
      // promises 3 MB, sends nothing: only refusing before reading avoids the deadline
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': 3 * 1024 * 1024 });
      res.flushHeaders();
      return;
    case '/gzip':
      return html(res, gzipSync('<title>Compressed</title>'), { 'content-encoding': 'gzip' });
    case '/gzip-bomb':
      return html(res, gzipSync(Buffer.alloc(MIB2 + 1, 'a')), { 'content-encoding': 'gzip' });
    case '/odd-encoding':
      return html(res, 'xxxx', { 'content-encoding': 'x-unknown' });
    case '/pdf':
      res.writeHead(200, { 'content-type': 'application/pdf' });
      return void res.end('%PDF-1.4');
    case '/no-type':
      res.writeHead(200);
      return void res.end('<title>untyped</title>');
    case '/image':
      res.writeHead(200, { 'content-type': 'image/png' });
      return void res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    case '/json':
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ client_id: 'https://app.example/client.json' }));
    case '/json-1000':
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
      return void res.end(Buffer.alloc(1000, ' '));
    case '/json-1001':
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1001 });
      return void res.end(Buffer.alloc(1001, ' '));
    case '/json-1001-chunked':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(Buffer.alloc(600, ' '));
      return void res.end(Buffer.alloc(401, ' '));
    case '/status/500':
      res.writeHead(500, { 'content-type': 'text/html' });
      return void res.end('<p>boom</p>');
    case '/status/404':
      res.writeHead(404, { 'content-type': 'text/html' });
      return void res.end('<p>not here</p>');
    default:
      res.writeHead(404);
      return void res.end();
  }
}

beforeAll(async () => {
  watch = watchSockets();
  cert = await makeSelfSignedCert();
  site = await startSite(route);
  secure = await startHttpsSite((_req, res) => html(res, '<title>Secure</title>'), cert);
  fetcher = createSiteFetcher({ allowLoopback: true, resolver });
  quick = createSiteFetcher({ allowLoopback: true, resolver, timeoutMs: 400 });
});

beforeEach(() => {
  watch.violations.length = 0;
});

afterEach(() => {
  // the network rule: nothing but loopback was ever handed to a socket
  expect(watch.violations).toEqual([]);
  expect(watch.dialed().every((a) => a === '127.0.0.1')).toBe(true);
});

afterAll(async () => {
  for (const t of drips) clearInterval(t);
  await fetcher?.close();
  await quick?.close();
  await site?.close();
  await secure?.close();
  watch?.restore();
});

async function failure(p: Promise<unknown>): Promise<SiteFetchError> {
  const err = await p.then(
    () => {
      throw new Error('expected the fetch to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SiteFetchError);
  return err as SiteFetchError;
}

const at = (path: string, host = 'site.test') => `http://${host}:${site.port}${path}`;

describe('a page fetch', () => {
  it('returns the page, its final URL, type and charset', async () => {
    const page = await fetcher.fetch(at('/page#section'));
    expect(page).toMatchObject({ url: at('/page'), status: 200, contentType: 'text/html', charset: 'utf-8' });
    expect(page.body.toString()).toBe(`<title>Page from site.test:${site.port}</title>`);
  });

  it('accepts application/xhtml+xml', async () => {
    expect((await fetcher.fetch(at('/xhtml'))).contentType).toBe('application/xhtml+xml');
  });

  it('says what it is and what it accepts', async () => {
    const sent = JSON.parse((await fetcher.fetch(at('/headers'))).body.toString());
    expect(sent.ua).toMatch(/catalog-site-check/);
    expect(sent.accept).toMatch(/^text\/html/);
    expect(sent.encoding).toBe('gzip, br');
  });

  it('undoes gzip', async () => {
    expect((await fetcher.fetch(at('/gzip'))).body.toString()).toBe('<title>Compressed</title>');
  });

  it('refuses a content encoding it cannot read', async () => {
    expect((await failure(fetcher.fetch(at('/odd-encoding')))).code).toBe('bad_response');
  });

  it('refuses what is not HTML', async () => {
    for (const path of ['/pdf', '/json', '/image', '/no-type']) {
      const err = await failure(fetcher.fetch(at(path)));
      expect(err.code, path).toBe('not_html');
      expect(err.message).toMatch(/is not a web page/);
    }
  });

  it('fetches images as images, and refuses pages as images', async () => {
    expect((await fetcher.fetch(at('/image'), { kind: 'image' })).contentType).toBe('image/png');
    expect((await failure(fetcher.fetch(at('/page'), { kind: 'image' }))).code).toBe('not_image');
  });

  it('reports HTTP errors with their status', async () => {
    const err = await failure(fetcher.fetch(at('/status/500')));
    expect(err).toMatchObject({ code: 'http_status', status: 500 });
    expect(err.message).toMatch(/HTTP status 500/);
    expect(await failure(fetcher.fetch(at('/status/404')))).toMatchObject({ code: 'http_status', status: 404 });
    expect(await failure(fetcher.fetch(at('/no-location')))).toMatchObject({ code: 'http_status', status: 302 });
  });

  it('refuses URLs that are not http(s) or carry credentials, before any connection', async () => {
    const before = watch.sockets.length;
    for (const url of ['ftp://site.test/', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url', `http://user:pw@site.test:${site.port}/page`]) {
      expect((await failure(fetcher.fetch(url))).code, url).toBe('invalid_url');
    }
    expect(watch.sockets.length).toBe(before);
  });

  it('reports a name that does not resolve, and a port nobody listens on', async () => {
    const err = await failure(fetcher.fetch('http://nowhere.test/'));
    expect(err.code).toBe('dns_failed');
    expect(err.message).toMatch(/nowhere\.test/);
    const closed = await startSite(() => undefined);
    await closed.close();
    expect((await failure(fetcher.fetch(`http://site.test:${closed.port}/`))).code).toBe('connect_failed');
  });
});

describe('redirects', () => {
  it('follows 5, across hosts, re-resolving each', async () => {
    const calls = resolver.calls.length;
    const page = await fetcher.fetch(at('/redirect/5'));
    expect(page.url).toBe(at('/page', 'other.test'));
    expect(resolver.calls.slice(calls)).toContain('other.test');
  });

  it('refuses the 6th', async () => {
    const before = site.requests.length;
    const err = await failure(fetcher.fetch(at('/redirect/6')));
    expect(err.code).toBe('too_many_redirects');
    // the first request and five redirects followed; the sixth Location is never requested
    expect(site.requests.length - before).toBe(6);
  });

  it('follows a 303 and drops the fragment', async () => {
    expect((await fetcher.fetch(at('/see-other'))).url).toBe(at('/page'));
  });

  it('refuses a redirect to another scheme or to credentials', async () => {
    for (const path of ['/to-ftp', '/to-js', '/to-credentials']) {
      const err = await failure(fetcher.fetch(at(path)));
      expect(err.code, path).toBe('bad_redirect');
    }
  });
});

describe('the deadline', () => {
  it('stops a server that never answers', async () => {
    const err = await failure(quick.fetch(at('/hang')));
    expect(err.code).toBe('timeout');
    expect(err.message).toMatch(/did not answer completely/);
  });

  it('covers the body: a slow drip is cut off', async () => {
    expect((await failure(quick.fetch(at('/drip')))).code).toBe('timeout');
  });

  it('gives way to the caller’s own abort', async () => {
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    const pending = fetcher.fetch(at('/hang'), { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 50);
    await expect(pending).rejects.toBe(reason);
  });
});

describe('the body limit', () => {
  it('reads exactly 2 MiB, with and without Content-Length', async () => {
    expect((await fetcher.fetch(at('/exact'))).body.length).toBe(MIB2);
    expect((await fetcher.fetch(at('/exact-chunked'))).body.length).toBe(MIB2);
  });

  it('refuses one byte more, with and without Content-Length', async () => {
    for (const path of ['/over', '/over-chunked']) {
      const err = await failure(fetcher.fetch(at(path)));
      expect(err.code, path).toBe('too_large');
      expect(err.message).toMatch(/larger than 2 MB/);
    }
  });

  it('refuses a Content-Length over the limit before reading', async () => {
    // the server never sends the promised body: reading would run into the deadline
    expect((await failure(quick.fetch(at('/declared-huge')))).code).toBe('too_large');
  });

  it('counts decoded bytes: a gzip bomb is cut off', async () => {
    expect((await failure(fetcher.fetch(at('/gzip-bomb')))).code).toBe('too_large');
  });

  it('takes a lower limit per fetch', async () => {
    expect((await failure(fetcher.fetch(at('/exact'), { maxBytes: 1024 }))).code).toBe('too_large');
  });
});

describe('HTTPS', () => {
  it('fetches a site whose certificate is trusted (self-signed, given as ca)', async () => {
    const trusting = createSiteFetcher({ allowLoopback: true, resolver, ca: cert.cert });
    try {
      const page = await trusting.fetch(`https://site.test:${secure.port}/`);
      expect(page.body.toString()).toBe('<title>Secure</title>');
    } finally {
      await trusting.close();
    }
  });

  it('refuses a certificate it does not trust', async () => {
    const err = await failure(fetcher.fetch(`https://site.test:${secure.port}/`));
    expect(err.code).toBe('connect_failed');
    expect(err.message).toMatch(/certificate/);
  });
});

describe('the guarded fetch', () => {
  const guarded = createGuardedFetch({ allowLoopback: true, resolver, maxBodyBytes: 1000 });

  it('answers like fetch', async () => {
    const res = await guarded(at('/json'));
    expect(res.status).toBe(200);
    expect(res.url).toBe(at('/json'));
    expect(await res.json()).toEqual({ client_id: 'https://app.example/client.json' });
  });

  it('returns a redirect instead of following it', async () => {
    const before = site.requests.length;
    const res = await guarded(at('/redirect/2'), { redirect: 'follow' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`http://other.test:${site.port}/redirect/1`);
    expect(site.requests.length - before).toBe(1);
  });

  it('works when called the way the OAuth server calls its fetch hook', async () => {
    const unusedDispatcher = {
      dispatch() {
        throw new Error('the caller’s dispatcher must not be used');
      },
    };
    const res = await guarded(new URL(at('/json')), {
      method: 'GET',
      headers: new Headers({ accept: 'application/json', 'user-agent': '' }),
      redirect: 'manual',
      signal: AbortSignal.timeout(2500),
      dispatcher: unusedDispatcher,
    });
    expect(res.status).toBe(200);
    expect(JSON.parse((await readBodyLimited(res, 5 * 1024)).toString())).toHaveProperty('client_id');
    // the caller's headers (here Node's own Headers class) are sent
    const echoed = await guarded(at('/headers'), { headers: new Headers({ accept: 'application/json' }), dispatcher: unusedDispatcher });
    expect(JSON.parse(await echoed.text())).toMatchObject({ accept: 'application/json' });
  });

  it('limits the body: 1000 bytes read, 1001 refused by Content-Length or while reading', async () => {
    expect((await (await guarded(at('/json-1000'))).arrayBuffer()).byteLength).toBe(1000);
    expect((await failure(guarded(at('/json-1001')))).code).toBe('too_large');
    const chunked = await guarded(at('/json-1001-chunked'));
    expect((await failure(chunked.text())).code).toBe('too_large');
  });

  it('keeps the caller’s signal, and has its own deadline', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const pending = guarded(at('/hang'), { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 50);
    await expect(pending).rejects.toBe(reason);
    const impatient = createGuardedFetch({ allowLoopback: true, resolver, timeoutMs: 300 });
    expect((await failure(impatient(at('/hang')))).code).toBe('timeout');
  });

  it('refuses non-http(s) URLs', async () => {
    expect((await failure(guarded('file:///etc/passwd'))).code).toBe('invalid_url');
  });
});

describe('readBodyLimited', () => {
  it('reads up to the limit and refuses one byte more', async () => {
    const plain = createGuardedFetch({ allowLoopback: true, resolver });
    expect((await readBodyLimited(await plain(at('/json-1000')), 1000)).length).toBe(1000);
    expect((await failure(readBodyLimited(await plain(at('/json-1001')), 1000))).code).toBe('too_large');
    expect((await failure(readBodyLimited(await plain(at('/json-1001-chunked')), 1000))).code).toBe('too_large');
  });
});
