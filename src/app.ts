import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Accounts } from './auth/accounts.ts';
import type { Budgets } from './budgets/budgets.ts';
import type { MakerCatalog } from './catalog/maker-catalog.ts';
import type { Config } from './config/config.ts';
import type { Pool } from './db/pool.ts';
import type { ChangeFeed } from './read/change-feed.ts';
import type { ReadService } from './read/read-service.ts';
import { registerMcp, type McpRegistration } from './mcp/route.ts';
import { createMcpDirect } from './mcp/direct-mcp.ts';
import { clientError, frameworkError } from './http/errors.ts';
import { registerInfrastructure, requestIdFor } from './http/infrastructure.ts';
import { registerOperations, type Readiness } from './http/operations.ts';
import type { Metrics } from './http/metrics.ts';
import { registerRest } from './http/rest.ts';
import { registerPages, type RegisteredPages } from './web/pages.ts';
import { registerOAuthRoutes } from './http/oauth-routes.ts';
import { MCP_PATH } from './mcp/route.ts';
import type { Payments } from './payments/payments.ts';
import { registerStripeWebhook } from './http/stripe-webhook-route.ts';
import { cacheControlFor, keyedCacheControlFor } from './http/caching.ts';
import { createDirectReads } from './http/direct-reads.ts';
import { limitConnections, serverTimeouts } from './http/connection-limits.ts';
import { noteRoute, traceRequests } from './http/request-tracing.ts';
import { tracing, type Tracing } from './util/tracing.ts';
import type { ClientAddresses } from './http/client/client-address.ts';
import { decorateClients } from './http/client/client-request.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEPRECATIONS, readDeprecations, type DeprecationReading, type Deprecations } from './contract/deprecations.ts';
import { markDeprecatedUse } from './http/deprecation-hook.ts';

export interface AppDeps {
  config: Config;
  /** Who each request comes from (TRUST_PROXY), for every path that answers it. */
  clients: ClientAddresses;
  read: ReadService;
  /** The bulk export and the change feed. */
  feed: ChangeFeed;
  /** Request budgets, consumer keys on REST and MCP requests among them (docs/keys.md). */
  budgets: Budgets;
  metrics: Metrics;
  readiness: Readiness;
  /** The write model, for the maker pages. */
  pool: Pool;
  accounts: Accounts;
  /** The makers' commands (MCP maker tools and maker pages). */
  maker: MakerCatalog;
  /** The premium plan's checkout: the pay page and Stripe's webhook. */
  payments: Payments;
  /** The process logger; request logs carry request ids. Omitted: no request logging. */
  logger?: Logger;
  /** What the API has deprecated (src/contract/deprecations.ts); the service's own unless given. */
  deprecations?: Deprecations;
  /** Further routes, registered after the API's (tests: a route of their own that shows a deprecation). */
  routes?: (app: FastifyInstance) => void;
}

