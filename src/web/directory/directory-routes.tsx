import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CatalogError } from '../../contract/errors.ts';
import type { Category, Product, SearchQuery, SearchResult } from '../../contract/schemas.ts';
import { cacheControlFor } from '../../http/caching.ts';
import { parseProductSlug, parseSearchParams } from '../../read/params.ts';
import type { ReadService } from '../../read/read-service.ts';
import { createPageCache, type KeptRoutes, type PageCache } from '../page-cache.ts';
import { CategoryPage, categoryMap, HomePage, ListingPage, NotFoundPage, SearchPage, searchHref, type SearchFilters } from './directory-pages.tsx';
import { sendPrivatePage } from '../render.ts';
import { SITE_NAME } from '../components/layout.tsx';
import { FeedLink, ListingHead, SiteHead } from './structured-data.tsx';

/**
 * The directory pages, so that every `url` the API hands out opens something when SITE_URL is
 * this service (its default): the listing page `/products/{slug}`, the category page
 * `/categories/{slug}` (its live listings, newest first, every one of them page by page), the
 * search page `/search` and the home page. Server-rendered from the same read service as REST
 * and MCP, rendered once per projection version (page-cache.ts) and cached like the API's
 * answers.
 */
const CATEGORY_PAGE_SIZE = 24;
const HOME_NEWEST = 10;
/** Other listings of its category a listing page shows. */
const RELATED = 4;
/** How much of a requested slug a 404 page repeats. */
const ECHO_MAX = 200;

export interface DirectoryPagesDeps {
  read: ReadService;
  config: { cache: { maxAgeSeconds: number }; publicUrl: string };
  /** Today's date for a promo's last day; the clock unless a test sets it. */
  now?: () => Date;
}

export interface DirectoryPages {
  readonly cache: PageCache;
}

/** A query parameter as a page shows it back: its text when it is one string. */
function shownParam(value: unknown): string | undefined {
  return typeof value === 'string' ? value.trim() : undefined;
}

/**
 * The pages kept (page-cache.ts), each with the query parameters it reads: the search page reads
 * them all (an unknown one is refused), a category page its page number, the others none.
 */
const KEPT_ROUTES: KeptRoutes = { '/': [], '/products/:slug': [], '/categories/:slug': ['page'], '/search': 'every' };

