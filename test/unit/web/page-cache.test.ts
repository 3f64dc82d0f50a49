import Fastify, { type FastifyInstance } from 'fastify';
import { h } from 'preact';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPageCache, pageKeys, type PageCache } from '../../../src/web/page-cache.ts';

/**
 * The page cache keeps a page by what it is made of: the path as decoded, and only the query
 * parameters its route reads. Pages are rendered by a real Fastify app, so `send` runs as the
 * directory's routes run it, and `has`/`find` as the direct read path asks them.
 */
const ROUTES = { '/': [], '/p/:slug': [], '/list': ['page'], '/s': 'every' } as const;

describe('the key of a page', () => {
  const key = pageKeys(ROUTES);

  it('is one for every spelling of one path', () => {
    for (const url of ['/p/abc', '/p/abc/', '/p/%61bc', '/p/ab%63', '/p/abc?', '/p/abc?utm_source=x&fbclid=y']) expect(key(url), url).toBe('/p/abc');
    expect(key('/')).toBe('/');
    expect(key('/?ref=x')).toBe('/');
  });

  it('keeps the parameters the route reads, sorted, empty ones dropped', () => {
    expect(key('/list?page=2&utm_source=x')).toBe('/list?page=2');
    expect(key('/list?utm_source=x&page=2')).toBe('/list?page=2');
    expect(key('/list?page=')).toBe('/list');
    expect(key('/s?tag=ai&q=x')).toBe(key('/s?q=x&tag=ai'));
    expect(key('/s?q=x&tag=')).toBe('/s?q=x');
    expect(key('/s?q=a%20b')).toBe(key('/s?q=a+b'));
  });

  it('keeps a parameter given twice as given twice', () => {
    expect(key('/list?page=1&page=2')).toBe('/list?page=1&page=2');
    expect(key('/list?page=1&page=2')).not.toBe(key('/list?page=1'));
  });

  it('is none for a path no route keeps, or one that does not decode', () => {
    expect(key('/elsewhere')).toBeUndefined();
    expect(key('/p/a/b')).toBeUndefined();
    expect(key('/p/%E0%A4%A')).toBeUndefined();
  });
});

describe('pages kept', () => {
  let app: FastifyInstance;
  let cache: PageCache;
  let renders = 0;

  beforeAll(async () => {
    app = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
    cache = createPageCache({ version: () => 1, routes: ROUTES, cacheControl: 'public, max-age=60', maxBytes: 20_000 });
    const render = (text: string) => async () => {
      renders++;
      return { page: h('p', null, text) };
    };
    app.get<{ Params: { slug: string } }>('/p/:slug', (request, reply) => cache.send(request, reply, render(request.params.slug)));
    app.get('/list', (request, reply) => cache.send(request, reply, render('list')));
    app.get('/s', (request, reply) => cache.send(request, reply, render('s')));
    app.get('/elsewhere', (request, reply) => cache.send(request, reply, render('elsewhere')));
    await app.ready();
  });
  afterAll(() => app.close());

  const get = async (url: string) => (await app.inject({ url })).body;

  it('renders a page once for all the spellings of its URL', async () => {
    const before = renders;
    const first = await get('/p/abc');
    for (const url of ['/p/abc/', '/p/%61bc', '/p/abc?utm_source=x', '/p/abc?fbclid=1']) expect(await get(url), url).toBe(first);
    expect(renders - before).toBe(1);
    // The direct read path finds it under any spelling too.
    expect(cache.find('/p/abc/?gclid=z')?.bytes.toString()).toContain('abc');
  });

  it('never keeps a page whose route it does not know', async () => {
    const before = renders;
    await get('/elsewhere');
    await get('/elsewhere');
    expect(renders - before).toBe(2);
    expect(cache.has('/elsewhere')).toBe(false);
  });

  it('counts the bytes of its keys in its bound', async () => {
    // Pages of a few dozen bytes under keys of 4,000 characters (8,000 bytes as strings): the
    // 20,000-byte bound holds two of them, where the pages' bytes alone would fit all ten.
    const urls = Array.from({ length: 10 }, (_, i) => `/s?q=${i}${'x'.repeat(4000)}`);
    for (const url of urls) await get(url);
    const kept = urls.filter((url) => cache.has(url));
    expect(kept.length).toBeGreaterThanOrEqual(1);
    expect(kept.length).toBeLessThanOrEqual(2);
    // The newest are the ones kept.
    expect(cache.has(urls[9]!)).toBe(true);
  });
});
