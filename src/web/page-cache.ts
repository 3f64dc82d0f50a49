import { parse as parseQueryString } from 'fast-querystring';
import { LRUCache } from 'lru-cache';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { NO_STORE, sendCacheable } from '../http/caching.ts';
import { HTML_CONTENT_TYPE, renderPage } from '../http/html.ts';
import { etagOf } from '../read/read-service.ts';

/**
 * The public pages' answers, rendered once per projection version. A page is a function of the
 * mirror's contents and its URL only (no session, no cookie: see render.ts), so it is kept by its
 * request line, as bytes with their ETag, until the projection changes; the next request after a
 * change renders it again. A change therefore shows on the next request, like the API's answers
 * (read-service.ts drops its cache on the same signal).
 *
 * A page rendered from one version is never kept under another: a render that began before a
 * change and ends after it is sent but not stored.
 *
 * A page is kept by what it is made of, not by how its URL was spelled (pageKey): the path with
 * each segment decoded and encoded again and no trailing slash, and of the query string only the
 * parameters its route reads (KeptRoutes), empty ones dropped as the pages drop them, sorted by
 * name. `/search?q=ai&utm_source=x`, `/search?utm_source=y&q=ai&` and `/search/?q=a%69` are one
 * page, so a query string nobody reads cannot fill the cache. The bytes of its keys count in the
 * bound with the pages'.
 */
interface RenderedPage {
  page: VNode;
  /** 200 (kept and cached by edges) unless stated; any other status is sent uncached and not kept. */
  status?: number;
}

export interface PageCache {
  /** Answers with the page kept for this URL at this version, rendering it when there is none. */
  send(request: FastifyRequest, reply: FastifyReply, render: () => RenderedPage | Promise<RenderedPage>): Promise<FastifyReply>;
  /**
   * The page kept for this request URL (path and query, as requested) at the mirror's version
   * now, counted as a hit; undefined when there is none. For answering beneath Fastify
   * (src/http/direct-reads.ts), with what `send` would answer.
   */
  find(url: string): KeptPage | undefined;
  /** Whether a page is kept for this URL at the version now; nothing is counted or reordered. */
  has(url: string): boolean;
  /** The Cache-Control every kept page is sent with. */
  readonly cacheControl: string;
  readonly stats: { hits: number; misses: number };
}

/** A page as sent: its bytes, encoded once, their ETag, and the route that answered it. */
interface KeptPage {
  readonly bytes: Buffer;
  readonly etag: string;
  /** The route's pattern (`/products/:slug`), as the request metrics name it. */
  readonly route: string;
}

/**
 * The routes whose pages are kept, by pattern (`/products/:slug`: a `:name` segment stands for any
 * one segment), each with the query parameters its page reads, or 'every' for a page that reads
 * them all (one it does not know makes it an error page, which is not kept). A URL no pattern
 * matches is never kept.
 */
export type KeptRoutes = Readonly<Record<string, readonly string[] | 'every'>>;

export interface PageCacheOptions {
  /** The mirror's version now: a page is kept only while it holds. */
  version: () => number;
  routes: KeptRoutes;
  /** The Cache-Control of a kept page (the catalog's). */
  cacheControl: string;
  /**
   * At most this many pages (default 5,000, as the API's response cache) and bytes (default
   * 32 MiB) are kept. A listing page is about 6 KB, a search page about 16 KB: the bytes bound
   * the cache first. The entry bound must stay above the number of pages a visitor or a crawler
   * walks through in turn: a least-recently-used cache smaller than such a cycle never hits.
   */
  maxEntries?: number;
  maxBytes?: number;
}

