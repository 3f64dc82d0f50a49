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
export interface RenderedPage {
  page: VNode;
  /** 200 (kept and cached by edges) unless stated; any other status is sent uncached and not kept. */
  status?: number;
}

export interface PageCache {
  /** Answers with the page kept for this URL at this version, rendering it when there is none. */
  send(request: FastifyRequest, reply: FastifyReply, render: () => RenderedPage | Promise<RenderedPage>): Promise<FastifyReply>;
  readonly stats: { hits: number; misses: number };
}

interface Kept {
  bytes: Buffer;
  body: string;
  etag: string;
}

export interface PageCacheOptions {
  /** The mirror's version now: a page is kept only while it holds. */
  version: () => number;
  /** The Cache-Control of a kept page (the catalog's). */
  cacheControl: string;
  /** At most this many pages (default 2,000) and bytes (default 32 MiB) are kept. */
  maxEntries?: number;
  maxBytes?: number;
}

export function createPageCache(opts: PageCacheOptions): PageCache {
  const stats = { hits: 0, misses: 0 };
  const kept = new LRUCache<string, Kept>({
    max: opts.maxEntries ?? 2000,
    maxSize: opts.maxBytes ?? 32 * 1024 * 1024,
    sizeCalculation: (v) => v.bytes.length + v.body.length * 2 + 64,
  });
  let keptAt = opts.version();

  return {
    stats,
    async send(request, reply, render) {
      const version = opts.version();
      if (version !== keptAt) {
        kept.clear();
        keptAt = version;
      }
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
        page = { body, bytes: Buffer.from(body), etag: etagOf(body) };
        if (opts.version() === version && keptAt === version) kept.set(key, page);
      }
      return sendCacheable(request, reply, page, opts.cacheControl, HTML_CONTENT_TYPE);
    },
  };
}
