import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePage, type ParsedPage } from '../../../helpers/html.ts';
import { LIVE_SLUGS_NEWEST_FIRST } from '../../../helpers/fixtures.ts';
import { startTestStack, type TestStack } from '../../../helpers/stack.ts';
import { insertCategory, insertListings } from '../../../helpers/write-model.ts';

/**
 * The search page and what the listing and category pages gained with it: the same search as
 * `GET /api/v1/search` for the same parameters (same listings, same order, same refusals, shown
 * as a message on a page that stays usable), filters and paging as links, labels and tags as
 * links to their searches, and a category's every listing reachable page by page.
 */
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: { SITE_URL: '' } });
});
afterAll(async () => {
  await stack?.stop();
});

async function page(path: string): Promise<{ res: Response; html: string; doc: ParsedPage }> {
  const res = await fetch(`${stack.baseUrl}${path}`);
  const html = await res.text();
  return { res, html, doc: parsePage(html) };
}

async function api(query: string): Promise<{ status: number; body: { products?: Array<{ slug: string }>; total?: number; data?: { issues: Array<{ path: string[] }> } } }> {
  const res = await fetch(`${stack.baseUrl}/api/v1/search${query}`);
  return { status: res.status, body: (await res.json()) as never };
}

/** The listing pages a page's result list links to, in order. */
function resultSlugs(doc: ParsedPage): string[] {
  const list = doc.all('ul').find((u) => doc.attr(u, 'class') === 'product-list');
  if (!list) return [];
  return doc
    .all('a', list)
    .map((a) => doc.attr(a, 'href')!)
    .filter((h) => h.startsWith('/products/'))
    .map((h) => h.slice('/products/'.length));
}

function linkHrefs(doc: ParsedPage, text: string): string[] {
  return doc
    .all('a')
    .filter((a) => doc.text(a).trim() === text)
    .map((a) => doc.attr(a, 'href')!);
}

/** The page stays usable: its search box and the categories to narrow by are there. */
function expectUsable(doc: ParsedPage) {
  const search = doc.all('form').find((f) => doc.attr(f, 'role') === 'search');
  expect(search).toBeDefined();
  expect(doc.attr(search!, 'action')).toBe('/search');
  expect(doc.all('nav').some((n) => doc.attr(n, 'aria-label') === 'Categories')).toBe(true);
}

