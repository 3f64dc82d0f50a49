import type { FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { NO_STORE } from '../http/caching.ts';
import { HTML_CONTENT_TYPE, renderPage } from '../http/html.ts';

/**
 * Turning a page into an HTTP answer. Every page goes through preact-render-to-string, which
 * escapes every text and attribute value; the only raw HTML on any page is a listing's
 * description, sanitized when it was written (see src/catalog/listings/sanitize-description.ts).
 */

export interface PrivatePageOptions {
  /** Default 200. */
  status?: number;
  /**
   * A Content-Security-Policy replacing the scope's, built with contentSecurityPolicy() from
   * csp.ts (the consent page adds the client's redirect URI to form-action).
   */
  csp?: string;
}

/**
 * A page for one visitor (signed-in pages, forms with their errors, error pages): never stored
 * by a browser or an edge cache.
 */
export function sendPrivatePage(reply: FastifyReply, page: VNode, opts: PrivatePageOptions = {}): FastifyReply {
  if (opts.csp !== undefined) reply.header('content-security-policy', opts.csp);
  reply.removeHeader('etag');
  return reply
    .code(opts.status ?? 200)
    .header('cache-control', NO_STORE)
    .type(HTML_CONTENT_TYPE)
    .send(renderPage(page));
}
