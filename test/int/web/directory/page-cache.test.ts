import http from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../../../src/web/csp.ts';
import { registerDirectoryPages, type DirectoryPages } from '../../../../src/web/directory/directory-routes.tsx';
import { startTestStack, type TestStack } from '../../../helpers/stack.ts';
import { rawRequest, type RawAnswer } from '../../../helpers/twin-service.ts';

/**
 * The directory pages are rendered once per projection version and kept (src/web/page-cache.ts):
 * a second request is answered from what the first rendered, a change shows on the next request
 * once it is projected, and a kept page is sent with the same headers as a freshly rendered one.
 */
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: { SITE_URL: '' } });
});
afterAll(async () => {
  agent.destroy();
  await stack?.stop();
});

/** One of each kind of cached page. */
const PAGES = ['/', '/products/pixel-forge', '/categories/developer-tools', '/search?q=vector', '/search?tag=ai&page=1'];

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.baseUrl}${path}`, { headers: { accept: 'text/html', ...headers } });
  return { res, html: await res.text() };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
/** A GET with its answer's headers as sent: names (lower case) and values, in their order. */
const getRaw = (path: string, headers: Record<string, string> = {}) => rawRequest(agent, stack.baseUrl, 'GET', path, { accept: 'text/html', ...headers });

/** The budget's figures and the date move from one answer to the next: each shown by its name alone. */
const MOVING = new Set(['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit']);
function steadyHeaders(answer: RawAnswer): string[] {
  return answer.headers.map(([name, value]) => (MOVING.has(name) ? name : `${name}: ${value}`));
}

/** Pages answered by the direct read path, as the metrics count them. */
async function directPageAnswers(): Promise<number> {
  const text = await (await fetch(`${stack.baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('http_direct_answers_total{') && !l.includes('route="/api/'))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

async function setPunchline(slug: string, punchline: string): Promise<void> {
  await stack.db.pool.query('UPDATE catalog.listings SET punchline = $1 WHERE slug = $2', [punchline, slug]);
  await stack.settle();
}

describe('rendered once per projection version', () => {
  // The directory's routes on an app of their own over the running service's read side, to read
  // the page cache's counters.
  let app: FastifyInstance;
  let pages: DirectoryPages;
  beforeAll(async () => {
    app = Fastify();
    pages = registerDirectoryPages(app, { read: stack.service.read, config: stack.service.config });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a second request for a page is answered from the first one’s rendering, until the projection changes', async () => {
    for (const path of PAGES) {
      const { hits, misses } = pages.cache.stats;
      const first = await app.inject({ url: path });
      expect(first.statusCode, path).toBe(200);
      expect(pages.cache.stats, path).toEqual({ hits, misses: misses + 1 });
      const second = await app.inject({ url: path });
      expect(second.statusCode, path).toBe(200);
      expect(second.body, path).toBe(first.body);
      expect(second.headers.etag, path).toBe(first.headers.etag);
      expect(pages.cache.stats, path).toEqual({ hits: hits + 1, misses: misses + 1 });
    }

    const before = await app.inject({ url: '/products/query-pilot' });
    await setPunchline('query-pilot', 'Cached until this sentence is projected');
    const { hits, misses } = pages.cache.stats;
    const after = await app.inject({ url: '/products/query-pilot' });
    expect(pages.cache.stats).toEqual({ hits, misses: misses + 1 });
    expect(after.body).toContain('Cached until this sentence is projected');
    expect(after.headers.etag).not.toBe(before.headers.etag);
    // Every page kept from the old version is rendered again, the unchanged ones too.
    await app.inject({ url: '/' });
    expect(pages.cache.stats).toEqual({ hits, misses: misses + 2 });
    await app.inject({ url: '/' });
    expect(pages.cache.stats).toEqual({ hits: hits + 1, misses: misses + 2 });
  });

  it('an answer that is not a 200 is never kept', async () => {
    const { hits, misses } = pages.cache.stats;
    for (let i = 0; i < 2; i++) {
      expect((await app.inject({ url: '/search?page=0' })).statusCode).toBe(400);
      expect((await app.inject({ url: '/categories/developer-tools?page=x' })).statusCode).toBe(400);
    }
    expect(pages.cache.stats).toEqual({ hits, misses: misses + 4 });
  });
});

