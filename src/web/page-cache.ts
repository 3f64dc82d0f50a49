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

export interface PageCacheOptions {
  /** The mirror's version now: a page is kept only while it holds. */
  version: () => number;
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
    sizeCalculation: (v) => v.bytes.length + 64,
  });
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
      return kept.has(url);
    },
    find(url) {
      current();
      const page = kept.get(url);
      if (page) stats.hits++;
      return page;
    },
    async send(request, reply, render) {
      const version = current();
      const key = request.url;
      let page = kept.get(key);
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
        if (opts.version() === version && keptAt === version) kept.set(key, page);
      }
      return sendCacheable(request, reply, page, opts.cacheControl, HTML_CONTENT_TYPE);
    },
  };
}