/**
 * The HTTP application: infrastructure first (errors, CORS, caching, rate limits), then the
 * REST routes under /api/v1, the MCP endpoint at /api/mcp, the operations endpoints and the
 * directory pages that listing and category `url`s point to when SITE_URL is this service.
 * server.ts only listens; tests call app.inject or listen on port 0.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger as FastifyBaseLogger } : { logger: false }),
    // The trust of the one client reading (client-address.ts): Fastify reads X-Forwarded-Proto
    // and -Host by it; the address itself is request.clientAddress, never request.ip.
    trustProxy: deps.clients.trust,
    // X-Request-Id is honoured when it is a plain token, else replaced (see requestIdFor).
    requestIdHeader: false,
    // Access lines come from our onResponse hook, at debug level (see infrastructure.ts).
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: requestIdFor,
    // Query strings: parameters given twice arrive as arrays and are rejected by validation.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 8192 },
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
    bodyLimit: 1024 * 1024,
    // Open connections: deadlines for idle connections, late headers and late bodies
    // (docs/connections.md), and at most MAX_CONNECTIONS at once (limitConnections).
    ...serverTimeouts(deps.config),
  });
  limitConnections(app.server, deps.config.connections.maxConnections, deps.logger);
  decorateClients(app, deps.clients);
  // With traces on, each request's span learns its route here (docs/operating.md#traces).
  const traces = tracing();
  if (traces) {
    app.addHook('onRequest', (request, reply, done) => {
      noteRoute(reply.raw, request.routeOptions.url);
      done();
    });
  }
  registerInfrastructure(app, deps);
  const deprecations = readDeprecations(deps.deprecations ?? DEPRECATIONS, deps.config.publicUrl);
  markDeprecatedUse(app, deprecations);
  await registerRest(app, { ...deps, deprecations: deps.deprecations ?? DEPRECATIONS });
  const mcp = await registerMcp(app, { ...deps, deprecations });
  await registerOAuthRoutes(app, {
    oauth: deps.accounts.oauth,
    replays: deps.accounts.replays,
    registrationLimiter: deps.accounts.limits.registrationsPerIp,
    publicUrl: deps.config.publicUrl,
    mcpUrl: deps.accounts.mcpUrl,
    mcpPath: MCP_PATH,
  });
  await registerOperations(app, deps);
  await registerStripeWebhook(app, deps.payments);
  const pages = await registerPages(app, deps);
  deps.routes?.(app);
  if (deps.config.directReads) addDirectReads(app, deps, mcp, pages, deprecations);
  if (traces) traceServer(app, traces, deps.clients);
  return app;
}

/** With traces on, a span for every request the server takes, whichever path answers it. */
function traceServer(app: FastifyInstance, traces: Tracing, clients: ClientAddresses): void {
  const listeners = app.server.listeners('request') as RequestListener[];
  const listener = listeners[0];
  if (listeners.length !== 1 || !listener) throw new Error(`expected one request listener on the server, found ${listeners.length}`);
  app.server.removeListener('request', listener);
  app.server.on('request', traceRequests(listener, traces, clients));
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Puts the direct read paths (src/http/direct-reads.ts for REST and the pages the page cache
 * keeps, src/mcp/direct-mcp.ts for the MCP read tools) in front of Fastify's request handler on
 * the server Fastify made (its one `request` listener), so every other behaviour of that server
 * (timeouts, keep-alive, closing, client errors) stays Fastify's own.
 */
function addDirectReads(app: FastifyInstance, deps: AppDeps, mcp: McpRegistration, pages: RegisteredPages, deprecations: DeprecationReading): void {
  const listeners = app.server.listeners('request') as RequestListener[];
  const fastify = listeners[0];
  if (listeners.length !== 1 || !fastify) throw new Error(`expected Fastify's one request listener on its server, found ${listeners.length}`);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  const logger = deps.logger;
  const accessLogging = logger ? () => logger.isLevelEnabled('debug') : () => false;
  const direct = createDirectReads({
    read: deps.read,
    budgets: deps.budgets,
    observer: (route, status) => deps.metrics.directObserver({ method: 'GET', route, status }),
    cacheControl: cacheControlFor(deps.config.cache.maxAgeSeconds),
    keyedCacheControl: keyedCacheControlFor(deps.config.cache.maxAgeSeconds),
    clients: deps.clients,
    accessLogging,
    closing: () => closing,
    ...(tracing() && { answered: noteRoute }),
    deprecated: (operationId) => deprecations.touches(operationId),
    pages: {
      has: (url) => pages.cache.has(url),
      find: (url) => pages.cache.find(url),
      cacheControl: pages.cache.cacheControl,
      headers: pages.securityHeaders,
    },
  });
  // Made only with DIRECT_READS on, when the route's own fast path exists too.
  const mcpDirect = createMcpDirect({
    direct: mcp.direct!,
    budgets: deps.budgets,
    observer: (status) => deps.metrics.directObserver({ method: 'POST', route: MCP_PATH, status }),
    clients: deps.clients,
    accessLogging,
    closing: () => closing,
    logger,
  });
  app.server.removeListener('request', fastify);
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!direct(req, res, fastify) && !mcpDirect(req, res, fastify)) fastify(req, res);
  });
}