export function registerDirectoryPages(scope: FastifyInstance, deps: DirectoryPagesDeps): DirectoryPages {
  const { read } = deps;
  const now = deps.now ?? (() => new Date());
  const origin = deps.config.publicUrl.replace(/\/+$/, '');
  const absolute = (path: string) => `${origin}${path}`;
  const cache = createPageCache({ version: () => read.version, routes: KEPT_ROUTES, cacheControl: cacheControlFor(deps.config.cache.maxAgeSeconds) });

  // The categories as objects, read once per projection version (every category page asks).
  let parsedCategories: { version: number; list: Category[] } | undefined;
  const categories = (): Category[] => {
    const version = read.version;
    if (parsedCategories?.version !== version) parsedCategories = { version, list: (JSON.parse(read.categories().body) as { categories: Category[] }).categories };
    return parsedCategories.list;
  };
  const search = async (query: SearchQuery): Promise<SearchResult> => JSON.parse((await read.search(query)).body) as SearchResult;
  // A miss is not cached: the listing may go live a moment later.
  const notFound = (reply: FastifyReply, message: string) => sendPrivatePage(reply, <NotFoundPage message={message} />, { status: 404 });

  scope.get('/', async (request, reply) =>
    cache.send(request, reply, async () => ({
      page: (
        <HomePage
          categories={categories()}
          latest={await search({ page: 1, limit: HOME_NEWEST })}
          links={{
            canonical: absolute('/'),
            head: (
              <>
                <SiteHead title={SITE_NAME} description="Live listings of software and digital products, searchable, as pages, JSON and over MCP." pageUrl={absolute('/')} />
                <FeedLink href="/feed.xml" title={`${SITE_NAME}: newest listings`} />
              </>
            ),
          }}
        />
      ),
    })),
  );

  scope.get<{ Params: { slug: string } }>('/products/:slug', async (request, reply) => {
    let slug: string;
    try {
      slug = parseProductSlug({ slug: request.params.slug });
    } catch (err) {
      if (err instanceof CatalogError && err.status === 400) return notFound(reply, `No live listing has the slug '${request.params.slug.slice(0, ECHO_MAX)}'.`);
      throw err;
    }
    const found = read.productBytes(slug);
    if (!found) return notFound(reply, `No live listing has the slug '${request.params.slug.slice(0, ECHO_MAX)}'.`);
    return cache.send(request, reply, async () => {
      const product = JSON.parse(read.product(slug).body) as Product;
      const all = categories();
      const category = product.category ? all.find((c) => c.slug === product.category) : undefined;
      const related = category ? (await search({ category: category.slug, page: 1, limit: RELATED + 1 })).products.filter((p) => p.slug !== product.slug).slice(0, RELATED) : [];
      return {
        page: (
          <ListingPage
            product={product}
            category={category}
            websiteFollowed={read.websiteFollowed(product.slug)}
            related={related}
            categories={categoryMap(all)}
            links={{
              canonical: absolute(`/products/${product.slug}`),
              head: <ListingHead product={product} category={category} pageUrl={absolute(`/products/${product.slug}`)} />,
            }}
            now={now()}
          />
        ),
      };
    });
  });

  scope.get<{ Params: { slug: string }; Querystring: Record<string, unknown> }>('/categories/:slug', async (request, reply) => {
    const category = categories().find((c) => c.slug === request.params.slug);
    if (!category) return notFound(reply, `There is no category '${request.params.slug.slice(0, ECHO_MAX)}'.`);
    return cache.send(request, reply, async () => {
      const base = `/categories/${category.slug}`;
      const pages = Math.max(1, Math.ceil(category.count / CATEGORY_PAGE_SIZE));
      const rawPage = request.query.page;
      const asked = rawPage === undefined || rawPage === '' ? 1 : typeof rawPage === 'string' && /^\d{1,9}$/.test(rawPage) ? Number(rawPage) : Number.NaN;
      const all = categories();
      const links = (n: number) => {
        const canonical = absolute(n > 1 ? `${base}?page=${n}` : base);
        return {
          canonical,
          head: (
            <>
              <SiteHead title={category.name} description={`${category.count} ${category.noun} in ${category.name}.`} pageUrl={canonical} />
              <FeedLink href={`${base}/feed.xml`} title={`${category.name}: the newest ${category.noun}`} />
            </>
          ),
        };
      };
      if (!Number.isInteger(asked) || asked < 1) {
        // Not a page number: the first page, with the reason, as a 400 (not kept, not cached).
        const result = await search({ category: category.slug, page: 1, limit: CATEGORY_PAGE_SIZE });
        return { page: <CategoryPage category={category} result={result} pages={pages} categories={categoryMap(all)} links={links(1)} refused={`'${String(rawPage).slice(0, ECHO_MAX)}' is not a page number: pages are numbered from 1.`} />, status: 400 };
      }
      // The search's own bound on page numbers is the API's (500); a category's list goes on.
      const result = await search({ category: category.slug, page: Math.min(asked, pages), limit: CATEGORY_PAGE_SIZE });
      const pastTheEnd = asked > pages ? asked : undefined;
      return { page: <CategoryPage category={category} result={result} pages={pages} {...(pastTheEnd !== undefined && { pastTheEnd })} categories={categoryMap(all)} links={links(Math.min(asked, pages))} /> };
    });
  });

  scope.get<{ Querystring: Record<string, unknown> }>('/search', async (request: FastifyRequest<{ Querystring: Record<string, unknown> }>, reply) =>
    cache.send(request, reply, async () => {
      const raw = request.query;
      // A form sends its empty fields: an empty parameter counts as not given.
      const input: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(raw)) if (v !== '') input[k] = v;
      const filters: SearchFilters = {};
      for (const name of ['q', 'category', 'label', 'tag', 'limit'] as const) {
        const v = shownParam(input[name]);
        if (v !== undefined && v !== '') filters[name] = v;
      }
      const all = categories();
      let query: SearchQuery;
      try {
        query = parseSearchParams(input);
      } catch (err) {
        if (!(err instanceof CatalogError) || err.status !== 400) throw err;
        return { page: <SearchPage filters={filters} issues={err.issues ?? [{ path: [], message: err.message }]} categories={all} links={{ canonical: absolute(searchHref(filters)) }} />, status: 400 };
      }
      const result = await search(query);
      const canonical = absolute(searchHref(filters, result.page));
      const head = <SiteHead title={filters.q ? `Search: ${filters.q}` : 'All listings'} description={`${result.total} live listings${filters.q ? ` matching “${filters.q}”` : ''}.`} pageUrl={canonical} />;
      return { page: <SearchPage filters={filters} result={result} categories={all} links={{ canonical, head }} /> };
    }),
  );

  return { cache };
}
