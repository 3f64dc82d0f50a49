import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { registerErrorHandling } from '../../../src/http/errors.ts';
import { buildOpenApiDocument } from '../../../src/http/openapi.ts';
import { FIXTURE_IDS, LIVE_SLUGS_NEWEST_FIRST, NOT_LIVE_SLUGS } from '../../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { ISO_UTC, PRODUCT_FIELDS, UUID, YYYY_MM_DD, responseValidators, uniqueIp, type SchemaName } from './rest-support.ts';

/**
 * The REST API on the fixture catalog, through app.inject: every field and format, every
 * validation boundary, filters, order, paging, 404s, categories, error objects, CORS and HTTP
 * caching. Each request comes from an address of its own, so the per-IP budgets (tested in
 * rate-limit.test.ts) never interfere.
 */
let stack: TestStack;
let app: FastifyInstance;
let validator: (name: SchemaName) => (data: unknown) => boolean;

beforeAll(async () => {
  stack = await startTestStack({ listen: false });
  app = stack.service.app;
  const doc = buildOpenApiDocument({ publicUrl: 'http://catalog.test', searchPerMinute: 30, otherPerMinute: 60 });
  const v = responseValidators(doc);
  validator = (name) => {
    const fn = v(name);
    return (data) => {
      const ok = fn(data);
      if (!ok) throw new Error(`${name} does not match the OpenAPI document: ${JSON.stringify(fn.errors)}`);
      return ok;
    };
  };
});
afterAll(async () => {
  await stack?.stop();
});

function get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url, headers, remoteAddress: uniqueIp() });
}

interface ProductBody {
  [key: string]: unknown;
  id: string;
  slug: string;
  social: string | null;
  listed_at: string | null;
  promo: { code: string; discount: string; url: string | null; expires_at: string | null } | null;
}
interface SearchBody {
  products: ProductBody[];
  total: number;
  page: number;
  limit: number;
}

async function search(query: string): Promise<SearchBody> {
  const res = await get(`/api/v1/search${query ? `?${query}` : ''}`);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as SearchBody;
  validator('SearchResult')(body);
  return body;
}

const slugs = (body: SearchBody) => body.products.map((p) => p.slug);

function expectIsoInstant(value: string | null, instant: string): void {
  expect(value).toMatch(ISO_UTC);
  expect(new Date(value!).toISOString()).toBe(new Date(instant).toISOString());
}