describe('a change shows on the next request once projected', () => {
  it('on the listing page, its category page, a search page and the home page', async () => {
    const word = 'zanzibarquux';
    const paths = ['/products/deploy-kite', '/categories/developer-tools', `/search?q=${word}`, '/'];
    // Each page kept at the version before the change.
    for (const path of paths) for (let i = 0; i < 2; i++) expect((await get(path)).res.status).toBe(200);
    expect((await get(`/search?q=${word}`)).html).not.toContain('/products/deploy-kite"');

    await setPunchline('deploy-kite', `Previews for every branch, ${word} included`);
    for (const path of paths) {
      const { res, html } = await get(path);
      expect(res.status, path).toBe(200);
      expect(html, path).toContain(`${word} included`);
    }
  });

  it('a listing taken down is gone from its page at once: 404, never the kept page', async () => {
    expect((await get('/products/type-scale')).res.status).toBe(200);
    expect((await get('/products/type-scale')).res.status).toBe(200);
    await stack.db.pool.query(`UPDATE catalog.listings SET status = 'hidden' WHERE slug = 'type-scale'`);
    await stack.settle();
    const { res } = await get('/products/type-scale');
    expect(res.status).toBe(404);
    expect(res.headers.get('cache-control')).toBe('no-store');
    await stack.db.pool.query(`UPDATE catalog.listings SET status = 'live' WHERE slug = 'type-scale'`);
    await stack.settle();
    expect((await get('/products/type-scale')).res.status).toBe(200);
  });
});

describe('validators and headers', () => {
  it.each(PAGES)('%s: ETag, 304 while unchanged, a new ETag and a 200 after a change', async (path) => {
    const first = await get(path);
    expect(first.res.status).toBe(200);
    const etag = first.res.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await get(path, { 'if-none-match': etag });
    expect(again.res.status).toBe(304);
    expect(again.html).toBe('');
    expect(again.res.headers.get('etag')).toBe(etag);
    expect(again.res.headers.get('cache-control')).toBe(first.res.headers.get('cache-control'));
    // Weak comparison, and a list of tags, as browsers and caches send them.
    expect((await get(path, { 'if-none-match': `"other", W/${etag}` })).res.status).toBe(304);

    // Every listing the page could show changes: the kept copy goes, and so does its tag.
    await stack.db.pool.query(`UPDATE catalog.listings SET punchline = punchline || '!' WHERE status = 'live'`);
    await stack.settle();
    const changed = await get(path, { 'if-none-match': etag });
    expect(changed.res.status).toBe(200);
    expect(changed.res.headers.get('etag')).not.toBe(etag);
    expect(changed.html).not.toBe(first.html);
  });

  it.each(PAGES)('%s: the page headers on a kept page as on a fresh one, in the same order, and on a 304', async (path) => {
    // A change first, so that the first request renders the page.
    await stack.db.pool.query(`UPDATE catalog.listings SET punchline = punchline || '?' WHERE slug = 'pixel-forge'`);
    await stack.settle();
    const before = await directPageAnswers();
    const miss = await getRaw(path);
    expect(await directPageAnswers()).toBe(before);
    // Kept now: answered beneath Fastify (src/http/direct-reads.ts), from the bytes the first rendered.
    const hit = await getRaw(path);
    expect(await directPageAnswers()).toBe(before + 1);
    expect(miss.status).toBe(200);
    expect(hit.status).toBe(200);
    expect(hit.body.equals(miss.body)).toBe(true);
    expect(steadyHeaders(hit)).toEqual(steadyHeaders(miss));
    const headers = Object.fromEntries(miss.headers);
    expect(headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'content-length': String(miss.body.length),
      'content-security-policy': contentSecurityPolicy({ publicUrl: 'http://catalog.test' }),
      'referrer-policy': 'same-origin',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'cross-origin-opener-policy': 'same-origin',
      'ratelimit-policy': '"pages";q=300;w=60',
    });
    expect(headers['cache-control']).toMatch(/^public, max-age=\d+, s-maxage=\d+$/);
    // No header of the API's: CORS, Vary on Authorization.
    expect(Object.keys(headers).filter((n) => n.startsWith('access-control-') || n === 'vary')).toEqual([]);
    expect(headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.fromEntries(hit.headers)['x-request-id']).not.toBe(headers['x-request-id']);
    // A client's own request id is echoed on a kept page as on any answer.
    expect(Object.fromEntries((await getRaw(path, { 'x-request-id': 'trace-42' })).headers)['x-request-id']).toBe('trace-42');
    // A 304 carries the same headers less the body's.
    const notModified = await getRaw(path, { 'if-none-match': headers.etag! });
    expect(notModified.status).toBe(304);
    expect(notModified.body.length).toBe(0);
    expect(steadyHeaders(notModified)).toEqual(steadyHeaders(miss).filter((h) => !h.startsWith('content-type:') && !h.startsWith('content-length:')));
  });
});