export function createPageCache(opts: PageCacheOptions): PageCache {
  const stats = { hits: 0, misses: 0 };
  // Bytes only: the text a page was rendered to is not kept beside them.
  const kept = new LRUCache<string, KeptPage>({
    max: opts.maxEntries ?? 5000,
    maxSize: opts.maxBytes ?? 32 * 1024 * 1024,
    sizeCalculation: (v, key) => v.bytes.length + KEPT_OVERHEAD + 2 * (key.length + v.etag.length + v.route.length),
  });
  const keyOf = pageKeys(opts.routes);
  let keptAt = opts.version();
  /** The version now, having let go of every page kept at an older one. */
  const current = () => {
    const version = opts.version();
    if (version !== keptAt) {
      kept.clear();
      keptAt = version;
    }
    return version;
  };

  return {
    stats,
    cacheControl: opts.cacheControl,
    has(url) {
      current();
      const key = keyOf(url);
      return key !== undefined && kept.has(key);
    },
    find(url) {
      current();
      const key = keyOf(url);
      const page = key === undefined ? undefined : kept.get(key);
      if (page) stats.hits++;
      return page;
    },
    async send(request, reply, render) {
      const version = current();
      const key = keyOf(request.url);
      let page = key === undefined ? undefined : kept.get(key);
      if (page) {
        stats.hits++;
      } else {
        stats.misses++;
        const rendered = await render();
        const body = renderPage(rendered.page);
        if ((rendered.status ?? 200) !== 200) {
          reply.removeHeader('etag');
          return reply.code(rendered.status!).header('cache-control', NO_STORE).type(HTML_CONTENT_TYPE).send(body);
        }
        const bytes = Buffer.from(body);
        page = { bytes, etag: etagOf(bytes), route: request.routeOptions.url ?? 'unmatched' };
        if (key !== undefined && opts.version() === version && keptAt === version) kept.set(key, page);
      }
      return sendCacheable(request, reply, page, opts.cacheControl, HTML_CONTENT_TYPE);
    },
  };
}

/** What an entry costs beyond its bytes and strings: the LRU's node, the object, the Buffer's header. */
const KEPT_OVERHEAD = 160;

/**
 * The key of a request URL (path and query, as requested), or undefined when its page is not
 * kept: no route matches, or the path does not decode. The last URL asked is remembered: the
 * direct read path asks `has` and then `find` of the same one.
 */
export function pageKeys(routes: KeptRoutes): (url: string) => string | undefined {
  const patterns = Object.entries(routes).map(([pattern, reads]) => ({ segments: pattern.split('/').slice(1), reads }));
  let lastUrl: string | undefined;
  let lastKey: string | undefined;
  const keyOf = (url: string): string | undefined => {
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    const segments = rawPath.split('/').slice(1);
    // A trailing slash is the same page (the router ignores it), but the root's own.
    if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
    const path: string[] = [];
    for (const segment of segments) {
      try {
        path.push(encodeURIComponent(decodeURIComponent(segment)));
      } catch {
        return undefined;
      }
    }
    const route = patterns.find((p) => p.segments.length === path.length && p.segments.every((s, i) => s.startsWith(':') || s === path[i]));
    if (!route) return undefined;
    const base = `/${path.join('/')}`;
    if (q < 0 || (route.reads !== 'every' && route.reads.length === 0)) return base;
    const query = parseQueryString(url.slice(q + 1)) as Record<string, string | string[]>;
    const kept: string[] = [];
    for (const name of Object.keys(query).sort()) {
      if (route.reads !== 'every' && !route.reads.includes(name)) continue;
      const value = query[name]!;
      // Given twice is not given once: an error page, so both are kept in the key.
      const values = Array.isArray(value) ? value : [value];
      if (values.length === 1 && values[0] === '') continue;
      for (const v of values) kept.push(`${encodeURIComponent(name)}=${encodeURIComponent(v)}`);
    }
    return kept.length === 0 ? base : `${base}?${kept.join('&')}`;
  };
  return (url) => {
    if (url !== lastUrl) {
      lastKey = keyOf(url);
      lastUrl = url;
    }
    return lastKey;
  };
}