describe('GET /api/v1/search', () => {
  test('without parameters: every live listing, newest first, with the envelope and defaults', async () => {
    const res = await get('/api/v1/search');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json() as SearchBody;
    validator('SearchResult')(body);
    expect(Object.keys(body).sort()).toEqual(['limit', 'page', 'products', 'total']);
    expect(slugs(body)).toEqual([...LIVE_SLUGS_NEWEST_FIRST]);
    expect(body.total).toBe(LIVE_SLUGS_NEWEST_FIRST.length);
    expect(body.page).toBe(1);
    expect(body.limit).toBe(20);
  });

  test('every product carries exactly the spec fields with their formats', async () => {
    const body = await search('');
    for (const p of body.products) {
      validator('Product')(p);
      expect(Object.keys(p).sort()).toEqual(PRODUCT_FIELDS);
      expect(p.id).toMatch(UUID);
      expect(p.id).toBe(FIXTURE_IDS[p.slug]);
      expect(p.url).toBe(`https://directory.test/products/${p.slug}`);
      if (p.listed_at !== null) expect(p.listed_at).toMatch(ISO_UTC);
      if (p.social !== null) expect(p.social.startsWith('@')).toBe(false);
      if (p.promo) {
        expect(Object.keys(p.promo).sort()).toEqual(['code', 'discount', 'expires_at', 'url']);
        if (p.promo.expires_at !== null) expect(p.promo.expires_at).toMatch(YYYY_MM_DD);
      }
    }
  });

  test('listings with the same listed_at are ordered by id', async () => {
    const order = slugs(await search(''));
    expect(order.indexOf('code-lantern')).toBe(order.indexOf('deploy-kite') - 1);
    expect(FIXTURE_IDS['code-lantern']! < FIXTURE_IDS['deploy-kite']!).toBe(true);
  });

  test('the search body embeds the stored product documents byte for byte', async () => {
    const searchRes = await get('/api/v1/search');
    for (const slug of LIVE_SLUGS_NEWEST_FIRST) {
      const product = await get(`/api/v1/products/${slug}`);
      expect(searchRes.body).toContain(product.body);
    }
  });

  test('totals count every page; pages slice the newest-first order; a page past the end is empty', async () => {
    const pages = await Promise.all([1, 2, 3, 4].map((page) => search(`limit=3&page=${page}`)));
    expect(pages.map(slugs)).toEqual([
      LIVE_SLUGS_NEWEST_FIRST.slice(0, 3),
      LIVE_SLUGS_NEWEST_FIRST.slice(3, 6),
      LIVE_SLUGS_NEWEST_FIRST.slice(6),
      [],
    ]);
    for (const [i, body] of pages.entries()) {
      expect(body.total).toBe(7);
      expect(body.page).toBe(i + 1);
      expect(body.limit).toBe(3);
    }
    const last = await search('page=500');
    expect(last).toEqual({ products: [], total: 7, page: 500, limit: 20 });
  });

  test.each([
    ['category=design', ['pixel-forge', 'type-scale']],
    ['category=developer-tools', ['query-pilot', 'code-lantern', 'deploy-kite']],
    ['category=productivity', ['note-garden']],
    ['category=empty-shelf', []],
    ['category=no-such-category', []],
    ['label=new', ['pixel-forge', 'type-scale']],
    ['label=editors-pick', ['pixel-forge']],
    ['label=trending', ['note-garden']],
    ['tag=ai', ['pixel-forge', 'query-pilot', 'note-garden']],
    ['tag=fonts', ['type-scale']],
    ['tag=devops', ['deploy-kite']],
    ['category=developer-tools&tag=ai', ['query-pilot']],
    ['category=design&label=new&tag=ai', ['pixel-forge']],
    ['label=new&tag=fonts', ['type-scale']],
    ['category=productivity&label=new', []],
    ['q=sketch', ['pixel-forge']],
    ['q=PostgreSQL', ['query-pilot']],
    ['q=legacy&category=developer-tools', ['code-lantern']],
    ['q=legacy&category=design', []],
    ['q=preview&tag=devops&category=developer-tools', ['deploy-kite']],
  ])('filter %s', async (query, expected) => {
    const body = await search(query);
    expect(slugs(body)).toEqual(expected);
    expect(body.total).toBe(expected.length);
  });

  const q = (n: number) => 'a'.repeat(n);
  const QUERY_LENGTH = 'must be 2 to 100 characters';
  const PAGE_RANGE = 'must be between 1 and 500';
  const LIMIT_RANGE = 'must be between 1 and 50';
  const INTEGER = 'must be an integer';

  test.each([
    [`q=${q(1)}`, [{ path: ['q'], message: QUERY_LENGTH }]],
    [`q=${q(2)}`, null],
    [`q=${q(100)}`, null],
    [`q=${q(101)}`, [{ path: ['q'], message: QUERY_LENGTH }]],
    ['q=', [{ path: ['q'], message: QUERY_LENGTH }]],
    // surrounding spaces do not count: two spaces are no 2-character query
    ['q=%20%20', [{ path: ['q'], message: QUERY_LENGTH }]],
    ['q=%20a%20', [{ path: ['q'], message: QUERY_LENGTH }]],
    // any characters: a q with no letter or digit is valid (and matches nothing, below)
    ['q=%F0%9F%98%80%F0%9F%98%80', null],
    ['q=--', null],
    ['q=%22%27', null],
    [`q=${'!'.repeat(100)}`, null],
    [`q=${'!'.repeat(101)}`, [{ path: ['q'], message: QUERY_LENGTH }]],
    ['q=!!&limit=0', [{ path: ['limit'], message: LIMIT_RANGE }]],
    ['q=a%CC%81', [{ path: ['q'], message: QUERY_LENGTH }]],
    ['page=%2B2', [{ path: ['page'], message: INTEGER }]],
    ['page=1e1', [{ path: ['page'], message: INTEGER }]],
    ['q=pixel&q=forge', [{ path: ['q'], message: 'must be a single text value' }]],
    ['page=1&page=2', [{ path: ['page'], message: 'must be given once' }]],
    ['page=0', [{ path: ['page'], message: PAGE_RANGE }]],
    ['page=1', null],
    ['page=500', null],
    ['page=501', [{ path: ['page'], message: PAGE_RANGE }]],
    ['page=1.5', [{ path: ['page'], message: INTEGER }]],
    ['page=abc', [{ path: ['page'], message: INTEGER }]],
    ['page=-1', [{ path: ['page'], message: PAGE_RANGE }]],
    ['limit=0', [{ path: ['limit'], message: LIMIT_RANGE }]],
    ['limit=1', null],
    ['limit=50', null],
    ['limit=51', [{ path: ['limit'], message: LIMIT_RANGE }]],
    ['limit=ten', [{ path: ['limit'], message: INTEGER }]],
    ['sort=newest', [{ path: ['sort'], message: 'is not a known parameter' }]],
    ['categroy=design', [{ path: ['categroy'], message: 'is not a known parameter' }]],
    ['category=Design', [{ path: ['category'], message: 'must be a category slug: lowercase letters, digits and single hyphens' }]],
    ['label=a--b', [{ path: ['label'], message: 'must be a label slug: lowercase letters, digits and single hyphens' }]],
    ['tag=', [{ path: ['tag'], message: 'must be a tag slug' }]],
  ])('validation: %s', async (query, issues) => {
    const res = await get(`/api/v1/search?${query}`);
    if (issues === null) {
      expect(res.statusCode, res.body).toBe(200);
      validator('SearchResult')(res.json());
      return;
    }
    expect(res.statusCode).toBe(400);
    const body = res.json();
    validator('Error')(body);
    expect(Object.keys(body).sort()).toEqual(['code', 'data', 'message']);
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.message).toContain(`'${issues[0]!.path[0]}'`);
    expect(body.data).toEqual({ issues });
  });

  test('the parameter boundaries that pass give the page and limit asked for', async () => {
    expect((await search('limit=1')).products).toHaveLength(1);
    expect((await search('limit=50')).products).toHaveLength(7);
    expect((await search('limit=50')).limit).toBe(50);
    expect((await search('page=1')).page).toBe(1);
  });

  test('several rejected parameters at once: one issue each, naming it', async () => {
    const res = await get(`/api/v1/search?q=a&tag=Not_A_Slug&page=0&limit=51&foo=bar`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: 'BAD_REQUEST',
      message: "Invalid request: 'q', 'tag', 'page', 'limit', 'foo' were rejected; see data.issues.",
      data: {
        issues: [
          { path: ['q'], message: QUERY_LENGTH },
          { path: ['tag'], message: 'must be a tag slug: lowercase letters, digits and single hyphens' },
          { path: ['page'], message: PAGE_RANGE },
          { path: ['limit'], message: LIMIT_RANGE },
          { path: ['foo'], message: 'is not a known parameter' },
        ],
      },
    });
  });

  test.each(['%22%27', '--', '!!', '%F0%9F%98%80%F0%9F%98%80', '%CC%81%CC%81', '%20%3C%3E%20%2F%2F%20', `${'%25'.repeat(100)}`])(
    'q=%s, with no letter or digit, matches nothing',
    async (q) => {
      const body = await search(`q=${q}`);
      expect(body).toEqual({ products: [], total: 0, page: 1, limit: 20 });
      // Combined with filters and paging, still nothing, and still a 200.
      expect(await search(`q=${q}&category=design&tag=ai&page=2&limit=5`)).toEqual({ products: [], total: 0, page: 2, limit: 5 });
    },
  );

  test('a q with one word among symbols searches that word', async () => {
    expect(slugs(await search('q=%22sketch%22!!'))).toEqual(['pixel-forge']);
  });

  test('a parameter given twice is rejected, not silently merged', async () => {
    const res = await get('/api/v1/search?page=1&page=2');
    expect(res.statusCode).toBe(400);
    expect(res.json().data.issues.map((i: { path: string[] }) => i.path)).toEqual([['page']]);
  });
});