describe('the search page answers what the API answers', () => {
  it.each(['', '?q=forge', '?q=pixel%20forge', '?category=design', '?label=new', '?tag=fonts', '?q=scale&category=design', '?limit=2&page=2', '?category=empty-shelf', '?q=zzzzqqq'])(
    '/search%s lists the same listings in the same order as /api/v1/search',
    async (query) => {
      const { res, doc } = await page(`/search${query}`);
      const expected = await api(query);
      expect(res.status).toBe(200);
      expect(expected.status).toBe(200);
      expect(resultSlugs(doc)).toEqual(expected.body.products!.map((p) => p.slug));
      const status = doc.all('p').find((p) => doc.attr(p, 'role') === 'status');
      expect(doc.text(status!)).toContain(expected.body.total === 0 ? 'No live listing matches.' : `${expected.body.total} listing`);
      expectUsable(doc);
    },
  );

  it('an empty box asks for every listing, newest first', async () => {
    const { res, doc } = await page('/search?q=&category=');
    expect(res.status).toBe(200);
    expect(resultSlugs(doc)).toEqual([...LIVE_SLUGS_NEWEST_FIRST]);
  });

  it('shows its words back in the header box, and the canonical link names the search', async () => {
    const { doc } = await page('/search?tag=fonts&q=scale');
    const input = doc.byId('site-search-q')!;
    expect(doc.attr(input, 'value')).toBe('scale');
    const canonical = doc.all('link').find((l) => doc.attr(l, 'rel') === 'canonical');
    expect(doc.attr(canonical!, 'href')).toBe('http://catalog.test/search?q=scale&tag=fonts');
    // The script that follows the box as one types is a file of this origin, never inline.
    const scripts = doc.all('script').filter((s) => doc.attr(s, 'src') !== undefined);
    expect(scripts.map((s) => doc.attr(s, 'src'))).toEqual([expect.stringMatching(/^\/assets\/search\.[0-9a-f]{12}\.js$/)]);
    const js = await fetch(`${stack.baseUrl}${doc.attr(scripts[0]!, 'src')!}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('filters are links: each active one removable, each category a narrower search', async () => {
    const { doc } = await page('/search?q=scale&category=design');
    const filters = doc.all('ul').find((u) => doc.attr(u, 'aria-label') === 'Active filters')!;
    const removals = doc.all('a', filters).map((a) => [doc.attr(a, 'aria-label'), doc.attr(a, 'href')]);
    expect(removals).toEqual([
      ['Remove the filter Words: “scale”', '/search?category=design'],
      ['Remove the filter Category: Design', '/search?q=scale'],
    ]);
    const nav = doc.all('nav').find((n) => doc.attr(n, 'aria-label') === 'Categories')!;
    const productivity = doc.all('a', nav).find((a) => doc.text(a) === 'Productivity')!;
    expect(doc.attr(productivity, 'href')).toBe('/search?q=scale&category=productivity');
    const design = doc.all('a', nav).find((a) => doc.text(a) === 'Design')!;
    expect(doc.attr(design, 'aria-current')).toBe('true');
  });

  it('pages are links, and a page past the end links the last page', async () => {
    const { doc } = await page('/search?limit=2&page=2');
    expect(linkHrefs(doc, 'Previous')).toEqual(['/search?limit=2']);
    expect(linkHrefs(doc, 'Next')).toEqual(['/search?page=3&limit=2']);
    const pagination = doc.all('nav').find((n) => doc.attr(n, 'aria-label') === 'Pages')!;
    const current = doc.all('a', pagination).filter((a) => doc.attr(a, 'aria-current') === 'page');
    expect(current.map((a) => doc.text(a))).toEqual(['2']);

    // Seven live listings, two a page: the last page is 4.
    const past = await page('/search?limit=2&page=9');
    expect(past.res.status).toBe(200);
    expect(resultSlugs(past.doc)).toEqual([]);
    expect(past.html).toContain('There is no page 9');
    expect(linkHrefs(past.doc, 'Go to page 4')).toEqual(['/search?page=4&limit=2']);
    const last = await page('/search?page=4&limit=2');
    expect(resultSlugs(last.doc)).toEqual([LIVE_SLUGS_NEWEST_FIRST[6]]);
  });
});

describe('what the API refuses, the page shows as a message', () => {
  it.each([
    ['?q=a', ['q']],
    ['?limit=0', ['limit']],
    ['?limit=51&page=0', ['page', 'limit']],
    ['?page=501', ['page']],
    ['?q=' + 'x'.repeat(101), ['q']],
    ['?category=Not%20A%20Slug', ['category']],
    ['?colour=red', ['colour']],
    ['?q=one&q=two', ['q']],
  ])('/search%s: 400, naming the same parameters as the API, the page still usable', async (query, params) => {
    const expected = await api(query);
    expect(expected.status).toBe(400);
    const named = expected.body.data!.issues.map((i) => i.path.join('.'));
    expect(named.sort()).toEqual([...params].sort());

    const { res, doc } = await page(`/search${query}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toContain('text/html');
    const alert = doc.all('div').find((d) => doc.attr(d, 'role') === 'alert')!;
    const reasons = doc.all('li', alert).map((li) => doc.text(li));
    expect(reasons.map((r) => r.slice(0, r.indexOf(':'))).sort()).toEqual(named.sort());
    expectUsable(doc);
  });

  it('markup and odd characters in the words come back as text, and never break the page', async () => {
    const q = '<img src=x onerror=alert(1)>"\'&amp;';
    const { res, html, doc } = await page(`/search?q=${encodeURIComponent(q)}`);
    expect(res.status).toBe(200);
    expect(html).not.toContain('<img src=x');
    expect(doc.attr(doc.byId('site-search-q')!, 'value')).toBe(q);
    expect(doc.texts('title')[0]).toBe(`Search: ${q} · Product directory`);

    const long = '<b>' + 'é'.repeat(400);
    const refused = await page(`/search?q=${encodeURIComponent(long)}`);
    expect(refused.res.status).toBe(400);
    expect(refused.html).not.toContain('<b>é');
    expect(refused.doc.attr(refused.doc.byId('site-search-q')!, 'value')).toBe(long);
  });
});

describe('listing and category pages', () => {
  it('labels and tags link to their searches, which find the listing', async () => {
    const { doc } = await page('/products/pixel-forge');
    const tags = doc.all('ul').find((u) => doc.attr(u, 'aria-label') === 'Labels and tags')!;
    const hrefs = doc.all('a', tags).map((a) => doc.attr(a, 'href')!);
    expect(hrefs).toEqual(['/search?label=new', '/search?label=editors-pick', '/search?tag=ai', '/search?tag=images']);
    for (const href of hrefs) expect(resultSlugs((await page(href)).doc)).toContain('pixel-forge');
  });

  it('shows the logo sized and the cover lazy and sized; a listing without either shows a neutral tile', async () => {
    const { doc } = await page('/products/pixel-forge');
    const imgs = doc.all('img').map((i) => ({ src: doc.attr(i, 'src'), width: doc.attr(i, 'width'), height: doc.attr(i, 'height'), loading: doc.attr(i, 'loading') }));
    expect(imgs).toEqual([
      { src: 'https://cdn.example.com/pixel-forge/logo.png', width: '64', height: '64', loading: undefined },
      { src: 'https://cdn.example.com/pixel-forge/cover.png', width: '1200', height: '630', loading: 'lazy' },
    ]);
    const plain = await page('/products/type-scale');
    expect(plain.doc.all('img', plain.doc.all('article')[0])).toEqual([]);
    const tile = plain.doc.all('span').find((s) => plain.doc.attr(s, 'class')?.startsWith('logo ') ?? false);
    expect(tile && plain.doc.text(tile)).toBe('T');
  });

  it('shows the whole premium profile and the promo with its code, offer and where to redeem', async () => {
    const { doc } = await page('/products/pixel-forge');
    expect(doc.texts('h2')).toEqual(expect.arrayContaining(['Offer for visitors', 'Highlights', 'Ideal for', 'Questions']));
    expect(doc.texts('code')).toContain('FORGE20');
    expect(doc.texts('p')).toContain('20% off the first year');
    expect(linkHrefs(doc, 'Redeem on pixelforge.example.com')).toEqual(['https://pixelforge.example.com']);
    expect(doc.texts('span')).toContain('Featured');
    expect(doc.texts('dt')).toContain('Is there a free trial?');
  });

  it("the category's noun heads the listing page's list of its other listings", async () => {
    const { doc } = await page('/products/pixel-forge');
    expect(doc.texts('h2')).toContain('More resources in Design');
    const related = doc.all('section').find((s) => doc.attr(s, 'class') === 'related')!;
    const links = doc.all('a', related).map((a) => doc.attr(a, 'href'));
    expect(links).toContain('/products/type-scale');
    expect(links).not.toContain('/products/pixel-forge');
  });

  it('a category pages through every live listing, past what a search can page', async () => {
    await insertCategory(stack.db.pool, { slug: 'big-shelf', name: 'Big Shelf', noun: 'gadgets' });
    await insertListings(
      stack.db.pool,
      Array.from({ length: 50 }, (_, i) => ({ slug: `big-${String(i).padStart(2, '0')}`, category: 'big-shelf', listed_at: new Date(Date.UTC(2024, 0, 1, 0, i)) })),
    );
    await stack.settle();
    const seen: string[] = [];
    let next: string | undefined = '/categories/big-shelf';
    let pages = 0;
    while (next) {
      const { res, doc } = await page(next);
      expect(res.status).toBe(200);
      seen.push(...resultSlugs(doc));
      next = linkHrefs(doc, 'Next')[0];
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => `big-${String(49 - i).padStart(2, '0')}`));
    const first = await page('/categories/big-shelf');
    expect(first.doc.texts('p')).toContain('50 gadgets, newest first · page 1 of 3');

    const past = await page('/categories/big-shelf?page=7');
    expect(past.res.status).toBe(200);
    expect(linkHrefs(past.doc, 'Go to page 3')).toEqual(['/categories/big-shelf?page=3']);
    const bad = await page('/categories/big-shelf?page=first');
    expect(bad.res.status).toBe(400);
    expect(bad.html).toContain('is not a page number');
    expect(resultSlugs(bad.doc)).toHaveLength(24);
  });
});

