import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { h, type VNode } from 'preact';
import type { Category, Product, SearchResult } from '../../contract/schemas.ts';
import { cacheControlFor, sendCacheable } from '../../http/caching.ts';
import { etagOf, type ReadService } from '../../read/read-service.ts';
import { SITE_NAME } from '../components/layout.tsx';
import { sendPrivatePage } from '../render.ts';
import { atomFeed, type AtomEntry } from './atom.ts';
import { NotFoundPage } from './directory-pages.tsx';
import { buildSitemap, isoDateTime, SITEMAP_LIMITS, type SitemapLimits, type SitemapUrl } from './sitemap.ts';

/**
 * What search engines and feed readers read (docs/pages.md, "For search engines and feed
 * readers"): /robots.txt, /sitemap.xml (a sitemap index with parts at /sitemaps/{n}.xml once the
 * URLs pass one file's limits), and the Atom feeds of the newest listings, /feed.xml and
 * /categories/{slug}/feed.xml.
 *
 * Every absolute URL is on the service's public URL (PUBLIC_URL), where these pages are served;
 * SITE_URL may name another site. Answers carry an ETag and the catalog's Cache-Control, with a
 * bodiless 304 for a current copy, like the API's. A sitemap or feed is built once per projection
 * version and kept until the version changes: a 100,000-listing sitemap is built once per change.
 */

/** Entries of a feed: the newest listings, as a search with no query orders them. */
export const FEED_ENTRIES = 50;

const XML_CONTENT_TYPE = 'application/xml; charset=utf-8';
const ATOM_CONTENT_TYPE = 'application/atom+xml; charset=utf-8';
const ROBOTS_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** A feed's `updated` while it has no entry: the start of the epoch, the same in every process. */
const NEVER = '1970-01-01T00:00:00Z';

/**
 * Paths of pages that are one visitor's own (a maker's or an operator's), steps of a sign-in or
 * a payment, machine endpoints with no page, and the two heavy machine reads (the whole catalog,
 * the change feed): none is for an index. Everything else is public and may be crawled: home,
 * search, categories, listings, the API reference.
 */
export const ROBOTS_DISALLOWED = [
  '/signin',
  '/signout',
  '/dashboard',
  '/settings',
  '/admin',
  '/claim/',
  '/pay/',
  '/payments/',
  '/oauth/',
  '/api/mcp',
  '/api/v1/export',
  '/api/v1/changes',
  '/healthz',
  '/readyz',
  '/metrics',
] as const;

export interface MachineReadableDeps {
  read: ReadService;
  config: { publicUrl: string; cache: { maxAgeSeconds: number } };
  /** Per sitemap file; the protocol's limits unless a test asks for small ones. */
  sitemapLimits?: SitemapLimits;
}

/** An answer kept as the bytes it is sent as. */
interface Answer {
  readonly bytes: Buffer;
  readonly etag: string;
  readonly body: string;
}

function answerOf(text: string): Answer {
  const bytes = Buffer.from(text, 'utf8');
  return {
    bytes,
    etag: etagOf(bytes),
    get body() {
      return bytes.toString('utf8');
    },
  };
}

function robotsTxt(publicUrl: string): string {
  return [
    `# ${SITE_NAME}: every public page may be crawled; the paths below are private, per visitor, or not pages.`,
    'User-agent: *',
    ...ROBOTS_DISALLOWED.map((p) => `Disallow: ${p}`),
    'Allow: /',
    '',
    `Sitemap: ${publicUrl}/sitemap.xml`,
    '',
  ].join('\n');
}

/**
 * GET /robots.txt. Registered where no rate limit applies (like the stylesheet): a crawler asks
 * for it before anything else, it is answered from memory, and a crawler refused it (a 429) takes
 * the whole site as disallowed for a while.
 */
export function registerRobotsTxt(scope: FastifyInstance, deps: Pick<MachineReadableDeps, 'config'>): void {
  const robots = answerOf(robotsTxt(deps.config.publicUrl));
  const cacheControl = cacheControlFor(deps.config.cache.maxAgeSeconds);
  scope.get('/robots.txt', async (request, reply) => sendCacheable(request, reply, robots, cacheControl, ROBOTS_CONTENT_TYPE));
}

/** The sitemap's files as answers: `index` is what /sitemap.xml serves, `parts` its parts (none for one file). */
interface SitemapAnswers {
  main: Answer;
  parts: Answer[];
}

/** A part's file name: /sitemaps/1.xml, /sitemaps/2.xml, … */
const PART_FILE = /^([1-9][0-9]{0,8})\.xml$/;