describe('GET /api/v1/products/{slug}', () => {
  async function product(slug: string): Promise<ProductBody> {
    const res = await get(`/api/v1/products/${slug}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json() as ProductBody;
    validator('Product')(body);
    expect(Object.keys(body).sort()).toEqual(PRODUCT_FIELDS);
    return body;
  }

  test('a premium listing: every field, premium profile and open-ended promo', async () => {
    const p = await product('pixel-forge');
    expectIsoInstant(p.listed_at, '2026-10-20T12:00:00Z');
    expect({ ...p, listed_at: null }).toEqual({
      id: FIXTURE_IDS['pixel-forge'],
      slug: 'pixel-forge',
      name: 'Pixel Forge',
      punchline: 'Generate crisp illustrations from a sketch',
      description: '<p>Pixel Forge turns rough sketches into <strong>vector illustrations</strong>.</p>',
      url: 'https://directory.test/products/pixel-forge',
      website: 'https://pixelforge.example.com',
      logo: 'https://cdn.example.com/pixel-forge/logo.png',
      cover: 'https://cdn.example.com/pixel-forge/cover.png',
      category: 'design',
      labels: ['new', 'editors-pick'],
      tags: ['ai', 'images'],
      product_type: 'software',
      pricing_model: 'paid',
      social: 'pixelforge',
      featured: true,
      listed_at: null,
      highlights: ['Sketch to vector in seconds', 'Exports SVG and PNG'],
      ideal_for: ['Illustrators', 'Marketing teams'],
      faq: [{ question: 'Is there a free trial?', answer: 'Yes, 14 days.' }],
      promo: { code: 'FORGE20', discount: '20% off the first year', url: null, expires_at: null },
    });
  });

  test('a free listing shows no premium profile, and a lapsed promo is null', async () => {
    const p = await product('type-scale');
    expect(p.highlights).toEqual([]);
    expect(p.ideal_for).toEqual([]);
    expect(p.faq).toEqual([]);
    expect(p.promo).toBeNull();
    expect(p.featured).toBe(false);
    expect(p.pricing_model).toBe('free');
    expectIsoInstant(p.listed_at, '2026-10-10T08:30:00Z');
  });

  test('a promo with a redemption URL and a last day', async () => {
    const p = await product('code-lantern');
    expect(p.promo).toEqual({
      code: 'LANTERN',
      discount: 'Free onboarding call',
      url: 'https://codelantern.example.com/promo',
      expires_at: '2099-12-31',
    });
    expect(p.highlights).toEqual(['Call graphs', 'Dead code finder']);
    expect(p.ideal_for).toEqual(['Maintainers']);
    expect(p.faq).toEqual([]);
    expect(p.pricing_model).toBe('open_source');
  });

  test('a listing with every nullable field null', async () => {
    const p = await product('nullish-widget');
    for (const field of ['logo', 'cover', 'category', 'product_type', 'pricing_model', 'social', 'promo']) {
      expect(p[field], field).toBeNull();
    }
    expect(p.labels).toEqual([]);
    expect(p.tags).toEqual([]);
    expectIsoInstant(p.listed_at, '2026-01-02T03:04:05Z');
  });

  test('an HTML description is served as the listing page renders it', async () => {
    const p = await product('query-pilot');
    expect(p.description).toContain('<li>Works with PostgreSQL</li>');
    expect(p.description).toContain('Read the docs</a>');
  });

  test('every live slug answers 200 with its own listing', async () => {
    for (const slug of LIVE_SLUGS_NEWEST_FIRST) expect((await product(slug)).slug).toBe(slug);
  });

  test.each([...NOT_LIVE_SLUGS, 'no-such-listing', 'x'.repeat(200), 'Ünïcode-slug'])('404 NOT_FOUND for %s', async (slug) => {
    const res = await get(`/api/v1/products/${encodeURIComponent(slug)}`);
    expect(res.statusCode).toBe(404);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.etag).toBeUndefined();
    const body = res.json();
    validator('Error')(body);
    expect(body).toEqual({ code: 'NOT_FOUND', message: `No live listing has the slug '${slug}'.` });
    expect(body.message).toMatch(/no live listing has the slug/i);
  });

  const SLUG_LENGTH = [{ path: ['slug'], message: 'must be 1 to 200 characters' }];

  test.each([
    ['201 characters', `/api/v1/products/${'x'.repeat(201)}`],
    ['5000 characters', `/api/v1/products/${'x'.repeat(5000)}`],
    ['empty, with a trailing slash', '/api/v1/products/'],
    ['empty, without it', '/api/v1/products'],
  ])('400 for a slug of %s', async (_name, url) => {
    const res = await get(url);
    expect(res.statusCode).toBe(400);
    const body = res.json();
    validator('Error')(body);
    expect(body).toEqual({ code: 'BAD_REQUEST', message: "Invalid request: 'slug' was rejected; see data.issues.", data: { issues: SLUG_LENGTH } });
  });

  test.each([
    ['one', 'pixel-forge?format=short', ['format']],
    ['two', 'pixel-forge?format=short&fields=name', ['format', 'fields']],
    ['an empty one', 'pixel-forge?debug', ['debug']],
    ['the slug again', 'pixel-forge?slug=type-scale', ['slug']],
    ['one, on an unknown slug', 'no-such-listing?format=short', ['format']],
  ])('400 naming each unknown query parameter (%s)', async (_name, path, rejected) => {
    const res = await get(`/api/v1/products/${path}`);
    expect(res.statusCode).toBe(400);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    validator('Error')(body);
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.data.issues).toEqual(rejected.map((name) => ({ path: [name], message: 'is not a known parameter' })));
    for (const name of new Set(rejected)) expect(body.message).toContain(`'${name}'`);
  });

  test('a bad slug and an unknown parameter are named at once, the slug first', async () => {
    const res = await get(`/api/v1/products/${'x'.repeat(201)}?format=short`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: 'BAD_REQUEST',
      message: "Invalid request: 'slug', 'format' were rejected; see data.issues.",
      data: { issues: [...SLUG_LENGTH, { path: ['format'], message: 'is not a known parameter' }] },
    });
  });

  test('an empty query string is no parameter', async () => {
    expect((await get('/api/v1/products/pixel-forge?')).statusCode).toBe(200);
  });
});

describe('GET /api/v1/categories', () => {
  test('every category ordered by name with its live-listing count, the empty one at 0', async () => {
    const res = await get('/api/v1/categories');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    validator('CategoryList')(body);
    expect(body).toEqual({
      categories: [
        { slug: 'design', name: 'Design', noun: 'resources', url: 'https://directory.test/categories/design', count: 2 },
        { slug: 'developer-tools', name: 'Developer Tools', noun: 'tools', url: 'https://directory.test/categories/developer-tools', count: 3 },
        { slug: 'empty-shelf', name: 'Empty Shelf', noun: 'items', url: 'https://directory.test/categories/empty-shelf', count: 0 },
        { slug: 'productivity', name: 'Productivity', noun: 'apps', url: 'https://directory.test/categories/productivity', count: 1 },
      ],
    });
  });

  test('names sort as a reader expects: accents and case do not reorder them', async () => {
    await stack.db.pool.query(
      `INSERT INTO catalog.categories (slug, name, noun) VALUES ('eclair-tools', 'Éclair Tools', 'tools'), ('zeta', 'zeta', 'things')`,
    );
    await stack.settle();
    const names = ((await get('/api/v1/categories')).json() as { categories: Array<{ name: string }> }).categories.map((c) => c.name);
    expect(names).toEqual(['Design', 'Developer Tools', 'Éclair Tools', 'Empty Shelf', 'Productivity', 'zeta']);
    await stack.db.pool.query(`DELETE FROM catalog.categories WHERE slug IN ('eclair-tools', 'zeta')`);
    await stack.settle();
  });

  test.each([
    ['sort=name', ['sort']],
    ['limit=2&page=1', ['limit', 'page']],
    ['q=design', ['q']],
    ['verbose', ['verbose']],
  ])('400 naming each unknown parameter: ?%s', async (query, rejected) => {
    const res = await get(`/api/v1/categories?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.etag).toBeUndefined();
    const body = res.json();
    validator('Error')(body);
    expect(body).toEqual({
      code: 'BAD_REQUEST',
      message: `Invalid request: ${rejected.map((n) => `'${n}'`).join(', ')} ${rejected.length === 1 ? 'was' : 'were'} rejected; see data.issues.`,
      data: { issues: rejected.map((name) => ({ path: [name], message: 'is not a known parameter' })) },
    });
  });

  test('an empty query string is no parameter', async () => {
    expect((await get('/api/v1/categories?')).statusCode).toBe(200);
  });

  test('the counts agree with searching each category', async () => {
    const { categories } = (await get('/api/v1/categories')).json() as { categories: Array<{ slug: string; count: number }> };
    for (const c of categories) expect((await search(`category=${c.slug}`)).total, c.slug).toBe(c.count);
  });
});

