import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../../../src/web/csp.ts';
import { parsePage } from '../../../helpers/html.ts';
import { startTestStack, type TestStack } from '../../../helpers/stack.ts';
import { NOT_LIVE_SLUGS } from '../../../helpers/fixtures.ts';

/** The directory pages that the `url` of every product and category points to. */
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: { SITE_URL: '' } });
});
afterAll(async () => {
  await stack?.stop();
});

async function page(path: string, init?: RequestInit) {
  const res = await fetch(`${stack.baseUrl}${path}`, init);
  return { res, html: await res.text() };
}

const PAGE_HEADERS = {
  // PUBLIC_URL is http://catalog.test in test stacks: no upgrade-insecure-requests.
  'content-security-policy': contentSecurityPolicy({ publicUrl: 'http://catalog.test' }),
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

function expectPageHeaders(res: Response) {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) expect(res.headers.get(name), name).toBe(value);
  const csp = res.headers.get('content-security-policy')!;
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('upgrade-insecure-requests');
  expect(res.headers.get('strict-transport-security')).toBeNull();
}

describe('directory pages', () => {
  it('every product url opens its listing page, which links back to the product site', async () => {
    const search = (await (await fetch(`${stack.baseUrl}/api/v1/search?limit=50`)).json()) as {
      products: Array<{ slug: string; name: string; url: string; website: string }>;
    };
    expect(search.products.length).toBeGreaterThan(0);
    for (const p of search.products) {
      // SITE_URL defaults to PUBLIC_URL, so the url names this service's page
      expect(p.url).toBe(`http://catalog.test/products/${p.slug}`);
      const { res, html } = await page(new URL(p.url).pathname);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(html).toContain(`<h1>${p.name}</h1>`);
      expect(html).toContain(`href="${p.website}"`);
    }
  });

  it('shows the premium profile and the promo as the API does', async () => {
    const { html } = await page('/products/pixel-forge');
    expect(html).toContain('Sketch to vector in seconds');
    expect(html).toContain('FORGE20');
    const free = await page('/products/type-scale');
    expect(free.html).not.toContain('Should not show');
    expect(free.html).not.toContain('OLD10');
  });

  it.each([...NOT_LIVE_SLUGS, 'no-such-listing'])('answers 404 for %s', async (slug) => {
    const { res, html } = await page(`/products/${slug}`);
    expect(res.status).toBe(404);
    expect(parsePage(html).texts('p')).toContain(`No live listing has the slug '${slug}'.`);
  });

  it('a category page lists its live listings newest first; an unknown category is 404', async () => {
    const { res, html } = await page('/categories/developer-tools');
    expect(res.status).toBe(200);
    const order = ['query-pilot', 'code-lantern', 'deploy-kite'].map((s) => html.indexOf(`/products/${s}"`));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(html).toContain('3 tools');
    expect((await page('/categories/empty-shelf')).html).toMatch(/No live [a-z ]+ here yet\./);
    const missing = await page('/categories/nope');
    expect(missing.res.status).toBe(404);
    expect(parsePage(missing.html).texts('p')).toContain("There is no category 'nope'.");
  });

  it('the home page links the newest listings and every category, under the anchor the header links to', async () => {
    const { res, html } = await page('/');
    expect(res.status).toBe(200);
    expect(html).toContain('/products/pixel-forge');
    expect(html).toContain('/categories/empty-shelf');
    const doc = parsePage(html);
    expect(doc.byId('categories')).toBeDefined();
    const header = doc.all('header')[0]!;
    const links = Object.fromEntries(doc.all('a', header).map((a) => [doc.text(a), doc.attr(a, 'href')]));
    expect(links).toEqual({ 'Product directory': '/', Categories: '/#categories', API: '/api/v1/docs', 'Sign in': '/signin' });
  });
});

describe('what a page shows is escaped', () => {
  it('a name with markup is shown as text and never runs', async () => {
    const name = '<script>alert(1)</script> & Co';
    await stack.db.pool.query(`UPDATE catalog.listings SET name = $1 WHERE slug = 'deploy-kite'`, [name]);
    await stack.settle();
    const { html } = await page('/products/deploy-kite');
    expect(html).not.toContain('<script>alert(1)');
    // The one script element is the structured data block, which no browser runs; the name in
    // it cannot end it.
    expect(html.match(/<script/gi)).toEqual(['<script']);
    expect(html).toContain('<script type="application/ld+json">');
    const doc = parsePage(html);
    expect(JSON.parse(doc.text(doc.all('script')[0]!))).toMatchObject({ name });
    expect(doc.texts('h1')).toEqual([name]);
    expect(doc.texts('title')).toEqual([`${name}: Ship previews for every branch · Product directory`]);
  });

  it('a slug echoed on the 404 page is text', async () => {
    const { res, html } = await page(`/products/${encodeURIComponent('"><img src=x>')}`);
    expect(res.status).toBe(404);
    expect(html).not.toContain('<img src=x>');
  });
});

