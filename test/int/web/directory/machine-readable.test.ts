import Fastify, { type FastifyInstance } from 'fastify';
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Category, Product } from '../../../../src/contract/schemas.ts';
import { FEED_ENTRIES, registerMachineReadable, ROBOTS_DISALLOWED } from '../../../../src/web/directory/machine-readable-routes.ts';
import { SITEMAP_LIMITS } from '../../../../src/web/directory/sitemap.ts';
import { FeedLink, ListingHead, SiteHead } from '../../../../src/web/directory/structured-data.tsx';
import { FIXTURE_IDS, LIVE_SLUGS_NEWEST_FIRST } from '../../../helpers/fixtures.ts';
import { parsePage } from '../../../helpers/html.ts';
import { startTestStack, type TestStack } from '../../../helpers/stack.ts';
import { childNamed, childrenNamed, parseXml, textOf, type XmlElement } from '../../../helpers/xml.ts';

/**
 * The directory's machine-readable side against a real service on the fixture catalog:
 * robots.txt, the sitemap, the Atom feeds, and the listing page's structured data. The test
 * stack's PUBLIC_URL is http://catalog.test and its SITE_URL https://directory.test: every
 * absolute URL here must be on the first.
 */
const PUBLIC = 'http://catalog.test';
const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
const ATOM_NS = 'http://www.w3.org/2005/Atom';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

async function get(path: string, init?: RequestInit) {
  const res = await fetch(`${stack.baseUrl}${path}`, init);
  return { res, body: await res.text() };
}

async function api<T>(path: string): Promise<T> {
  return (await (await fetch(`${stack.baseUrl}/api/v1${path}`)).json()) as T;
}

const product = (slug: string) => api<Product>(`/products/${slug}`);
const categories = async () => (await api<{ categories: Category[] }>('/categories')).categories;

async function setStatus(status: string, ...slugs: string[]) {
  await stack.db.pool.query('UPDATE catalog.listings SET status = $1 WHERE slug = ANY($2)', [status, slugs]);
  await stack.settle();
}

/** Every <url> of a urlset: its location and lastmod (undefined when absent). */
function urlsOf(xml: string): Map<string, string | undefined> {
  const set = parseXml(xml);
  expect(set).toMatchObject({ name: 'urlset', ns: SITEMAP_NS });
  const urls = new Map<string, string | undefined>();
  for (const u of childrenNamed(set, 'url')) {
    const lastmod = childrenNamed(u, 'lastmod')[0]?.text;
    urls.set(textOf(u, 'loc'), lastmod);
  }
  return urls;
}

/** What the sitemap must list: home, each category with a live listing, each live listing. */
async function expectedLocs(): Promise<string[]> {
  const live = (await api<{ products: Product[] }>('/search?limit=50')).products;
  const withListings = (await categories()).filter((c) => c.count > 0);
  return [`${PUBLIC}/`, ...withListings.map((c) => `${PUBLIC}/categories/${c.slug}`), ...live.map((p) => `${PUBLIC}/products/${p.slug}`)];
}