describe('error objects', () => {
  test('a slug longer than the router takes is the same 400 as a 201-character one', async () => {
    const res = await get(`/api/v1/products/${'a'.repeat(9000)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().data.issues).toEqual([{ path: ['slug'], message: 'must be 1 to 200 characters' }]);
  });

  test('a malformed percent-encoding in the slug is our 400, with CORS', async () => {
    const res = await get('/api/v1/products/%E0%A4%A');
    expect(res.statusCode).toBe(400);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    validator('Error')(body);
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.data.issues).toEqual([{ path: ['slug'], message: 'must be a valid URL path segment (malformed percent-encoding)' }]);
  });

  test('an unknown path under /api/v1 is a JSON 404 naming the path', async () => {
    const res = await get('/api/v1/nothing-here?x=1');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const body = res.json();
    validator('Error')(body);
    expect(body.code).toBe('NOT_FOUND');
    expect(body.message).toContain('/api/v1/nothing-here');
    expect(Object.keys(body).sort()).toEqual(['code', 'message']);
  });

  test('an unknown path elsewhere is a JSON 404 too, never HTML', async () => {
    const res = await get('/no/such/page');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({ code: 'NOT_FOUND', message: 'No route answers GET "/no/such/page".' });
  });

  test.each(['POST', 'PUT', 'PATCH', 'DELETE'] as const)('%s on a REST path is 405 with Allow', async (method) => {
    const res = await app.inject({ method, url: '/api/v1/categories', remoteAddress: uniqueIp() });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    validator('Error')(body);
    expect(body.code).toBe('METHOD_NOT_ALLOWED');
  });

  test.each([
    ['malformed JSON', { 'content-type': 'application/json' }, '{"q": '],
    ['an unknown media type', { 'content-type': 'application/xml' }, '<q/>'],
    ['an oversized body', { 'content-type': 'application/json' }, JSON.stringify({ q: 'x'.repeat(1024 * 1024 + 10) })],
  ])('a POST with %s is still a 405: the method is wrong whatever the body', async (_what, headers, payload) => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/search', headers, payload, remoteAddress: uniqueIp() });
    expect(res.statusCode).toBe(405);
    expect(res.json().code).toBe('METHOD_NOT_ALLOWED');
  });

  test('a method no route knows (TRACE) on a REST path is a 405 too; on an unknown path a 404', async () => {
    const trace = await app.inject({ method: 'TRACE' as 'GET', url: '/api/v1/search', remoteAddress: uniqueIp() });
    expect(trace.statusCode).toBe(405);
    expect(trace.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(trace.json().code).toBe('METHOD_NOT_ALLOWED');
    const unknown = await app.inject({ method: 'TRACE' as 'GET', url: '/api/v1/elsewhere', remoteAddress: uniqueIp() });
    expect(unknown.statusCode).toBe(404);
  });

  test('an unexpected failure is a 500 INTERNAL_SERVER_ERROR that reveals nothing of its cause', async () => {
    // A route that fails the way a broken dependency would, on an instance with the service's error handling.
    const failing = Fastify();
    registerErrorHandling(failing);
    failing.get('/boom', async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2');
    });
    const res = await failing.inject({ url: '/boom' });
    await failing.close();
    expect(res.statusCode).toBe(500);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ code: 'INTERNAL_SERVER_ERROR', message: 'The service failed to answer this request. Please retry shortly.' });
    expect(res.body).not.toMatch(/ECONNREFUSED|hunter2|10\.0\.0\.5/);
  });

  test('no error body carries a stack trace or internal detail', async () => {
    const answers = await Promise.all([
      get('/api/v1/search?page=abc'),
      get('/api/v1/products/draft-idea'),
      get('/api/v1/nope'),
      app.inject({ method: 'POST', url: '/api/v1/search', headers: { 'content-type': 'application/json' }, payload: '{', remoteAddress: uniqueIp() }),
    ]);
    for (const res of answers) {
      expect(res.body).not.toMatch(/\bat .+:\d+:\d+|node_modules|Error:|FST_|stack|statusCode/);
      expect(Object.keys(res.json()).every((k) => ['code', 'message', 'data'].includes(k))).toBe(true);
    }
  });
});

describe('HEAD', () => {
  test.each(['/api/v1/search?tag=ai', '/api/v1/categories', '/api/v1/products/pixel-forge'])('HEAD %s answers like GET without a body', async (url) => {
    const [head, getRes] = await Promise.all([
      app.inject({ method: 'HEAD', url, remoteAddress: uniqueIp() }),
      get(url),
    ]);
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBe(getRes.headers.etag);
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
  });
});

describe('CORS', () => {
  test('a preflight is answered 204 for any origin, without spending the budget', async () => {
    const ip = uniqueIp();
    const res = await app.inject({
      method: 'OPTIONS',
      url: '/api/v1/search?q=ai',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' },
      remoteAddress: ip,
    });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(String(res.headers['access-control-allow-methods'])).toContain('GET');
    expect(res.headers['access-control-allow-headers']).toBe('if-none-match');
    expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
    const after = await app.inject({ method: 'GET', url: '/api/v1/search', remoteAddress: ip });
    expect(after.headers['x-ratelimit-remaining']).toBe('29');
  });

  test.each([
    ['200', '/api/v1/search'],
    ['400', '/api/v1/search?limit=0'],
    ['404 slug', '/api/v1/products/hidden-gem'],
    ['404 route', '/api/v1/unknown'],
    ['200 categories', '/api/v1/categories'],
    ['200 openapi', '/api/v1/openapi.json'],
  ])('every answer (%s) allows any origin and exposes the caching and rate-limit headers', async (_name, url) => {
    const res = await get(url, { origin: 'https://elsewhere.example' });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase().split(/\s*,\s*/);
    for (const h of ['etag', 'cache-control', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy', 'x-request-id']) {
      expect(exposed).toContain(h);
    }
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    // The allowed origin is the constant '*': answers do not vary by Origin.
    expect(String(res.headers.vary ?? '')).not.toMatch(/origin/i);
  });
});

describe('HTTP caching', () => {
  const CACHE_CONTROL = 'public, max-age=60, s-maxage=300';

  test.each(['/api/v1/search?category=design', '/api/v1/categories', '/api/v1/products/code-lantern'])(
    '%s: strong ETag, edge-cacheable for at most 300 s, 304 on If-None-Match',
    async (url) => {
      const first = await get(url);
      expect(first.statusCode).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"[^"]+"$/);
      expect(first.headers['cache-control']).toBe(CACHE_CONTROL);
      const sMaxAge = Number(/s-maxage=(\d+)/.exec(CACHE_CONTROL)![1]);
      expect(sMaxAge).toBeLessThanOrEqual(300);

      for (const condition of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
        const again = await get(url, { 'if-none-match': condition });
        expect(again.statusCode, condition).toBe(304);
        expect(again.body).toBe('');
        expect(again.headers.etag).toBe(etag);
        expect(again.headers['cache-control']).toBe(CACHE_CONTROL);
        expect(again.headers['x-ratelimit-limit']).toBeDefined();
        expect(again.headers['access-control-allow-origin']).toBe('*');
      }
      const other = await get(url, { 'if-none-match': '"something-else"' });
      expect(other.statusCode).toBe(200);
      expect(other.body).toBe(first.body);
    },
  );

  test('the same query spelt differently has the same ETag; another query another one', async () => {
    const a = await get('/api/v1/search?tag=ai&category=design');
    const b = await get('/api/v1/search?category=design&tag=ai&page=1&limit=20');
    const c = await get('/api/v1/search?tag=ai');
    expect(a.headers.etag).toBe(b.headers.etag);
    expect(a.headers.etag).not.toBe(c.headers.etag);
  });

  test('errors are never cacheable and carry no ETag, even with If-None-Match: *', async () => {
    for (const url of ['/api/v1/search?page=0', '/api/v1/products/draft-idea', '/api/v1/missing']) {
      const res = await get(url, { 'if-none-match': '*' });
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.etag).toBeUndefined();
    }
  });
});

describe('request ids', () => {
  test('a client X-Request-Id is echoed; a missing or odd one is replaced by a fresh id', async () => {
    const given = await get('/api/v1/categories', { 'x-request-id': 'edge-1234.abc' });
    expect(given.headers['x-request-id']).toBe('edge-1234.abc');
    const none = await get('/api/v1/categories');
    expect(none.headers['x-request-id']).toMatch(UUID);
    const odd = await get('/api/v1/categories', { 'x-request-id': 'x'.repeat(500) });
    expect(odd.headers['x-request-id']).toMatch(UUID);
    const onError = await get('/api/v1/products/nope', { 'x-request-id': 'trace-42' });
    expect(onError.headers['x-request-id']).toBe('trace-42');
  });
});