describe('headers of the pages', () => {
  it('every page, the 404 page included, sends the strict policy and no-referrer-leak headers', async () => {
    for (const path of ['/', '/products/pixel-forge', '/categories/developer-tools', '/products/draft-idea', '/categories/nope']) {
      const { res } = await page(path);
      expectPageHeaders(res);
    }
  });

  it('public pages are cacheable with an ETag and answer 304 when unchanged; 404s are never stored', async () => {
    for (const path of ['/', '/products/pixel-forge', '/categories/developer-tools']) {
      const { res, html } = await page(path);
      expect(res.headers.get('cache-control')).toMatch(/^public, max-age=\d+, s-maxage=\d+$/);
      const etag = res.headers.get('etag');
      expect(etag).toMatch(/^"[^"]+"$/);
      const again = await page(path, { headers: { 'if-none-match': etag! } });
      expect(again.res.status).toBe(304);
      expect(again.html).toBe('');
      expect(again.res.headers.get('etag')).toBe(etag);
      expect(html.startsWith('<!doctype html><html lang="en">')).toBe(true);
    }
    const missing = await page('/products/no-such-listing');
    expect(missing.res.headers.get('cache-control')).toBe('no-store');
    expect(missing.res.headers.get('etag')).toBeNull();
  });

  it('public pages never show a signed-in header', async () => {
    for (const path of ['/', '/products/pixel-forge', '/categories/developer-tools', '/products/nope']) {
      const { html } = await page(path, { headers: { cookie: 'session=anything' } });
      expect(html).toContain('href="/signin"');
      expect(html).not.toContain('/signout');
      expect(html).not.toContain('/dashboard');
    }
  });

  it('pages spend from a budget of their own, never from the API\'s', async () => {
    const remaining = async () => Number(/r=(\d+)/.exec((await fetch(`${stack.baseUrl}/api/v1/categories`)).headers.get('ratelimit')!)![1]);
    const before = await remaining();
    const { res } = await page('/products/pixel-forge');
    expect(res.headers.get('ratelimit-policy')).toBe('"pages";q=300;w=60');
    await page('/');
    // Only the API calls themselves were counted against the API's budget.
    expect(await remaining()).toBe(before - 1);
  });

  it('the REST API and the MCP endpoint get none of the page headers', async () => {
    const rest = await fetch(`${stack.baseUrl}/api/v1/search?limit=1`);
    const docs = await fetch(`${stack.baseUrl}/api/v1/docs`);
    const mcp = await fetch(`${stack.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    for (const res of [rest, mcp]) {
      expect(res.status).toBe(200);
      for (const name of ['content-security-policy', 'referrer-policy', 'x-frame-options', 'cross-origin-opener-policy', 'cross-origin-resource-policy']) {
        expect(res.headers.get(name), name).toBeNull();
      }
    }
    // The reference page keeps the policy made for its own inline script and style.
    expect(docs.headers.get('content-security-policy')).toContain("script-src 'sha256-");
    expect(docs.headers.get('referrer-policy')).toBeNull();
  });
});

describe('the stylesheet', () => {
  async function stylesheetHref(): Promise<string> {
    const doc = parsePage((await page('/')).html);
    const links = doc.all('link').filter((l) => doc.attr(l, 'rel') === 'stylesheet');
    expect(links).toHaveLength(1);
    return doc.attr(links[0]!, 'href')!;
  }

  it('is linked by every page at a path naming its content hash, and kept a year', async () => {
    const href = await stylesheetHref();
    expect(href).toMatch(/^\/assets\/site\.[0-9a-f]{12}\.css$/);
    const res = await fetch(`${stack.baseUrl}${href}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const body = await res.text();
    expect(href).toContain(createHash('sha256').update(body).digest('hex').slice(0, 12));
    expect(body).toContain(':focus-visible');
    // Nothing is fetched from elsewhere: no web font, no import, no remote image.
    expect(body).not.toMatch(/@import|@font-face|url\(/i);
    // It is not counted against the visitor's rate-limit budget.
    expect(res.headers.get('ratelimit-policy')).toBeNull();

    const again = await fetch(`${stack.baseUrl}${href}`, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });

  it('any other version is a 404, never today’s content under another name', async () => {
    const href = await stylesheetHref();
    const other = href.replace(/\.([0-9a-f]{12})\.css$/, (_m, h: string) => `.${h.startsWith('0') ? '1' : '0'}${h.slice(1)}.css`);
    expect((await fetch(`${stack.baseUrl}${other}`)).status).toBe(404);
    expect((await fetch(`${stack.baseUrl}/assets/site.css`)).status).toBe(404);
  });
});
