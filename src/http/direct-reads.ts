import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parse as parseQueryString } from 'fast-querystring';
import { parseSearchParamsIfPlain, plainProductSlug } from '../read/params.ts';
import type { ReadBody, ReadService } from '../read/read-service.ts';
import type { SearchQuery } from '../contract/schemas.ts';
import type { Budgets } from '../budgets/budgets.ts';
import { pushRateLimitHeaders } from '../budgets/rate-limit-headers.ts';
import type { Bucket, Counted, Verdict } from '../budgets/verdict.ts';
import { SPENT_BUDGET, type BudgetedRequest, type SpentBudget } from './budget-hook.ts';
import { API_VARY, ifNoneMatchMatches } from './caching.ts';
import { EXPOSED_HEADERS } from './cors.ts';
import { requestIdFor } from './infrastructure.ts';
import type { RequestObserver } from './metrics.ts';
import { API_PREFIX } from './openapi.ts';
import type { ClientAddresses } from './client/client-address.ts';

/**
 * The answers asked for most, written straight to Node's response beneath Fastify's routing,
 * hooks and reply: `GET /api/v1/products/{slug}` of a live listing, `GET /api/v1/categories`,
 * `GET /api/v1/search` whose answer is in the response cache, and a directory page (home,
 * listing, category, search) kept by the page cache (`pages`: a port, which the composition
 * fills with src/web's page cache and security headers). On a small machine Fastify's
 * per-request machinery costs more than these answers do (they are bytes kept ready), so a
 * catalog answering at the rate of a bare server needs this path.
 *
 * It owes every answer what the Fastify path gives it, and gives nothing else: the same status,
 * the same headers in the same order (request id, `nosniff`, CORS, the budget's headers,
 * validators, caching, type, length), the same body; the same budget spent (one unit, from the
 * same bucket, keyed on the same client address, `TRUST_PROXY` read as Fastify reads it; decided
 * at once when the budgets live in this process's memory, asked of Redis when they live there); the
 * same request metrics and cache counters. test/int/http/direct-reads.test.ts sends the same
 * requests to a service with and without this path and compares the answers byte for byte.
 *
 * Everything else goes to Fastify: another method, path or spelling (a trailing slash, percent
 * escapes, a query the plain reading does not take), an unknown slug, a search not in the cache,
 * a request with a body, a refused or failed budget (a key refused among them), access logging at
 * debug level, and a service that is closing. A request handed over after its budget was decided
 * carries the verdict (`SPENT_BUDGET`), and the budget hook (budget-hook.ts) sends what it says
 * rather than decide again.
 */

/** An answer's body: its bytes when kept encoded (else its text), and its ETag. */
type DirectBody = Pick<ReadBody, 'etag' | 'bytes'> & { readonly body?: string };

export interface DirectReadsDeps {
  read: ReadService;
  /** Budgets: a request with a valid consumer key spends the key's; any other Authorization is refused (by the budget hook). */
  budgets: Budgets;
  /** Request metrics, by route pattern and status, exactly as the Fastify path records them. */
  observer: (route: string, status: number) => RequestObserver;
  /** Cache-Control of a read answer (cacheControlFor), and of one to a consumer key's request (keyedCacheControlFor). */
  cacheControl: string;
  keyedCacheControl: string;
  /** Who each request comes from: the reading Fastify's requests use too. */
  clients: ClientAddresses;
  /** True while access lines are logged (debug): Fastify then answers, and logs, every request. */
  accessLogging: () => boolean;
  /** True once the service is closing: Fastify then answers (503, connection closed). */
  closing: () => boolean;
  /** The directory's kept pages; without it every page goes to Fastify. */
  pages?: DirectPages;
  /** Told the route of each answer written here, when traces are on (request-tracing.ts). */
  answered?: (res: ServerResponse, route: string) => void;
  /**
   * True for an operation that is deprecated, or has a deprecated parameter
   * (src/contract/deprecations.ts): its requests are Fastify's, whose hook adds the headers.
   */
  deprecated?: (operationId: string) => boolean;
}

/**
 * The public pages the page cache keeps, as the page scope sends them: its security headers
 * first (set on Node's response, in their order and spelling), then what every answer carries,
 * the pages' budget, validators and caching. A page is answered here only while the cache keeps
 * it at the projection's version now, which is when the Fastify route would send the same bytes.
 */
interface DirectPages {
  /** Whether a page is kept for this request URL (path and query, as requested); counts nothing. */
  has(url: string): boolean;
  /** The page kept for this URL, counted as a hit of the page cache; undefined once it is gone. */
  find(url: string): { readonly bytes: Buffer; readonly etag: string; readonly route: string } | undefined;
  /** The Cache-Control of a kept page. */
  readonly cacheControl: string;
  /** The page scope's security headers, as it sets them on every page's response. */
  readonly headers: ReadonlyArray<readonly [name: string, value: string]>;
}

