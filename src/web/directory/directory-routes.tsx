import type { FastifyInstance, FastifyReply } from 'fastify';
import { CatalogError } from '../../contract/errors.ts';
import type { Category, Product, SearchResult } from '../../contract/schemas.ts';
import { cacheControlFor } from '../../http/caching.ts';
import { parseProductSlug, parseSearchParams } from '../../read/params.ts';
import type { ReadService } from '../../read/read-service.ts';
import { CategoryPage, HomePage, ListingPage, NotFoundPage } from './directory-pages.tsx';
import { sendPrivatePage, sendPublicPage } from '../render.ts';

/**
 * The directory pages, so that every `url` the API hands out opens something when SITE_URL is
 * this service (its default): the listing page `/products/{slug}`, the category page
 * `/categories/{slug}` (its live listings, newest first) and the home page. Server-rendered
 * from the same read service as REST and MCP, and cached like the API's answers.
 */
const PAGE_SIZE = 24;
/** How much of a requested slug a 404 page repeats. */
const ECHO_MAX = 200;

export interface DirectoryPagesDeps {
  read: ReadService;
  config: { cache: { maxAgeSeconds: number } };
}

export function registerDirectoryPages(scope: FastifyInstance, deps: DirectoryPagesDeps): void {
  const { read } = deps;
  const cacheControl = cacheControlFor(deps.config.cache.maxAgeSeconds);

  const categories = (): Category[] => (JSON.parse(read.categories().body) as { categories: Category[] }).categories;
  const categoryBySlug = (slug: string): Category | undefined => categories().find((c) => c.slug === slug);
  // A miss is not cached: the listing may go live a moment later.
  const notFound = (reply: FastifyReply, message: string) => sendPrivatePage(reply, <NotFoundPage message={message} />, { status: 404 });

  scope.get('/', async (request, reply) => {
    const latest = JSON.parse((await read.search({ page: 1, limit: 10 })).body) as SearchResult;
    return sendPublicPage(request, reply, <HomePage categories={categories()} latest={latest} />, cacheControl);
  });

  scope.get<{ Params: { slug: string } }>('/products/:slug', async (request, reply) => {
    let product: Product;
    try {
      product = JSON.parse(read.product(parseProductSlug({ slug: request.params.slug })).body) as Product;
    } catch (err) {
      if (err instanceof CatalogError && (err.status === 404 || err.status === 400)) {
        return notFound(reply, `No live listing has the slug '${request.params.slug.slice(0, ECHO_MAX)}'.`);
      }
      throw err;
    }
    const category = product.category ? categoryBySlug(product.category) : undefined;
    return sendPublicPage(request, reply, <ListingPage product={product} category={category} websiteFollowed={read.websiteFollowed(product.slug)} />, cacheControl);
  });

  scope.get<{ Params: { slug: string }; Querystring: { page?: string } }>('/categories/:slug', async (request, reply) => {
    const category = categoryBySlug(request.params.slug);
    if (!category) return notFound(reply, `There is no category '${request.params.slug.slice(0, ECHO_MAX)}'.`);
    let query;
    try {
      query = parseSearchParams({ category: category.slug, page: request.query.page, limit: PAGE_SIZE });
    } catch {
      // A page number out of range shows the first page rather than an error page.
      query = { category: category.slug, page: 1, limit: PAGE_SIZE };
    }
    const result = JSON.parse((await read.search(query)).body) as SearchResult;
    return sendPublicPage(request, reply, <CategoryPage category={category} result={result} />, cacheControl);
  });
}