describe('what every public page tells machines', () => {
  it.each([
    ['/', 'http://catalog.test/', '/feed.xml'],
    ['/search?q=forge', 'http://catalog.test/search?q=forge', undefined],
    ['/categories/design', 'http://catalog.test/categories/design', '/categories/design/feed.xml'],
    ['/products/pixel-forge', 'http://catalog.test/products/pixel-forge', undefined],
  ])('%s: one canonical link (%s), a link preview, and its feed when it has one', async (path, canonical, feed) => {
    const { doc } = await page(path);
    const links = doc.all('link');
    expect(links.filter((l) => doc.attr(l, 'rel') === 'canonical').map((l) => doc.attr(l, 'href'))).toEqual([canonical]);
    const og = Object.fromEntries(doc.all('meta').filter((m) => doc.attr(m, 'property')?.startsWith('og:')).map((m) => [doc.attr(m, 'property'), doc.attr(m, 'content')]));
    expect(og['og:url']).toBe(canonical);
    expect(og['og:title']).toBeTruthy();
    const feeds = links.filter((l) => doc.attr(l, 'rel') === 'alternate' && doc.attr(l, 'type') === 'application/atom+xml').map((l) => doc.attr(l, 'href'));
    expect(feeds).toEqual(feed ? [feed] : []);
    const ld = doc.all('script').filter((s) => doc.attr(s, 'type') === 'application/ld+json');
    expect(ld).toHaveLength(path.startsWith('/products/') ? 1 : 0);
    if (ld.length > 0) expect(JSON.parse(doc.text(ld[0]!))).toMatchObject({ '@context': 'https://schema.org', name: 'Pixel Forge', url: canonical });
  });
});
