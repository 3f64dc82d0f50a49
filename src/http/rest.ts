import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.ts';
import type { Deprecations } from '../contract/deprecations.ts';
import type { ChangeFeed } from '../read/change-feed.ts';
import { parseNoParams, parseProductRequest, parseProductSlug, parseSearchParams } from '../read/params.ts';
import { etagOf, type ReadService } from '../read/read-service.ts';
import type { Budgets } from '../budgets/budgets.ts';
import { addBudgetHook, keyOfRequest } from './budget-hook.ts';
import { API_VARY, cacheControlFor, keyedCacheControlFor, sendCacheable } from './caching.ts';
import { registerCors } from './cors.ts';
import { METHOD_NOT_ALLOWED, notFoundRoute, sendError, requestPath } from './errors.ts';
import { registerFeedRoutes } from './feed/feed-routes.ts';
import type { Metrics } from './metrics.ts';
import { API_PREFIX, buildOpenApiDocument, openApiOptions } from './openapi.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The OpenAPI operation a route implements. */
    operationId?: string;
  }
}

export interface RestDeps {
  config: Config;
  read: ReadService;
  /** Request budgets, consumer keys among them (docs/keys.md). */
  budgets: Budgets;
  /** The bulk export and the change feed. */
  feed: ChangeFeed;
  /** The held long polls and exports are shown there. */
  metrics: Metrics;
  /** What the API has deprecated, marked in the OpenAPI document (the service's own unless given). */
  deprecations?: Deprecations;
}

/** Paths of the scope that answer GET and HEAD only; other methods get a 405 naming them. */
const GET_ONLY_PATHS = ['/search', '/categories', '/products', '/products/:slug', '/export', '/changes', '/openapi.json', '/docs'];
const KNOWN_PATH = /^\/(search|categories|products(\/[^/]*)?|export|changes|openapi\.json|docs)\/?$/;

/**
 * The REST API under /api/v1: thin handlers over the read service. Bodies are
 * the read service's JSON text, sent as they are (never parsed and re-serialized); validation
 * goes through the same parsers as the MCP tools, so both reject the same input with the same
 * issues. Fastify's own schema validation is not used: its error body is not ours.
 *
 * Order inside the scope: CORS first (preflights answered, headers on every answer), then the
 * rate limit (before validation: invalid requests count), then the routes.
 *
 * Budgets: /search spends from the search bucket (30/min), /export from the export bucket
 * (6/min), /changes from the change-feed bucket (120/min); /categories, /products/{slug}, the
 * OpenAPI document, the reference page, 405s and unknown paths under /api/v1 spend from the
 * other bucket (60/min). Only preflights are free.
 */
export async function registerRest(app: FastifyInstance, deps: RestDeps): Promise<void> {
  const { read, budgets, config } = deps;
  const publicCacheControl = cacheControlFor(config.cache.maxAgeSeconds);
  const keyedCacheControl = keyedCacheControlFor(config.cache.maxAgeSeconds);
  /** An answer of the scope, cacheable (caching.ts: public, or private to a consumer key's client). */
  const send = (request: FastifyRequest, reply: FastifyReply, answer: { body: string; etag: string; bytes?: Buffer }, contentType?: string) =>
    sendCacheable(request, reply, answer, keyOfRequest(request) ? keyedCacheControl : publicCacheControl, contentType, API_VARY);
  const document = buildOpenApiDocument({ ...openApiOptions(config), ...(deps.deprecations && { deprecations: deps.deprecations }) });
  const documentBody = JSON.stringify(document);
  const documentAnswer = { body: documentBody, etag: etagOf(documentBody) };
  // The reference page (and the modules that render it) waits for its first request.
  let docsPage: Promise<{ answer: { body: string; etag: string }; contentSecurityPolicy: string }> | undefined;
  const renderedDocsPage = () =>
    (docsPage ??= import('./docs-page.tsx').then(({ renderDocsPage }) => {
      const page = renderDocsPage(document);
      return { answer: { body: page.html, etag: etagOf(page.html) }, contentSecurityPolicy: page.contentSecurityPolicy };
    })).catch((err: unknown) => {
      docsPage = undefined;
      throw err;
    });

  await app.register(
    async (api) => {
      await registerCors(api);
      addBudgetHook(api, budgets, 'other', true);
      // Unknown paths under /api/v1 pass the hooks above too: JSON 404 with CORS headers.
      // Methods Fastify routes nowhere (TRACE, say) on a known path are still a 405.
      api.setNotFoundHandler((request, reply) =>
        KNOWN_PATH.test(requestPath(request).slice(API_PREFIX.length)) ? methodNotAllowed(request, reply) : notFoundRoute(request, reply),
      );

      api.get('/search', { config: { operationId: 'searchProducts', rateLimitBucket: 'search' } }, async (request, reply) => {
        const query = parseSearchParams(request.query);
        return send(request, reply, await read.search(query));
      });

      api.get('/categories', { config: { operationId: 'listCategories', rateLimitBucket: 'other' } }, async (request, reply) => {
        parseNoParams(request.query);
        return send(request, reply, read.categories());
      });

      api.get<{ Params: { slug: string } }>(
        '/products/:slug',
        { config: { operationId: 'getProduct', rateLimitBucket: 'other' } },
        async (request, reply) => {
          const slug = parseProductRequest(request.params.slug, request.query);
          return send(request, reply, read.product(slug));
        },
      );

      // /api/v1/products/ (and /products) names no slug: the slug is rejected as too short.
      api.get('/products', { config: { operationId: 'getProduct', rateLimitBucket: 'other' } }, async (request, reply) =>
        send(request, reply, read.product(parseProductSlug({ slug: '' }))),
      );

      registerFeedRoutes(api, { feed: deps.feed, config, budgets, metrics: deps.metrics });

      api.get('/openapi.json', { config: { rateLimitBucket: 'other' } }, async (request, reply) =>
        send(request, reply, documentAnswer),
      );

      api.get('/docs', { config: { rateLimitBucket: 'other' } }, async (request, reply) => {
        const page = await renderedDocsPage();
        reply.header('content-security-policy', page.contentSecurityPolicy);
        return send(request, reply, page.answer, 'text/html; charset=utf-8');
      });

      for (const url of GET_ONLY_PATHS) {
        api.route({
          method: ['POST', 'PUT', 'PATCH', 'DELETE'],
          url,
          config: { rateLimitBucket: 'other' },
          // Answered before any body is read: the method is wrong whatever the body holds.
          onRequest: async (request, reply) => methodNotAllowed(request, reply),
          handler: methodNotAllowed,
        });
      }
    },
    { prefix: API_PREFIX },
  );
}

function methodNotAllowed(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('allow', 'GET, HEAD, OPTIONS');
  return sendError(reply, 405, {
    code: METHOD_NOT_ALLOWED,
    message: `${request.method} is not allowed on ${JSON.stringify(requestPath(request))}: the REST API answers GET only.`,
  });
}