/** Answers a request and returns true, or returns false without touching it. */
export type DirectReads = (req: BudgetedRequest, res: ServerResponse, fallback: (req: IncomingMessage, res: ServerResponse) => void) => boolean;

const PRODUCTS_PREFIX = `${API_PREFIX}/products/`;
const SEARCH_PATH = `${API_PREFIX}/search`;
const CATEGORIES_PATH = `${API_PREFIX}/categories`;
const PRODUCT_ROUTE = `${API_PREFIX}/products/:slug`;
const JSON_TYPE = 'application/json; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';
const EXPOSED = EXPOSED_HEADERS.join(', ');
/** What every answer carries after its request id, as the Fastify path sets it (infrastructure.ts, then CORS). */
const COMMON_HEADERS = ['x-content-type-options', 'nosniff', 'access-control-allow-origin', '*', 'access-control-expose-headers', EXPOSED];

/** What a direct read answers with: a product (by slug), the categories, a cached search (by query), a kept page (by URL). */
const PRODUCT = 0;
const CATEGORIES = 1;
const SEARCH = 2;
const PAGE = 3;
type Kind = typeof PRODUCT | typeof CATEGORIES | typeof SEARCH | typeof PAGE;

/**
 * The headers a page answer starts with, before its budget's: the security headers as the page
 * scope sets them on Node's response, then the request id and `nosniff` (infrastructure.ts) as
 * Fastify hands them to Node's writeHead, which replaces a header already set in its place
 * (name and value) and adds any other at the end. `REQUEST_ID` stands for the request's id.
 */
const REQUEST_ID = '';
function pageHeadTemplate(security: DirectPages['headers']): string[] {
  const head: string[] = [];
  for (const [name, value] of security) head.push(name, value);
  for (const [name, value] of [['x-request-id', REQUEST_ID], [COMMON_HEADERS[0]!, COMMON_HEADERS[1]!]] as const) {
    const at = head.findIndex((n, i) => i % 2 === 0 && n.toLowerCase() === name);
    if (at >= 0) head.splice(at, 2, name, value);
    else head.push(name, value);
  }
  return head;
}