export function registerMachineReadable(scope: FastifyInstance, deps: MachineReadableDeps): void {
  const { read } = deps;
  const base = deps.config.publicUrl;
  const limits = deps.sitemapLimits ?? SITEMAP_LIMITS;
  const cacheControl = cacheControlFor(deps.config.cache.maxAgeSeconds);

  const categories = (): Category[] => (JSON.parse(read.categories().body) as { categories: Category[] }).categories;
  const listingUrl = (slug: string) => `${base}/products/${encodeURIComponent(slug)}`;
  const categoryUrl = (slug: string) => `${base}/categories/${encodeURIComponent(slug)}`;
  const notFound = (reply: FastifyReply, message: string) => sendPrivatePage(reply, h(NotFoundPage, { message }) as VNode, { status: 404 });

  // ---- sitemap ----

  function* sitemapUrls(): Generator<SitemapUrl> {
    yield { loc: `${base}/` };
    // A category page with no live listing says only that: not worth a crawler's visit.
    for (const c of categories()) if (c.count > 0) yield { loc: categoryUrl(c.slug) };
    // lastmod: the listing's listed_at, the one time the read side keeps for every listing.
    for (const l of read.listings()) {
      yield { loc: listingUrl(l.slug), lastmod: Number.isFinite(l.listedAt) ? isoDateTime(l.listedAt) : undefined };
    }
  }

  let sitemap: { version: number; answers: SitemapAnswers } | undefined;
  /** Built on the first request after a change, synchronously: it reads one version of the mirror. */
  function currentSitemap(): SitemapAnswers {
    const version = read.version;
    if (sitemap?.version !== version) {
      const built = buildSitemap(sitemapUrls(), (n) => `${base}/sitemaps/${n}.xml`, limits);
      const answers = built.kind === 'urlset' ? { main: answerOf(built.file), parts: [] } : { main: answerOf(built.index), parts: built.parts.map(answerOf) };
      sitemap = { version, answers };
    }
    return sitemap.answers;
  }

  scope.get('/sitemap.xml', async (request, reply) => sendCacheable(request, reply, currentSitemap().main, cacheControl, XML_CONTENT_TYPE));

  scope.get<{ Params: { file: string } }>('/sitemaps/:file', async (request, reply) => {
    const n = PART_FILE.exec(request.params.file)?.[1];
    const part = n === undefined ? undefined : currentSitemap().parts[Number(n) - 1];
    if (!part) return notFound(reply, 'There is no such part of the sitemap: /sitemap.xml lists the parts there are.');
    return sendCacheable(request, reply, part, cacheControl, XML_CONTENT_TYPE);
  });

  // ---- Atom feeds ----

  const websiteUri = (u: string) => (/^https?:\/\//i.test(u) ? u : undefined);

  function entryOf(p: Product & { listed_at: string }, names: ReadonlyMap<string, string>): AtomEntry {
    return {
      // The listing's id never changes, whatever becomes of its slug or of the service's address.
      id: `urn:uuid:${p.id}`,
      title: p.name,
      link: listingUrl(p.slug),
      published: p.listed_at,
      // The newest change of a listing the read side knows is its listing time.
      updated: p.listed_at,
      author: { name: p.name, uri: websiteUri(p.website) },
      category: p.category === null ? undefined : { term: p.category, label: names.get(p.category), scheme: `${base}/categories/` },
      summary: p.punchline,
      contentHtml: p.description,
    };
  }

  async function buildFeed(category: Category | undefined, all: readonly Category[]): Promise<string> {
    const result = JSON.parse((await read.search({ ...(category && { category: category.slug }), page: 1, limit: FEED_ENTRIES })).body) as SearchResult;
    const names = new Map(all.map((c) => [c.slug, c.name]));
    // A live listing with no listing time is not new: it is left out (the search puts it last).
    const entries = result.products.filter((p): p is Product & { listed_at: string } => p.listed_at !== null).map((p) => entryOf(p, names));
    const self = category ? `${categoryUrl(category.slug)}/feed.xml` : `${base}/feed.xml`;
    return atomFeed({
      id: self,
      title: category ? `${SITE_NAME}: newest in ${category.name}` : `${SITE_NAME}: newest listings`,
      // Entries are newest first: the first one's time is the feed's.
      updated: entries[0]?.updated ?? NEVER,
      self,
      alternate: category ? categoryUrl(category.slug) : `${base}/`,
      author: { name: SITE_NAME, uri: `${base}/` },
      entries,
    });
  }

  let feeds = { version: Number.NaN, kept: new Map<string, Answer>() };
  async function sendFeed(request: FastifyRequest, reply: FastifyReply, category: Category | undefined, all: readonly Category[]): Promise<FastifyReply> {
    const version = read.version;
    if (feeds.version !== version) feeds = { version, kept: new Map() };
    const key = category?.slug ?? '';
    let feed = feeds.kept.get(key);
    if (!feed) {
      feed = answerOf(await buildFeed(category, all));
      // Kept only under the version it was built from.
      if (feeds.version === version && read.version === version) feeds.kept.set(key, feed);
    }
    return sendCacheable(request, reply, feed, cacheControl, ATOM_CONTENT_TYPE);
  }

  scope.get('/feed.xml', async (request, reply) => sendFeed(request, reply, undefined, categories()));

  scope.get<{ Params: { slug: string } }>('/categories/:slug/feed.xml', async (request, reply) => {
    const all = categories();
    const category = all.find((c) => c.slug === request.params.slug);
    if (!category) return notFound(reply, `There is no category '${request.params.slug.slice(0, 200)}'.`);
    return sendFeed(request, reply, category, all);
  });
}