describe('robots.txt', () => {
  it('allows the public pages, disallows the private ones, and names the sitemap on the public URL', async () => {
    const { res, body } = await get('/robots.txt');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const lines = body.split('\n');
    expect(lines).toContain('User-agent: *');
    expect(lines).toContain(`Sitemap: ${PUBLIC}/sitemap.xml`);
    const disallowed = lines.filter((l) => l.startsWith('Disallow: ')).map((l) => l.slice('Disallow: '.length));
    expect(disallowed).toEqual([...ROBOTS_DISALLOWED]);
    // Read as a crawler reads it: the longest matching rule wins, and only `Allow: /` is shorter than any Disallow.
    const blocked = (path: string) => disallowed.some((p) => path.startsWith(p));
    for (const path of ['/signin', '/signin/link/abc', '/signout', '/dashboard', '/dashboard/new', '/dashboard/listings/pixel-forge', '/settings/apps', '/admin/review', '/admin/keys', '/oauth/authorize', '/oauth/consent/x', '/claim/token', '/pay/123', '/payments/stripe/webhook', '/api/mcp', '/api/v1/export', '/metrics']) {
      expect(blocked(path), path).toBe(true);
    }
    for (const path of ['/', '/search?q=ai', '/products/pixel-forge', '/categories/design', '/categories/design/feed.xml', '/feed.xml', '/sitemap.xml', '/api/v1/docs', '/assets/site.css', '/badge/pixel-forge.svg', '/icon.svg', '/icons/icon-192.png']) {
      expect(blocked(path), path).toBe(false);
    }
  });

  it('every route the service registers is either a public one or disallowed', () => {
    // Fastify's route tree, one path per line: "│   ├── /:slug (GET, HEAD)" under its parent.
    const paths: string[] = [];
    const parents: string[] = [];
    for (const line of stack.service.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /^([│ ]*)(?:├── |└── )(\S+) \(/.exec(line);
      if (!m) continue;
      const depth = [...m[1]!].length / 4;
      const path = (parents[depth - 1] ?? '') + m[2]!;
      parents[depth] = path;
      paths.push(path);
    }
    expect(paths).toContain('/dashboard/listings/:slug/upgrade');
    const PUBLIC_ROUTES = [
      /^\/$/,
      /^\/(search|feed\.xml|sitemap\.xml|robots\.txt|\*)$/,
      /^\/(products|categories|sitemaps|badge)\/:(slug|file)(\/feed\.xml)?$/,
      /^\/assets\//,
      /^\/(icon\.svg|icons\/icon-\d+\.png)$/,
      /^\/\.well-known\//,
      /^\/api\/v1\/(search|categories|products|products\/:slug|openapi\.json|docs)$/,
    ];
    const blocked = (path: string) => ROBOTS_DISALLOWED.some((p) => path.startsWith(p));
    for (const path of paths) {
      if (PUBLIC_ROUTES.some((r) => r.test(path))) expect(blocked(path), path).toBe(false);
      else expect(blocked(path), `${path} is neither a public page nor disallowed in robots.txt`).toBe(true);
    }
  });

  it('is not counted against the pages\' rate limit, unlike the sitemap and feeds', async () => {
    expect((await get('/robots.txt')).res.headers.get('ratelimit')).toBeNull();
    for (const path of ['/sitemap.xml', '/feed.xml']) expect((await get(path)).res.headers.get('ratelimit'), path).toMatch(/^"pages";/);
  });
});

describe('the sitemap', () => {
  it('lists the home page, every category with a live listing, and every live listing, with its listing time', async () => {
    const { res, body } = await get('/sitemap.xml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const urls = urlsOf(body);
    const expected = await expectedLocs();
    expect([...urls.keys()]).toEqual(expected);
    // The fixture catalog, spelled out: 7 live listings, 3 of the 4 categories (empty-shelf has none).
    expect(expected).toHaveLength(1 + 3 + LIVE_SLUGS_NEWEST_FIRST.length);
    expect(urls.has(`${PUBLIC}/categories/empty-shelf`)).toBe(false);
    for (const slug of LIVE_SLUGS_NEWEST_FIRST) {
      const lastmod = urls.get(`${PUBLIC}/products/${slug}`);
      expect(lastmod, slug).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(Date.parse(lastmod!)).toBe(Date.parse((await product(slug)).listed_at!));
    }
    expect(urls.get(`${PUBLIC}/`)).toBeUndefined();
    // Never on SITE_URL, which may be another site.
    expect(body).not.toContain('directory.test');
  });

  it('a listing hidden or rejected leaves it once the change is projected, and so does a category left empty', async () => {
    const before = await get('/sitemap.xml');
    await setStatus('hidden', 'deploy-kite', 'note-garden');
    await setStatus('rejected', 'type-scale');
    try {
      const after = await get('/sitemap.xml');
      const locs = [...urlsOf(after.body).keys()];
      expect(locs).toEqual(await expectedLocs());
      for (const gone of ['/products/deploy-kite', '/products/note-garden', '/products/type-scale', '/categories/productivity']) {
        expect(locs).not.toContain(`${PUBLIC}${gone}`);
      }
      expect(locs).toContain(`${PUBLIC}/products/pixel-forge`);
      expect(after.res.headers.get('etag')).not.toBe(before.res.headers.get('etag'));
    } finally {
      await setStatus('live', 'deploy-kite', 'note-garden', 'type-scale');
    }
    expect((await get('/sitemap.xml')).body).toBe(before.body);
  });

  describe('past one file\'s limit (a small limit, on the same read service)', () => {
    let app: FastifyInstance;
    const withLimit = async (maxUrls: number) => {
      app = Fastify();
      registerMachineReadable(app, { read: stack.service.read, config: { publicUrl: PUBLIC, cache: { maxAgeSeconds: 60 } }, sitemapLimits: { maxUrls, maxBytes: SITEMAP_LIMITS.maxBytes } });
      await app.ready();
      return app;
    };
    const inject = async (url: string) => {
      const res = await app.inject({ method: 'GET', url });
      return { status: res.statusCode, body: res.body, type: res.headers['content-type'] };
    };

    it('exactly the limit is one urlset; one more makes /sitemap.xml an index of parts, each within the limit', async () => {
      const all = await expectedLocs();
      await withLimit(all.length);
      expect([...urlsOf((await inject('/sitemap.xml')).body).keys()]).toEqual(all);
      expect((await inject('/sitemaps/1.xml')).status).toBe(404);
      await app.close();

      await withLimit(all.length - 1);
      const index = await inject('/sitemap.xml');
      expect(index.type).toBe('application/xml; charset=utf-8');
      const root = parseXml(index.body);
      expect(root).toMatchObject({ name: 'sitemapindex', ns: SITEMAP_NS });
      expect(childrenNamed(root, 'sitemap').map((s) => textOf(s, 'loc'))).toEqual([`${PUBLIC}/sitemaps/1.xml`, `${PUBLIC}/sitemaps/2.xml`]);
      const one = await inject('/sitemaps/1.xml');
      const two = await inject('/sitemaps/2.xml');
      expect(one.type).toBe('application/xml; charset=utf-8');
      expect([...urlsOf(one.body).keys()]).toHaveLength(all.length - 1);
      expect([...urlsOf(two.body).keys()]).toHaveLength(1);
      expect([...urlsOf(one.body).keys(), ...urlsOf(two.body).keys()]).toEqual(all);
      for (const past of ['/sitemaps/3.xml', '/sitemaps/0.xml', '/sitemaps/01.xml', '/sitemaps/one.xml', '/sitemaps/1.txt']) expect((await inject(past)).status, past).toBe(404);
      await app.close();
    });

    it('a third of the limit makes three parts', async () => {
      const all = await expectedLocs();
      await withLimit(Math.ceil(all.length / 3));
      const parts = childrenNamed(parseXml((await inject('/sitemap.xml')).body), 'sitemap');
      expect(parts).toHaveLength(3);
      const listed: string[] = [];
      for (const p of parts) listed.push(...urlsOf((await inject(new URL(textOf(p, 'loc')).pathname)).body).keys());
      expect(listed).toEqual(all);
      await app.close();
    });
  });
});

/** A feed's entries, each with the parts a test reads. */
function feedOf(xml: string) {
  const feed = parseXml(xml);
  expect(feed).toMatchObject({ name: 'feed', ns: ATOM_NS });
  const links = (el: XmlElement) => Object.fromEntries(childrenNamed(el, 'link').map((l) => [l.attrs.rel, l.attrs]));
  return {
    feed,
    links: links(feed),
    entries: childrenNamed(feed, 'entry').map((e) => ({
      id: textOf(e, 'id'),
      title: childNamed(e, 'title'),
      links: links(e),
      published: textOf(e, 'published'),
      updated: textOf(e, 'updated'),
      summary: childNamed(e, 'summary'),
      content: childNamed(e, 'content'),
      author: { name: textOf(childNamed(e, 'author'), 'name'), uri: childrenNamed(childNamed(e, 'author'), 'uri')[0]?.text },
      categories: childrenNamed(e, 'category').map((c) => c.attrs),
    })),
  };
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

describe('the Atom feeds', () => {
  it('/feed.xml: the newest listings in the search\'s order, each entry complete', async () => {
    const { res, body } = await get('/feed.xml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
    const { feed, links, entries } = feedOf(body);
    expect(textOf(feed, 'id')).toBe(`${PUBLIC}/feed.xml`);
    expect(textOf(feed, 'title')).toBe('Product directory: newest listings');
    expect(links.self).toMatchObject({ href: `${PUBLIC}/feed.xml`, type: 'application/atom+xml' });
    expect(links.alternate).toMatchObject({ href: `${PUBLIC}/`, type: 'text/html' });
    expect(textOf(childNamed(feed, 'author'), 'name')).toBe('Product directory');

    const search = (await api<{ products: Product[] }>(`/search?limit=${FEED_ENTRIES}`)).products;
    expect(entries.map((e) => e.links.alternate?.href)).toEqual(search.map((p) => `${PUBLIC}/products/${p.slug}`));
    expect(entries.map((e) => e.links.alternate?.href)).toEqual(LIVE_SLUGS_NEWEST_FIRST.map((s) => `${PUBLIC}/products/${s}`));
    expect(textOf(feed, 'updated')).toBe(search[0]!.listed_at);
    const names = new Map((await categories()).map((c) => [c.slug, c.name]));
    for (const [i, p] of search.entries()) {
      const e = entries[i]!;
      expect(e.id).toBe(`urn:uuid:${FIXTURE_IDS[p.slug]}`);
      expect(e.title).toMatchObject({ text: p.name, attrs: { type: 'text' } });
      expect(e.published).toBe(p.listed_at);
      expect(e.updated).toBe(p.listed_at);
      expect(e.published).toMatch(RFC3339);
      expect(e.summary).toMatchObject({ text: p.punchline, attrs: { type: 'text' } });
      expect(e.content).toMatchObject({ text: p.description, attrs: { type: 'html' } });
      expect(e.author).toEqual({ name: p.name, uri: p.website });
      expect(e.categories).toEqual(p.category ? [{ term: p.category, scheme: `${PUBLIC}/categories/`, label: names.get(p.category) }] : []);
    }
    // Newest first, strictly by listing time.
    const times = entries.map((e) => Date.parse(e.published));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(body).not.toContain('directory.test');
  });

  it('per category: only its listings, newest first; an empty category is an empty feed; an unknown one is 404', async () => {
    const { res, body } = await get('/categories/developer-tools/feed.xml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
    const { feed, links, entries } = feedOf(body);
    expect(textOf(feed, 'id')).toBe(`${PUBLIC}/categories/developer-tools/feed.xml`);
    expect(textOf(feed, 'title')).toBe('Product directory: newest in Developer Tools');
    expect(links.self?.href).toBe(`${PUBLIC}/categories/developer-tools/feed.xml`);
    expect(links.alternate?.href).toBe(`${PUBLIC}/categories/developer-tools`);
    expect(entries.map((e) => e.title.text)).toEqual(['Query Pilot', 'Code Lantern', 'Deploy Kite']);
    expect(entries.every((e) => e.categories[0]?.term === 'developer-tools')).toBe(true);

    const empty = feedOf((await get('/categories/empty-shelf/feed.xml')).body);
    expect(empty.entries).toEqual([]);
    expect(textOf(empty.feed, 'updated')).toMatch(RFC3339);

    const missing = await get('/categories/nope/feed.xml');
    expect(missing.res.status).toBe(404);
    expect(missing.res.headers.get('cache-control')).toBe('no-store');
    expect(parsePage(missing.body).texts('p')).toContain("There is no category 'nope'.");
  });

  it('a listing that leaves the catalog leaves the feeds', async () => {
    await setStatus('hidden', 'query-pilot');
    try {
      const all = feedOf((await get('/feed.xml')).body).entries.map((e) => e.title.text);
      expect(all).not.toContain('Query Pilot');
      expect(all).toHaveLength(LIVE_SLUGS_NEWEST_FIRST.length - 1);
      const dev = feedOf((await get('/categories/developer-tools/feed.xml')).body).entries.map((e) => e.title.text);
      expect(dev).toEqual(['Code Lantern', 'Deploy Kite']);
    } finally {
      await setStatus('live', 'query-pilot');
    }
  });
});

describe('caching', () => {
  it('sitemap, feeds and robots.txt carry an ETag and the catalog\'s Cache-Control, and answer 304 while unchanged', async () => {
    const catalogCacheControl = (await fetch(`${stack.baseUrl}/api/v1/categories`)).headers.get('cache-control');
    expect(catalogCacheControl).toMatch(/^public, /);
    for (const path of ['/robots.txt', '/sitemap.xml', '/feed.xml', '/categories/design/feed.xml']) {
      const first = await get(path);
      const etag = first.res.headers.get('etag');
      expect(etag, path).toMatch(/^"[^"]+"$/);
      expect(first.res.headers.get('cache-control'), path).toBe(catalogCacheControl);
      const again = await get(path, { headers: { 'if-none-match': etag! } });
      expect(again.res.status, path).toBe(304);
      expect(again.body, path).toBe('');
      expect(again.res.headers.get('etag'), path).toBe(etag);
      const other = await get(path, { headers: { 'if-none-match': '"something-else"' } });
      expect(other.res.status, path).toBe(200);
      expect(other.body, path).toBe(first.body);
    }
  });

  it('a change to a listing changes the feed\'s ETag: a stale copy is answered in full', async () => {
    const before = await get('/categories/design/feed.xml');
    const setPunchline = async (text: string) => {
      await stack.db.pool.query(`UPDATE catalog.listings SET punchline = $1 WHERE slug = 'pixel-forge'`, [text]);
      await stack.settle();
    };
    await setPunchline('Sketches become vectors');
    try {
      const after = await get('/categories/design/feed.xml', { headers: { 'if-none-match': before.res.headers.get('etag')! } });
      expect(after.res.status).toBe(200);
      expect(feedOf(after.body).entries[0]!.summary.text).toBe('Sketches become vectors');
    } finally {
      await setPunchline('Generate crisp illustrations from a sketch');
    }
    // The same catalog again: the same bytes, so the first copy is current once more.
    expect((await get('/categories/design/feed.xml', { headers: { 'if-none-match': before.res.headers.get('etag')! } })).res.status).toBe(304);
  });
});

describe('hostile text', () => {
  const hostile = `<script>alert(1)</script>&"' ]]> <!-- \u0001`;

  it('a listing named with markup comes out as well-formed XML with its name as text', async () => {
    const { rows } = await stack.db.pool.query<{ name: string; punchline: string }>(`SELECT name, punchline FROM catalog.listings WHERE slug = 'code-lantern'`);
    await stack.db.pool.query(`UPDATE catalog.listings SET name = $1, punchline = $1 WHERE slug = 'code-lantern'`, [hostile]);
    await stack.settle();
    onTestFinished(async () => {
      await stack.db.pool.query(`UPDATE catalog.listings SET name = $1, punchline = $2 WHERE slug = 'code-lantern'`, [rows[0]!.name, rows[0]!.punchline]);
      await stack.settle();
    });
    const asText = hostile.replace('\u0001', '');
    for (const path of ['/feed.xml', '/categories/developer-tools/feed.xml']) {
      const { body } = await get(path);
      expect(body).not.toContain('<script>');
      const entry = feedOf(body).entries.find((e) => e.id === `urn:uuid:${FIXTURE_IDS['code-lantern']}`)!;
      expect(entry.title.text).toBe(asText);
      expect(entry.summary.text).toBe(asText);
      expect(entry.author.name).toBe(asText);
    }
    // The sitemap never carries a name, and still parses.
    expect(urlsOf((await get('/sitemap.xml')).body).has(`${PUBLIC}/products/code-lantern`)).toBe(true);
  });
});

describe('structured data (ListingHead)', () => {
  const pageUrl = (slug: string) => `${PUBLIC}/products/${slug}`;

  async function head(slug: string, change?: (p: Product) => Product) {
    const p0 = await product(slug);
    const p = change ? change(p0) : p0;
    const category = (await categories()).find((c) => c.slug === p.category);
    const html = renderToString(h(ListingHead, { product: p, category, pageUrl: pageUrl(p.slug) }));
    const doc = parsePage(html);
    const scripts = doc.all('script');
    expect(scripts).toHaveLength(1);
    expect(doc.attr(scripts[0]!, 'type')).toBe('application/ld+json');
    const meta: Record<string, string> = {};
    for (const m of doc.all('meta')) meta[doc.attr(m, 'property') ?? doc.attr(m, 'name')!] = doc.attr(m, 'content')!;
    return { html, p, jsonLd: JSON.parse(doc.text(scripts[0]!)) as unknown, meta };
  }

  it('a software listing with a cover: SoftwareApplication, its cover as image, a large card', async () => {
    const { jsonLd, meta } = await head('pixel-forge');
    expect(jsonLd).toEqual({
      '@context': 'https://schema.org',
      '@type': 'SoftwareApplication',
      name: 'Pixel Forge',
      description: 'Generate crisp illustrations from a sketch',
      url: `${PUBLIC}/products/pixel-forge`,
      image: 'https://cdn.example.com/pixel-forge/cover.png',
      applicationCategory: 'Design',
      datePublished: '2026-10-20T12:00:00.000Z',
    });
    expect(meta).toEqual({
      'og:type': 'website',
      'og:site_name': 'Product directory',
      'og:title': 'Pixel Forge',
      'og:description': 'Generate crisp illustrations from a sketch',
      'og:url': `${PUBLIC}/products/pixel-forge`,
      'og:image': 'https://cdn.example.com/pixel-forge/cover.png',
      'twitter:card': 'summary_large_image',
    });
  });

  it('a free software listing with no image: a price of 0, no image, a summary card', async () => {
    const { jsonLd, meta } = await head('type-scale');
    expect(jsonLd).toEqual({
      '@context': 'https://schema.org',
      '@type': 'SoftwareApplication',
      name: 'Type Scale',
      description: 'Harmonious font sizes for every screen',
      url: `${PUBLIC}/products/type-scale`,
      applicationCategory: 'Design',
      offers: { '@type': 'Offer', price: 0 },
      datePublished: '2026-10-10T08:30:00.000Z',
    });
    expect(meta['og:image']).toBeUndefined();
    expect(meta['twitter:card']).toBe('summary');
  });

  it('a digital product: Product, with its category as category', async () => {
    const { jsonLd } = await head('note-garden');
    expect(jsonLd).toEqual({
      '@context': 'https://schema.org',
      '@type': 'Product',
      name: 'Note Garden',
      description: 'Grow ideas from daily notes',
      url: `${PUBLIC}/products/note-garden`,
      category: 'Productivity',
      datePublished: '2026-07-04T09:15:30.000Z',
    });
  });

  it('a listing with every optional field empty: SoftwareApplication with nothing invented', async () => {
    const { jsonLd, meta } = await head('nullish-widget');
    expect(jsonLd).toEqual({
      '@context': 'https://schema.org',
      '@type': 'SoftwareApplication',
      name: 'Nullish Widget',
      description: 'A listing with every optional field empty',
      url: `${PUBLIC}/products/nullish-widget`,
      datePublished: '2026-01-02T03:04:05.000Z',
    });
    expect(meta['twitter:card']).toBe('summary');
  });

  it('a logo alone is the image of a summary card; an http image is never named', async () => {
    const logoOnly = await head('pixel-forge', (p) => ({ ...p, cover: null }));
    expect((logoOnly.jsonLd as { image: string }).image).toBe('https://cdn.example.com/pixel-forge/logo.png');
    expect(logoOnly.meta['og:image']).toBe('https://cdn.example.com/pixel-forge/logo.png');
    expect(logoOnly.meta['twitter:card']).toBe('summary');
    const insecure = await head('pixel-forge', (p) => ({ ...p, cover: 'http://cdn.example.com/c.png', logo: 'http://cdn.example.com/l.png' }));
    expect(insecure.jsonLd).not.toHaveProperty('image');
    expect(insecure.meta['og:image']).toBeUndefined();
    expect(insecure.meta['twitter:card']).toBe('summary');
  });

  it('no text of a listing can end the script element or open a comment', async () => {
    const evil = `</script><script>alert(1)</script><!-- & \u2028\u2029 -->`;
    const { html, jsonLd } = await head('pixel-forge', (p) => ({ ...p, name: evil, punchline: `</SCRIPT >${evil}` }));
    expect(html.match(/<\/script/gi)).toHaveLength(1);
    expect(html).not.toContain('<!--');
    // The element's raw text: no character that could end it, open a comment, or end a line.
    const raw = /^<script type="application\/ld\+json">(.*?)<\/script>/s.exec(html)![1]!;
    expect(raw).not.toMatch(/[<>&\u2028\u2029]/);
    expect(jsonLd).toMatchObject({ name: evil, description: `</SCRIPT >${evil}` });
  });

  it('SiteHead and FeedLink', () => {
    const doc = parsePage(
      renderToString(
        h('head', null, h(SiteHead, { title: 'Design', description: 'Design tools & <more>', pageUrl: `${PUBLIC}/categories/design` }), h(FeedLink, { href: `${PUBLIC}/categories/design/feed.xml`, title: 'Design: newest' })),
      ),
    );
    const meta = Object.fromEntries(doc.all('meta').map((m) => [doc.attr(m, 'property') ?? doc.attr(m, 'name'), doc.attr(m, 'content')]));
    expect(meta).toEqual({
      'og:type': 'website',
      'og:site_name': 'Product directory',
      'og:title': 'Design',
      'og:description': 'Design tools & <more>',
      'og:url': `${PUBLIC}/categories/design`,
      'twitter:card': 'summary',
    });
    const link = doc.all('link')[0]!;
    expect([doc.attr(link, 'rel'), doc.attr(link, 'type'), doc.attr(link, 'href'), doc.attr(link, 'title')]).toEqual([
      'alternate',
      'application/atom+xml',
      `${PUBLIC}/categories/design/feed.xml`,
      'Design: newest',
    ]);
  });
});