export function createDirectReads(deps: DirectReadsDeps): DirectReads {
  const { read, budgets, cacheControl, keyedCacheControl, accessLogging, closing, pages, answered } = deps;
  const clients = deps.clients;
  const pageHead = pages ? pageHeadTemplate(pages.headers) : [];
  const pageIdAt = pageHead.indexOf('x-request-id') + 1;

  // By route (one of the constants below), then status.
  const observers = new Map<string, Map<number, RequestObserver>>();
  const observe = (route: string, status: number, started: number) => {
    let byStatus = observers.get(route);
    if (!byStatus) observers.set(route, (byStatus = new Map()));
    let observer = byStatus.get(status);
    if (!observer) byStatus.set(status, (observer = deps.observer(route, status)));
    observer((performance.now() - started) / 1000);
  };

  /**
   * What a request asks for, by its kind: a product by slug, the categories, a cached search.
   * A function taking the kind and its argument, not a closure made per request.
   */
  function find(kind: Kind, arg: string | SearchQuery | undefined): DirectBody | undefined {
    if (kind === PRODUCT) return read.productBytes(arg as string);
    if (kind === CATEGORIES) return read.categories();
    if (kind === PAGE) return pages!.find(arg as string);
    return read.cachedSearch(arg as SearchQuery);
  }

  /** A kept page, as the page scope answers it: its security headers first, no CORS, no Vary. */
  function answerPage(req: IncomingMessage, res: ServerResponse, id: string, decision: Counted, page: { bytes: Buffer; etag: string; route: string }, started: number): void {
    const head = pageHead.slice();
    head[pageIdAt] = id;
    pushRateLimitHeaders(head, decision);
    head.push('etag', page.etag, 'cache-control', pages!.cacheControl);
    let status = 200;
    if (ifNoneMatchMatches(req.headers['if-none-match'], page.etag)) {
      status = 304;
      res.writeHead(304, head);
      res.end();
    } else {
      head.push('content-type', HTML_TYPE, 'content-length', String(page.bytes.length));
      res.writeHead(200, head);
      res.end(page.bytes);
    }
    observe(page.route, status, started);
    if (answered !== undefined) answered(res, page.route);
  }

  /** Writes the answer as the Fastify path does: its headers in its order, 304 on a match. */
  function answer(req: IncomingMessage, res: ServerResponse, id: string, decision: Counted, body: DirectBody, route: string, started: number): void {
    const head = ['x-request-id', id, COMMON_HEADERS[0]!, COMMON_HEADERS[1]!, COMMON_HEADERS[2]!, COMMON_HEADERS[3]!, COMMON_HEADERS[4]!, COMMON_HEADERS[5]!];
    pushRateLimitHeaders(head, decision);
    const etag = body.etag;
    head.push('etag', etag, 'cache-control', decision.owner === undefined ? cacheControl : keyedCacheControl, 'vary', API_VARY);
    let status = 200;
    if (ifNoneMatchMatches(req.headers['if-none-match'], etag)) {
      status = 304;
      res.writeHead(304, head);
      res.end();
    } else {
      const bytes = body.bytes ?? Buffer.from(body.body!);
      head.push('content-type', JSON_TYPE, 'content-length', String(bytes.length));
      res.writeHead(200, head);
      res.end(bytes);
    }
    observe(route, status, started);
    if (answered !== undefined) answered(res, route);
  }

  /**
   * Gives Fastify a request whose budget was decided. The verdict is attached only to such a
   * request: a property added to every request would give Node's request objects a second
   * shape, and its HTTP code slower property lookups on every request.
   */
  function handOver(req: BudgetedRequest, res: ServerResponse, fallback: (req: IncomingMessage, res: ServerResponse) => void, spent: SpentBudget): void {
    req[SPENT_BUDGET] = spent;
    fallback(req, res);
  }

  /**
   * Answers with what `find` gives under an allowed verdict, or hands the request over with the
   * verdict (`spent`, or a promise of it made only then). A function of its own rather than a
   * closure: nothing is allocated for an answer written at once.
   */
  function settle(
    req: BudgetedRequest,
    res: ServerResponse,
    fallback: (req: IncomingMessage, res: ServerResponse) => void,
    id: string,
    verdict: Verdict,
    spent: SpentBudget | undefined,
    route: string,
    started: number,
    kind: Kind,
    arg: string | SearchQuery | undefined,
  ): void {
    const body = verdict.allowed && !closing() ? find(kind, arg) : undefined;
    if (body === undefined) handOver(req, res, fallback, spent ?? Promise.resolve(verdict));
    // An allowed verdict of a bucket always spent a unit of it.
    else if (kind === PAGE) answerPage(req, res, id, verdict as Counted, body as { bytes: Buffer; etag: string; route: string }, started);
    else answer(req, res, id, verdict as Counted, body, route, started);
  }

  /**
   * Decides the budget, then answers with what `find` gives for `kind` and `arg`, or hands the
   * request, its budget decided, to Fastify: a refusal, a limiter failure, or nothing to answer with.
   */
  function spendThenAnswer(
    req: BudgetedRequest,
    res: ServerResponse,
    fallback: (req: IncomingMessage, res: ServerResponse) => void,
    bucket: Bucket,
    route: string,
    kind: Kind,
    arg: string | SearchQuery | undefined,
  ): boolean {
    const started = performance.now();
    const id = requestIdFor(req);
    const address = clients.of(req).network;
    // A budget decided at once (in memory, or from this process's lease of a Redis budget), or
    // asked for. Pages take no key: they spend the address's budget whatever Authorization says;
    // a key that is not valid is refused by the hook, from the verdict handed over.
    const verdict = budgets.decide(bucket, address, kind === PAGE ? undefined : req.headers.authorization, req.rawHeaders);
    if (!(verdict instanceof Promise)) {
      settle(req, res, fallback, id, verdict, undefined, route, started, kind, arg);
      return true;
    }
    verdict.then(
      (decided) => settle(req, res, fallback, id, decided, verdict, route, started, kind, arg),
      () => handOver(req, res, fallback, verdict),
    );
    return true;
  }

  const deprecated = deps.deprecated ?? (() => false);
  const productDirect = !deprecated('getProduct');
  const categoriesDirect = !deprecated('listCategories');
  const searchDirect = !deprecated('searchProducts');
  return (req, res, fallback) => {
    if (req.method !== 'GET' || closing() || accessLogging()) return false;
    // A body on a GET is Fastify's to deal with.
    if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) return false;
    const url = req.url ?? '';
    if (productDirect && url.startsWith(PRODUCTS_PREFIX)) {
      const slug = plainProductSlug(url.slice(PRODUCTS_PREFIX.length));
      if (slug === undefined) return false;
      return spendThenAnswer(req, res, fallback, 'other', PRODUCT_ROUTE, PRODUCT, slug);
    }
    if (categoriesDirect && url === CATEGORIES_PATH) {
      return spendThenAnswer(req, res, fallback, 'other', CATEGORIES_PATH, CATEGORIES, undefined);
    }
    if (searchDirect && (url === SEARCH_PATH || url.startsWith(`${SEARCH_PATH}?`))) {
      const query = parseSearchParamsIfPlain(url.length === SEARCH_PATH.length ? {} : parseQueryString(url.slice(SEARCH_PATH.length + 1)));
      if (query === undefined) return false;
      return spendThenAnswer(req, res, fallback, 'search', SEARCH_PATH, SEARCH, query);
    }
    // A page the cache keeps at this version is what its route would answer; any other URL
    // (another page, a page not rendered yet, anything else) is Fastify's.
    if (pages !== undefined && pages.has(url)) return spendThenAnswer(req, res, fallback, 'pages', '', PAGE, url);
    return false;
  };
}
